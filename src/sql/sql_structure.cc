#include "sql/sql_structure.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include <arrow/status.h>

namespace thund::sql {
namespace {

bool IsOpen(const Token& t) {
  return t.kind == TokKind::kOp && (t.text == "(" || t.text == "[" || t.text == "{");
}
bool IsClose(const Token& t) {
  return t.kind == TokKind::kOp && (t.text == ")" || t.text == "]" || t.text == "}");
}

bool IsSetOp(const std::vector<Token>& t, size_t i) {
  if (IsWord(t[i], "union") || IsWord(t[i], "intersect") || IsWord(t[i], "minus")) return true;
  if (IsWord(t[i], "except")) {
    // `SELECT * EXCEPT (a)` / `t.* EXCEPT (a)` name columns to leave out.
    return !(i > 0 && IsOp(t[i - 1], "*"));
  }
  return false;
}

}  // namespace

size_t Block::ClauseEnd(size_t start) const {
  size_t best = end;
  for (size_t c : {from, where, group_by, having, qualify, window, order_by, limit}) {
    if (c != kNone && c > start && c < best) best = c;
  }
  return best;
}

Structure Analyze(const std::vector<Token>& t) {
  Structure s;
  s.depth.resize(t.size());
  s.owner.assign(t.size(), -1);
  int d = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (IsClose(t[i]) && d > 0) --d;
    s.depth[i] = d;
    if (IsOpen(t[i])) ++d;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    if (!IsWord(t[i], "select")) continue;
    Block b;
    b.select = i;
    b.depth = s.depth[i];
    b.end = t.size();
    for (size_t j = i + 1; j < t.size(); ++j) {
      if (s.depth[j] < b.depth || (s.depth[j] == b.depth && (IsOp(t[j], ";") || IsSetOp(t, j)))) {
        b.end = j;
        break;
      }
      if (s.depth[j] != b.depth) continue;
      const bool next_by = j + 1 < t.size() && IsWord(t[j + 1], "by");
      if (IsWord(t[j], "from") && b.from == kNone && !(j > 0 && IsWord(t[j - 1], "distinct"))) {
        b.from = j;
      } else if (IsWord(t[j], "where") && b.where == kNone) {
        b.where = j;
      } else if (IsWord(t[j], "group") && next_by && b.group_by == kNone) {
        b.group_by = j;
      } else if (IsWord(t[j], "having") && b.having == kNone) {
        b.having = j;
      } else if (IsWord(t[j], "qualify") && b.qualify == kNone) {
        b.qualify = j;
      } else if (IsWord(t[j], "window") && b.window == kNone && j + 2 < t.size() &&
                 IsIdentifier(t[j + 1]) && IsWord(t[j + 2], "as")) {
        b.window = j;
      } else if ((IsWord(t[j], "order") || IsWord(t[j], "sort") || IsWord(t[j], "cluster") ||
                  IsWord(t[j], "distribute")) &&
                 next_by && b.order_by == kNone) {
        b.order_by = j;
      } else if ((IsWord(t[j], "limit") || IsWord(t[j], "offset")) && b.limit == kNone) {
        b.limit = j;
      }
    }
    s.blocks.push_back(b);
  }
  // Deeper blocks overwrite shallower ones: the innermost block wins.
  std::vector<size_t> order(s.blocks.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return s.blocks[a].depth < s.blocks[b].depth; });
  for (size_t k : order) {
    const Block& b = s.blocks[k];
    for (size_t j = b.select; j < b.end; ++j) {
      if (s.depth[j] >= b.depth) s.owner[j] = static_cast<int>(k);
    }
  }
  return s;
}

// ---------------------------------------------------------------- intervals

