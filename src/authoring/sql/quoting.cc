// Quoting names and literals, and small text helpers of the SQL surface.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "authoring/sql/sql_internal.h"
#include "thund/duration.h"

namespace thund::sqlp {
namespace {

// Words that must be back-quoted when used as a name: SQL keywords and the
// words thund's statement grammar looks for.
constexpr std::string_view kKeywords[] = {
    "all",          "and",         "any",
    "apply",        "as",          "asc",
    "auto",         "between",     "by",
    "case",         "cast",        "cdc",
    "changes",      "cluster",     "columns",
    "comment",      "constraint",  "create",
    "cross",        "current",     "delay",
    "delete",       "desc",        "distinct",
    "drop",         "else",        "end",
    "except",       "exists",      "expect",
    "fail",         "false",       "flow",
    "for",          "from",        "full",
    "group",        "having",      "if",
    "ignore",       "in",          "inner",
    "insert",       "intersect",   "interval",
    "into",         "is",          "join",
    "keys",         "lateral",     "left",
    "like",         "limit",       "location",
    "materialized", "metadata",    "minus",
    "name",         "natural",     "not",
    "null",         "of",          "on",
    "once",         "options",     "or",
    "order",        "outer",       "overwrite",
    "partition",    "partitioned", "pipeline",
    "refresh",      "replace",     "right",
    "row",          "schema",      "select",
    "sequence",     "set",         "sink",
    "sql",          "stored",      "stream",
    "streaming",    "table",       "tblproperties",
    "temp",         "temporary",   "then",
    "to",           "track",       "true",
    "union",        "update",      "use",
    "using",        "values",      "view",
    "violation",    "watermark",   "when",
    "where",        "window",      "with",
    "catalog",      "database",    "namespace",
    "source",       "type",        "scd",
    "truncate",     "generated",   "default",
    "primary",      "unique",      "foreign",
    "check",        "references",
};

bool IsKeyword(std::string_view s) {
  return std::any_of(std::begin(kKeywords), std::end(kKeywords),
                     [&](std::string_view k) { return sql::EqualsIgnoreCase(k, s); });
}

}  // namespace

bool IsPlainIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::string QuoteIdent(std::string_view name) {
  if (IsPlainIdentifier(name) && !IsKeyword(name)) return std::string(name);
  std::string out = "`";
  for (char c : name) {
    out.push_back(c);
    if (c == '`') out.push_back('`');
  }
  return out + "`";
}

std::string QuoteName(std::string_view name) {
  // a.b.c stays a path when every part is plain.
  size_t start = 0;
  bool plain_path = !name.empty();
  while (plain_path) {
    size_t dot = name.find('.', start);
    std::string_view part = name.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!IsPlainIdentifier(part) || IsKeyword(part)) plain_path = false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (plain_path) return std::string(name);
  std::string out = "`";
  for (char c : name) {
    out.push_back(c);
    if (c == '`') out.push_back('`');
  }
  return out + "`";
}

std::string Literal(std::string_view s) { return sql::SparkStringLiteral(s); }

std::string DurationText(int64_t ms) { return FormatDuration(ms); }

arrow::Result<int64_t> ParseDurationText(std::string_view text) {
  auto r = ParseDuration(text);
  if (r.ok()) return r;
  std::string_view s = text;
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  if (s.size() > 2 && s.substr(s.size() - 2) == "ms") s.remove_suffix(2);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc() && ptr == s.data() + s.size()) return v;
  return r.status();
}

bool VerbatimSafe(std::string_view body, const std::vector<std::string_view>& stop_words) {
  if (body.empty()) return false;
  sql::LexResult lex = sql::Lex(body);
  if (lex.error || lex.tokens.empty()) return false;
  const auto& t = lex.tokens;
  if (t.front().begin != 0 || t.back().end != body.size()) return false;
  if (sql::IsWord(t[0], "sql") && t.size() > 1 && sql::IsStringToken(t[1])) return false;
  if (sql::IsWord(t[0], "source")) return false;  // SOURCE read_x(...) is a source body
  int depth = 0;
  for (const Token& tok : t) {
    if (sql::IsOp(tok, ";")) return false;
    if (tok.kind == TokKind::kOp) {
      if (tok.text == "(" || tok.text == "[" || tok.text == "{") ++depth;
      if (tok.text == ")" || tok.text == "]" || tok.text == "}") {
        if (--depth < 0) return false;
      }
    }
    if (depth == 0) {
      for (auto w : stop_words) {
        if (sql::IsWord(tok, w)) return false;
      }
    }
  }
  return depth == 0;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                                          std::tolower(static_cast<unsigned char>(b[j - 1]))
                                      ? 0
                                      : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& candidates) {
  size_t best = std::string_view::npos;
  std::string_view pick;
  for (auto c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best) {
      best = d;
      pick = c;
    }
  }
  if (pick.empty() || best > std::max<size_t>(2, word.size() / 3)) return "";
  return std::string(pick);
}

}  // namespace thund::sqlp
