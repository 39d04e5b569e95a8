// Token-level translations: quoting, string escapes, literal suffixes,
// Spark-only operators, interval literals and type names.
#include <algorithm>
#include <cctype>

#include <arrow/type.h>

#include "sql/duckdb_types.h"
#include "sql/sql_dialect_internal.h"
#include "thund/type_names.h"

namespace thund::sql {
namespace {

bool IsValueEnd(const Token& t) {
  if (t.kind == TokKind::kOp) return t.text == ")" || t.text == "]" || t.text == "}";
  if (t.kind == TokKind::kIdent) {
    static constexpr std::string_view kNotValues[] = {
        "select", "where", "and",    "or",      "not",   "on",     "when", "then",
        "else",   "by",    "having", "case",    "like",  "ilike",  "in",   "is",
        "from",   "join",  "as",     "between", "rlike", "regexp", "div",  "distinct",
        "all",    "limit", "offset", "using",   "return"};
    for (auto w : kNotValues) {
      if (EqualsIgnoreCase(t.text, w)) return false;
    }
  }
  return true;
}

// Index of the "(" enclosing token i, or kNone.
size_t EnclosingOpen(const PassInput& in, size_t i) {
  const int d = in.st.depth[i];
  if (d == 0) return kNone;
  for (size_t k = i; k-- > 0;) {
    if (in.st.depth[k] == d - 1 && IsOp(in.tokens[k], "(")) return k;
    if (in.st.depth[k] < d - 1) return kNone;
  }
  return kNone;
}

// A Spark "double-quoted" token standing where a value goes: Spark reads it as
// a string there, DuckDB as a column. See docs/sql.md for the exact rule.
bool DoubleQuotedIsString(const PassInput& in, size_t i) {
  const auto& t = in.tokens;
  if (i == 0) return false;
  const Token& prev = t[i - 1];
  const bool has_next = i + 1 < t.size();
  if (IsOp(prev, ".") || (has_next && (IsOp(t[i + 1], ".") || IsOp(t[i + 1], ":=")))) {
    return false;
  }
  for (std::string_view op : {"=", "==", "!=", "<>", "<", ">", "<=", ">=", "<=>", "=>"}) {
    if (IsOp(prev, op)) return true;
  }
  for (std::string_view w : {"like", "ilike", "rlike", "regexp", "then", "else"}) {
    if (IsWord(prev, w)) return true;
  }
  if (!(IsOp(prev, "(") || IsOp(prev, ","))) return false;
  if (!has_next || !(IsOp(t[i + 1], ")") || IsOp(t[i + 1], ","))) return false;
  size_t open = EnclosingOpen(in, i);
  if (open == kNone || open == 0) return false;
  return IsWord(t[open - 1], "in");
}


std::string NumberWithoutSuffix(const Token& t, std::string* type) {
  std::string s(t.text);
  auto upper = [](char c) {
    return static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  };
  if (s.size() > 2 && upper(s[s.size() - 2]) == 'B' && upper(s.back()) == 'D') {
    s.resize(s.size() - 2);
    size_t dot = s.find('.');
    int scale = dot == std::string::npos ? 0 : static_cast<int>(s.size() - dot - 1);
    *type = "DECIMAL(38, " + std::to_string(scale) + ")";
    return s;
  }
  switch (upper(s.back())) {
    case 'L':
      *type = "BIGINT";
      break;
    case 'S':
      *type = "SMALLINT";
      break;
    case 'Y':
      *type = "TINYINT";
      break;
    case 'D':
      *type = "DOUBLE";
      break;
    case 'F':
      *type = "FLOAT";
      break;
    default:
      return s;
  }
  s.pop_back();
  return s;
}

}  // namespace

arrow::Status LexicalPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i < t.size(); ++i) {
    const Token& tok = t[i];
    switch (tok.kind) {
      case TokKind::kBacktick: {
        std::string name = IdentifierName(tok), quoted = "\"";
        for (char c : name) {
          quoted.push_back(c);
          if (c == '"') quoted.push_back('"');
        }
        quoted += "\"";
        // Where a "double-quoted" token would read as a string, the name goes
        // in parentheses, so translating the output again changes nothing.
        if (DoubleQuotedIsString(in, i)) quoted = "(" + quoted + ")";
        out->push_back({tok.begin, tok.end, quoted});
        break;
      }
      case TokKind::kRawString:
        out->push_back({tok.begin, tok.end, StringLiteralFor(StringValue(tok))});
        break;
      case TokKind::kString: {
        const bool e_string = i > 0 && t[i - 1].end == tok.begin && (IsWord(t[i - 1], "e"));
        if (!e_string && tok.text.find('\\') != std::string_view::npos) {
          out->push_back({tok.begin, tok.end, StringLiteralFor(StringValue(tok))});
        }
        break;
      }
      case TokKind::kQuotedIdent:
        if (DoubleQuotedIsString(in, i)) {
          out->push_back({tok.begin, tok.end, StringLiteralFor(StringValue(tok))});
        }
        break;
      case TokKind::kNumber: {
        std::string type;
        std::string digits = NumberWithoutSuffix(tok, &type);
        if (!type.empty()) {
          out->push_back({tok.begin, tok.end, "CAST(" + digits + " AS " + type + ")"});
        }
        break;
      }
      case TokKind::kOp:
        if (tok.text == "!" && !(i > 0 && IsValueEnd(t[i - 1]))) {
          out->push_back({tok.begin, tok.end, "NOT "});
        } else if (tok.text == "<=>") {
          out->push_back({tok.begin, tok.end, "IS NOT DISTINCT FROM"});
        } else if (tok.text == "*" && i + 2 < t.size() && IsWord(t[i + 1], "except") &&
                   IsOp(t[i + 2], "(") && !(i + 3 < t.size() && IsWord(t[i + 3], "select"))) {
          out->push_back({t[i + 1].begin, t[i + 1].end, "EXCLUDE"});
        }
        break;
      case TokKind::kIdent:
        if (IsWord(tok, "div") && i > 0 && i + 1 < t.size() && IsValueEnd(t[i - 1]) &&
            !IsOp(t[i + 1], ")") && !IsOp(t[i + 1], ",")) {
          out->push_back({tok.begin, tok.end, "//"});
        } else if (IsWord(tok, "window") && !(i + 1 < t.size() && IsOp(t[i + 1], "(")) &&
                   !(i + 2 < t.size() && IsIdentifier(t[i + 1]) && IsWord(t[i + 2], "as"))) {
          // Spark's window struct column; `window` is reserved in DuckDB.
          out->push_back({tok.begin, tok.end, "\"window\""});
        } else if (IsWord(tok, "current_timestamp") && i + 2 < t.size() && IsOp(t[i + 1], "(") &&
                   IsOp(t[i + 2], ")")) {
          out->push_back({t[i + 1].begin, t[i + 2].end, ""});
        }
        break;
    }
  }
  return arrow::Status::OK();
}