namespace {

constexpr int64_t kMicrosPerSecond = 1000000;

struct UnitInfo {
  std::string_view name;
  int64_t micros;  // 0 for months
  int64_t months;
  int64_t days;
};
constexpr UnitInfo kUnitTable[] = {
    {"nanosecond", -1, 0, 0},  // handled specially: micros / 1000
    {"microsecond", 1, 0, 0},
    {"millisecond", 1000, 0, 0},
    {"second", kMicrosPerSecond, 0, 0},
    {"minute", 60 * kMicrosPerSecond, 0, 0},
    {"hour", 3600 * kMicrosPerSecond, 0, 0},
    {"day", 0, 0, 1},
    {"week", 0, 0, 7},
    {"month", 0, 1, 0},
    {"year", 0, 12, 0},
};

const UnitInfo* FindUnit(std::string_view word) {
  std::string w = ToLower(word);
  if (w.size() > 1 && w.back() == 's') w.pop_back();
  if (w == "ms" || w == "msec") w = "millisecond";
  if (w == "us" || w == "usec") w = "microsecond";
  if (w == "sec") w = "second";
  if (w == "min") w = "minute";
  if (w == "hr") w = "hour";
  for (const auto& u : kUnitTable) {
    if (u.name == w) return &u;
  }
  return nullptr;
}

// Adds `value` `unit`s to `v`.
arrow::Status AddUnit(std::string_view value_text, const UnitInfo& u, IntervalValue* v) {
  std::string text(value_text);
  double value = 0;
  try {
    size_t used = 0;
    value = std::stod(text, &used);
    if (used != text.size()) throw std::invalid_argument("tail");
  } catch (...) {
    return arrow::Status::Invalid("'", text, "' is not a number");
  }
  const bool whole = value == std::floor(value);
  if (u.months) {
    if (!whole) return arrow::Status::Invalid("a fractional number of months or years");
    v->months += static_cast<int64_t>(value) * u.months;
  } else if (u.days) {
    if (whole) {
      v->days += static_cast<int64_t>(value) * u.days;
    } else {
      v->micros += static_cast<int64_t>(std::llround(value * u.days * 86400.0 * kMicrosPerSecond));
    }
  } else if (u.micros < 0) {
    v->micros += static_cast<int64_t>(std::llround(value / 1000.0));
  } else {
    v->micros += static_cast<int64_t>(std::llround(value * static_cast<double>(u.micros)));
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<IntervalValue> ParseIntervalText(std::string_view text) {
  // Split into words; numbers may be glued to units ("10s").
  std::vector<std::string> words;
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) words.push_back(cur);
    cur.clear();
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c)) || c == ',') {
      flush();
    } else if (!cur.empty() &&
               (std::isdigit(static_cast<unsigned char>(cur.back())) || cur.back() == '.') &&
               std::isalpha(static_cast<unsigned char>(c))) {
      flush();
      cur.push_back(c);
    } else {
      cur.push_back(c);
    }
  }
  flush();
  if (!words.empty() && EqualsIgnoreCase(words.front(), "interval")) words.erase(words.begin());
  if (words.empty()) {
    return arrow::Status::Invalid("empty interval; write e.g. '10 seconds'");
  }
  IntervalValue v;
  bool negate_all = false;
  if (words.size() % 2 == 1 && words.front() == "-") {
    negate_all = true;
    words.erase(words.begin());
  }
  for (size_t i = 0; i < words.size(); i += 2) {
    const std::string& w = words[i];
    const bool number =
        !w.empty() && (std::isdigit(static_cast<unsigned char>(w[0])) ||
                       ((w[0] == '-' || w[0] == '+' || w[0] == '.') && w.size() > 1));
    if (!number) {
      return arrow::Status::Invalid("'", w, "' in interval '", std::string(text),
                                    "' is not a number; write e.g. '10 seconds'");
    }
    if (i + 1 >= words.size()) {
      return arrow::Status::Invalid("interval '", std::string(text), "' needs a unit after ", w,
                                    ", e.g. '10 seconds'");
    }
    const UnitInfo* u = FindUnit(words[i + 1]);
    if (!u) {
      return arrow::Status::Invalid("unknown interval unit '", words[i + 1], "' in '",
                                    std::string(text),
                                    "'; use milliseconds, seconds, minutes, hours, days or weeks");
    }
    ARROW_RETURN_NOT_OK(AddUnit(words[i], *u, &v));
  }
  if (negate_all) v = {-v.months, -v.days, -v.micros};
  return v;
}

