#include "thund/duration.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <utility>

#include <arrow/status.h>

namespace thund {
namespace {

constexpr int64_t kSecond = 1000;
constexpr int64_t kMinute = 60 * kSecond;
constexpr int64_t kHour = 60 * kMinute;
constexpr int64_t kDay = 24 * kHour;

struct Unit {
  std::string_view name;
  int64_t ms;
};
// Every spelling accepted on input. Order does not matter: matched exactly.
constexpr Unit kUnits[] = {
    {"ms", 1},           {"millisecond", 1},    {"milliseconds", 1},
    {"s", kSecond},      {"sec", kSecond},      {"secs", kSecond},
    {"second", kSecond}, {"seconds", kSecond},  {"m", kMinute},
    {"min", kMinute},    {"mins", kMinute},     {"minute", kMinute},
    {"minutes", kMinute}, {"h", kHour},         {"hour", kHour},
    {"hours", kHour},    {"d", kDay},           {"day", kDay},
    {"days", kDay},
};

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

std::string FormatDuration(int64_t ms) {
  if (ms == 0) return "0s";
  // Largest unit dividing the value exactly keeps Parse(Format(x)) == x.
  static constexpr std::pair<int64_t, const char*> kOut[] = {
      {kDay, "d"}, {kHour, "h"}, {kMinute, "m"}, {kSecond, "s"}, {1, "ms"}};
  for (const auto& [unit, suffix] : kOut) {
    if (ms % unit == 0) return std::to_string(ms / unit) + suffix;
  }
  return std::to_string(ms) + "ms";
}

arrow::Result<int64_t> ParseDuration(std::string_view text) {
  std::string_view s = Trim(text);
  const std::string original(text);
  if (s.empty()) return arrow::Status::Invalid("empty duration; write e.g. \"10s\", \"500ms\", \"5m\"");
  bool negative = false;
  if (s.front() == '-' || s.front() == '+') {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  int64_t value = 0;
  // One sign at most: from_chars would take a second '-' ("--5s") and give a
  // negative value that the range check below does not cover.
  const bool digit_first = !s.empty() && std::isdigit(static_cast<unsigned char>(s.front()));
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (!digit_first || ec != std::errc() || ptr == s.data()) {
    return arrow::Status::Invalid("'", original,
                                  "' is not a duration; write a whole number with a unit, "
                                  "e.g. \"10s\", \"500ms\", \"5m\", \"1h\", \"1d\"");
  }
  std::string_view unit = Trim(s.substr(static_cast<size_t>(ptr - s.data())));
  int64_t scale = 1;  // a bare number is milliseconds
  if (!unit.empty()) {
    std::string lower;
    for (char c : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    bool found = false;
    for (const auto& u : kUnits) {
      if (u.name == lower) {
        scale = u.ms;
        found = true;
        break;
      }
    }
    if (!found) {
      return arrow::Status::Invalid("unknown duration unit '", std::string(unit), "' in '",
                                    original, "'; use ms, s, m, h or d");
    }
  }
  if (value > std::numeric_limits<int64_t>::max() / scale) {
    return arrow::Status::Invalid("duration '", original, "' is too large");
  }
  value *= scale;
  return negative ? -value : value;
}

}  // namespace thund
