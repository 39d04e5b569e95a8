// A real Spark Connect server for tests (pyspark from PyPI in .deps/spark,
// Java 17), started by scripts/spark_server.sh.
//
// Under ctest, the fixture `spark` (tests/CMakeLists.txt) starts one server
// for all Spark tests and writes its address to THUND_SPARK_SERVER_DIR/remote;
// SharedSparkRemote() returns that address. Run directly (a test binary on
// its own), the first call starts a server for this process and stops it at
// exit. A missing Spark is a failure naming scripts/bootstrap.sh, never a
// skip.
//
// The server's catalog is shared by every test using it: give each test its
// own schema (the spec's `database`) so tables do not collide.
#pragma once

#include <string>

#include <arrow/result.h>

namespace thund::testing {

// "sc://127.0.0.1:PORT" of a running server.
arrow::Result<std::string> SharedSparkRemote();

// The venv holding pyspark (its bin/ has spark-pipelines, spark-submit).
std::string SparkVenv();

}  // namespace thund::testing
