// Files thund reads at run time besides its libraries (the Python SDP loader,
// DuckDB's httpfs extension): in an installed prefix they sit next to the
// binary (cmake/ThundInstall.cmake: P/bin/thund, P/share/thund/...,
// P/lib/thund/...), so a moved prefix or a Python wheel keeps working; in a
// build tree they are the source-tree paths compiled in. Thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace thund {

// The directory holding the running executable ("" when /proc/self/exe cannot
// be read).
std::string ExecutableDir();

// ExecutableDir()/../`relative` when that file exists, else `fallback` (the
// build-time path). `relative` is e.g. "share/thund/python/thund_sdp/loader.py".
std::string InstalledFileOr(std::string_view relative, std::string fallback);

// The full path of `name` (e.g. "python3") found on $PATH, or "" when absent.
std::string FindOnPath(std::string_view name);

}  // namespace thund
