#include "engine/version/versions.h"

#include <arrow/config.h>
#include <duckdb.h>

namespace thund {

std::string LinkedVersions() {
  return std::string("arrow ") + arrow::GetBuildInfo().version_string + ", duckdb " + duckdb_library_version();
}

}  // namespace thund
