// Python SDP files (`from pyspark import pipelines as dp`): read by thund's own
// Python environment (python/thund_sdp/loader.py: sqlframe over DuckDB, no
// Spark), which records each dataset and flow and turns each DataFrame into
// Spark SQL. The result is IR like any other surface (docs/python.md).
#pragma once

#include <string>
#include <vector>

#include "thund/diagnostic.h"
#include "thund/ir.h"

namespace thund {

// Adds the datasets and flows the Python files `files` define to `p` (which
// already holds the project's SQL definitions: the Python code may read them,
// and their schemas are handed to it when thund can plan them). Problems are
// diagnostics located in the Python files (code "python-definition"), or
// one "python-environment" error when thund's Python cannot run.
void LoadPythonLibraries(const std::vector<std::string>& files, Pipeline* p,
                         Diagnostics* diagnostics);

// The interpreter that runs the loader: $THUND_PYTHON, else the bootstrap's
// .deps/venv/bin/python, else (an installed thund elsewhere) python3 on $PATH.
// It needs sqlframe and duckdb (docs/install.md).
std::string ThundPython();

// The loader script: share/thund/python/thund_sdp/loader.py of an installed
// prefix (ir/installed_files.h), else python/thund_sdp/loader.py of the source tree.
std::string ThundPythonLoader();

}  // namespace thund
