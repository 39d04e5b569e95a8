#pragma once

#include <string>

namespace thund {

// "arrow 26.0.1, duckdb v1.4.4": the versions of the libraries actually loaded.
std::string LinkedVersions();

}  // namespace thund
