#include "ir/installed_files.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace thund {

namespace fs = std::filesystem;

std::string ExecutableDir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  return exe.parent_path().string();
}

std::string InstalledFileOr(std::string_view relative, std::string fallback) {
  const std::string dir = ExecutableDir();
  if (!dir.empty()) {
    std::error_code ec;
    const fs::path candidate = (fs::path(dir) / ".." / fs::path(relative)).lexically_normal();
    if (fs::exists(candidate, ec)) return candidate.string();
  }
  return fallback;
}

std::string FindOnPath(std::string_view name) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  std::string_view rest(path);
  while (true) {
    const size_t colon = rest.find(':');
    const std::string_view dir = rest.substr(0, colon);
    if (!dir.empty()) {
      const std::string candidate = std::string(dir) + "/" + std::string(name);
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    if (colon == std::string_view::npos) return "";
    rest.remove_prefix(colon + 1);
  }
}

}  // namespace thund