arrow::Status IntervalPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (!IsWord(t[i], "interval")) continue;
    auto lit = ParseIntervalLiteral(t, i);
    if (!lit.ok() || lit->duckdb_native) continue;
    out->push_back({t[i].begin, t[lit->next - 1].end, DuckDbInterval(lit->value)});
    i = lit->next - 1;
  }
  return arrow::Status::OK();
}

// ------------------------------------------------------------------ types

namespace {

// Spark type words DuckDB does not know (or reads differently).
bool NeedsTypeTranslation(std::string_view text) {
  if (text.find('<') != std::string_view::npos) return true;
  std::string w = ToLower(text);
  return w == "byte" || w == "binary" || w == "timestamp_ntz" || w == "timestamp_ltz" ||
         w == "void";
}

}  // namespace

// CAST(x AS array<int>) / TRY_CAST / x::map<string,int>: Spark type syntax
// DuckDB lacks becomes the DuckDB spelling.
arrow::Status TypePass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    size_t start = kNone;
    size_t stop = t.size();
    if (IsWord(t[i], "as") && i >= 1) {
      size_t open = EnclosingOpen(in, i);
      if (open == kNone || open == 0) continue;
      if (!(IsWord(t[open - 1], "cast") || IsWord(t[open - 1], "try_cast"))) continue;
      if (in.st.depth[i] != in.st.depth[open] + 1) continue;
      start = i + 1;
      stop = MatchingClose(t, open);
    } else if (IsOp(t[i], "::")) {
      start = i + 1;
      size_t j = start;
      if (j >= t.size() || t[j].kind != TokKind::kIdent) continue;
      ++j;
      if (j < t.size() && IsOp(t[j], "<")) {
        int angle = 0;
        for (; j < t.size(); ++j) {
          if (IsOp(t[j], "<"))
            ++angle;
          else if (IsOp(t[j], ">"))
            --angle;
          else if (IsOp(t[j], ">>"))
            angle -= 2;
          if (angle <= 0) {
            ++j;
            break;
          }
        }
      } else if (j < t.size() && IsOp(t[j], "(")) {
        j = MatchingClose(t, j) + 1;
      }
      stop = std::min(j, t.size());
    } else {
      continue;
    }
    if (start >= stop || stop > t.size()) continue;
    std::string_view type_text = TextOf(in.text, t, start, stop);
    if (!NeedsTypeTranslation(type_text)) continue;
    auto parsed = ParseTypeName(type_text);
    if (!parsed.ok()) {
      return ErrorAt(in, start,
                     "unknown type '" + std::string(type_text) + "': " + parsed.status().message());
    }
    out->push_back({t[start].begin, t[stop - 1].end, DuckDbTypeName(**parsed)});
  }
  return arrow::Status::OK();
}

