// Durations in the IR are int64 milliseconds. Text form: "250ms", "10s", "5m",
// "2h", "1d" (a plain integer means milliseconds). Formatting picks the largest
// unit that divides the value exactly, so Parse(Format(x)) == x for every x.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <arrow/result.h>

namespace thund {

std::string FormatDuration(int64_t ms);
// Accepts "<int>[ms|s|m|h|d]" with optional spaces and long units
// ("10 seconds", "5 minutes"). Negative values are accepted ("-5s") so that
// validate() can report them with context.
arrow::Result<int64_t> ParseDuration(std::string_view text);

}  // namespace thund