arrow::Result<IntervalLiteral> ParseIntervalLiteral(const std::vector<Token>& t, size_t i) {
  IntervalLiteral lit;
  size_t j = i + 1;
  if (j >= t.size())
    return arrow::Status::Invalid("INTERVAL needs a value, e.g. INTERVAL 10 SECONDS");
  if (IsOp(t[j], "(")) return arrow::Status::NotImplemented("interval expression");
  bool native = true;
  // INTERVAL 'text' with the units inside the string.
  if (IsStringToken(t[j]) &&
      (j + 1 >= t.size() || !FindUnit(t[j + 1].text) || t[j + 1].kind != TokKind::kIdent)) {
    ARROW_ASSIGN_OR_RAISE(lit.value, ParseIntervalText(StringValue(t[j])));
    lit.next = j + 1;
    lit.parts = 1;
    lit.duckdb_native =
        t[j].kind == TokKind::kString && t[j].text.find('\\') == std::string_view::npos;
    return lit;
  }
  while (j < t.size()) {
    bool negative = false;
    size_t k = j;
    if (IsOp(t[k], "-") || IsOp(t[k], "+")) {
      negative = IsOp(t[k], "-");
      ++k;
    }
    if (k >= t.size() || !(t[k].kind == TokKind::kNumber || IsStringToken(t[k]))) break;
    if (k + 1 >= t.size() || t[k + 1].kind != TokKind::kIdent) break;
    const UnitInfo* u = FindUnit(t[k + 1].text);
    if (!u) break;
    std::string value = t[k].kind == TokKind::kNumber ? std::string(t[k].text) : StringValue(t[k]);
    if (negative) value = "-" + value;
    const bool plain_integer = t[k].kind == TokKind::kNumber &&
                               std::all_of(t[k].text.begin(), t[k].text.end(), [](char c) {
                                 return std::isdigit(static_cast<unsigned char>(c));
                               });
    if (negative || value.find('.') != std::string::npos ||
        (t[k].kind == TokKind::kNumber && !plain_integer)) {
      native = false;
    }
    if (u->micros < 0) native = false;  // DuckDB has no nanoseconds
    ARROW_RETURN_NOT_OK(AddUnit(value, *u, &lit.value));
    ++lit.parts;
    j = k + 2;
  }
  if (lit.parts == 0) {
    return arrow::Status::Invalid(
        "INTERVAL needs a number and a unit, e.g. INTERVAL 10 SECONDS or INTERVAL '5' MINUTES");
  }
  if (j < t.size() && IsWord(t[j], "to")) {
    return arrow::Status::Invalid(
        "INTERVAL ... TO ... ranges are not supported; write the units out, e.g. "
        "INTERVAL 1 HOUR 30 MINUTES");
  }
  lit.next = j;
  lit.duckdb_native = native && lit.parts == 1;
  return lit;
}

arrow::Result<int64_t> FixedMicros(const IntervalValue& v) {
  if (v.months != 0) {
    return arrow::Status::Invalid(
        "months and years have no fixed length; use days or smaller units");
  }
  return v.days * 86400 * kMicrosPerSecond + v.micros;
}

std::string DuckDbInterval(const IntervalValue& v) {
  if (v.months == 0 && v.days == 0) return "to_microseconds(" + std::to_string(v.micros) + ")";
  std::string out = "INTERVAL '";
  bool first = true;
  auto part = [&](int64_t n, const char* unit) {
    if (n == 0) return;
    if (!first) out += " ";
    first = false;
    out += std::to_string(n) + " " + unit;
  };
  part(v.months, "months");
  part(v.days, "days");
  part(v.micros, "microseconds");
  if (first) out += "0 seconds";
  return out + "'";
}

}  // namespace thund::sql