// Infix Spark operators DuckDB spells as functions: a RLIKE b, a REGEXP b.
arrow::Status OperatorPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 1; i + 1 < t.size(); ++i) {
    if (!(IsWord(t[i], "rlike") || IsWord(t[i], "regexp"))) continue;
    if (IsOp(t[i + 1], "(")) continue;  // the function form
    bool negated = IsWord(t[i - 1], "not");
    size_t left_end = negated ? i - 1 : i;
    if (left_end == 0) continue;
    // Left operand: a (qualified) name, a literal, or a bracketed expression.
    size_t l = left_end - 1;
    if (IsOp(t[l], ")")) {
      int depth = 0;
      size_t k = l;
      bool found = false;
      for (;; --k) {
        if (IsOp(t[k], ")")) ++depth;
        if (IsOp(t[k], "(") && --depth == 0) {
          found = true;
          break;
        }
        if (k == 0) break;
      }
      if (!found) continue;  // unbalanced: leave it to DuckDB's parser
      l = k;
      if (l > 0 && IsIdentifier(t[l - 1])) --l;
    }
    while (l >= 2 && IsOp(t[l - 1], ".") && IsIdentifier(t[l - 2])) l -= 2;
    // Right operand: a literal, a (qualified) name or a bracketed expression.
    size_t r = i + 1;
    size_t r_end = r + 1;
    if (IsOp(t[r], "(")) {
      r_end = MatchingClose(t, r) + 1;
    } else {
      while (r_end + 1 < t.size() && IsOp(t[r_end], ".") && IsIdentifier(t[r_end + 1])) r_end += 2;
      if (r_end < t.size() && IsOp(t[r_end], "(") && IsIdentifier(t[r_end - 1])) {
        r_end = MatchingClose(t, r_end) + 1;  // a function call
      }
    }
    if (r_end > t.size()) continue;
    std::string call = "regexp_matches(" + std::string(TextOf(in.text, t, l, left_end)) + ", " +
                       std::string(TextOf(in.text, t, r, r_end)) + ")";
    if (negated) call = "NOT " + call;
    out->push_back({t[l].begin, t[r_end - 1].end, call});
  }
  return arrow::Status::OK();
}

std::string StringLiteralFor(std::string_view value) {
  bool needs_escape = false;
  for (char c : value) {
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20) needs_escape = true;
  }
  if (!needs_escape) return DuckDbStringLiteral(value);
  std::string out = "E'";
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\'':
        out += "\\'";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\0':
        out += "\\0";
        break;
      default:
        out.push_back(c);
    }
  }
  return out + "'";
}

}  // namespace thund::sql
