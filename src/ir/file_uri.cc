#include "ir/file_uri.h"

#include <cctype>

namespace thund::internal {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

bool IsFileUri(std::string_view location) {
  static constexpr std::string_view kScheme = "file:";
  if (location.size() < kScheme.size()) return false;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(location[i])) != kScheme[i]) return false;
  }
  return true;
}

arrow::Result<std::string> LocalPathOf(std::string_view location) {
  if (!IsFileUri(location)) return std::string(location);
  std::string_view rest = location.substr(5);
  if (rest.substr(0, 2) == "//") {
    // file://host/path: the authority must be empty or localhost.
    rest.remove_prefix(2);
    const size_t slash = rest.find('/');
    std::string_view host = rest.substr(0, slash);
    std::string lower;
    for (char c : host) {
      lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
    if (!host.empty() && lower != "localhost") {
      return arrow::Status::Invalid("'", location, "' names host '", host,
                                    "': a file: URI must be local (file:///path)");
    }
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash);
  }
  if (rest.empty() || rest[0] != '/') {
    return arrow::Status::Invalid("'", location,
                                  "' has no absolute path: write file:///absolute/path, or a "
                                  "plain relative path");
  }
  std::string out;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] != '%') {
      out.push_back(rest[i]);
      continue;
    }
    const int hi = i + 1 < rest.size() ? HexValue(rest[i + 1]) : -1;
    const int lo = i + 2 < rest.size() ? HexValue(rest[i + 2]) : -1;
    if (hi < 0 || lo < 0 || hi * 16 + lo == 0) {
      return arrow::Status::Invalid("'", location, "' has a malformed %-escape");
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

}  // namespace thund::internal
