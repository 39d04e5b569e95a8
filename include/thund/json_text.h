// The one way thund writes JSON text (diagnostics, run events, plans, state
// files, CLI output): nlohmann's dump with invalid UTF-8 replaced by U+FFFD.
// nlohmann's default handler throws type_error 316 on such bytes, which a
// byte from a file name or a data row could otherwise trigger; with this no
// dump throws. Text built from input bytes is escaped earlier where the exact
// byte matters to a user (thund/utf8.h: EscapeInvalidUtf8); this is the
// backstop for everything else.
//
// Every `.dump(` in src/ goes through here (tests/file/utf8_test.cc checks).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace thund {

// REQUIRES: `J` is nlohmann::json or nlohmann::ordered_json. `indent` < 0
// writes one line.
template <class J>
std::string JsonText(const J& j, int indent = -1) {
  return j.dump(indent, ' ', /*ensure_ascii=*/false, J::error_handler_t::replace);
}

}  // namespace thund
