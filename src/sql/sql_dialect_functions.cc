// Spark functions whose DuckDB name or meaning differs. The table is public
// (SparkFunctionTable) so docs/sql.md can be checked against it.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "sql/sql_dialect_internal.h"
#include "thund/sql_dialect.h"

namespace thund::sql {
namespace {

using Custom = arrow::Result<std::optional<std::string>> (*)(const PassInput&, const Call&);

struct FnRule {
  std::string_view spark;
  int min_args;
  int max_args;  // -1 = any
  // DuckDB form: a bare name renames the function; otherwise a template where
  // $1..$9 are the arguments, $* all of them, $2* the second onwards.
  std::string_view duckdb;
  std::string_view note;
  Custom custom = nullptr;  // when set, builds the replacement itself
};

std::string Join(const std::vector<std::string>& v, size_t from, std::string_view sep) {
  std::string out;
  for (size_t k = from; k < v.size(); ++k) out += (k > from ? std::string(sep) : "") + v[k];
  return out;
}

std::string Expand(std::string_view tmpl, const std::vector<std::string>& args) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != '$' || i + 1 >= tmpl.size()) {
      out.push_back(tmpl[i]);
      continue;
    }
    char c = tmpl[i + 1];
    if (c == '*') {
      out += Join(args, 0, ", ");
      ++i;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t k = static_cast<size_t>(c - '1');
      if (i + 2 < tmpl.size() && tmpl[i + 2] == '*') {
        out += Join(args, k, ", ");
        i += 2;
      } else {
        out += k < args.size() ? args[k] : "NULL";
        ++i;
      }
    } else {
      out.push_back('$');
    }
  }
  return out;
}

bool ArgIsString(const PassInput& in, const Call& c, size_t k) {
  return k < c.args.size() && c.args[k].second == c.args[k].first + 1 &&
         IsStringToken(in.tokens[c.args[k].first]);
}
std::string ArgString(const PassInput& in, const Call& c, size_t k) {
  return StringValue(in.tokens[c.args[k].first]);
}
bool ArgStartsWith(const PassInput& in, const Call& c, size_t k, std::string_view word) {
  return k < c.args.size() && c.args[k].first < c.args[k].second &&
         IsWord(in.tokens[c.args[k].first], word);
}

arrow::Result<std::string> FormatArg(const PassInput& in, const Call& c, size_t k,
                                     std::string_view fn) {
  if (!ArgIsString(in, c, k)) {
    return ErrorAt(
        in, c.args[k].first,
        std::string(fn) + "() needs its date format as a string literal, e.g. 'yyyy-MM-dd'");
  }
  auto f = JavaToStrftime(ArgString(in, c, k));
  if (!f.ok()) return ErrorAt(in, c.args[k].first, std::string(fn) + "(): " + f.status().message());
  return DuckDbStringLiteral(*f);
}

using Out = arrow::Result<std::optional<std::string>>;

Out ToDate(const PassInput& in, const Call& c) {
  if (c.args.size() == 1) return "CAST(" + c.arg_text[0] + " AS DATE)";
  ARROW_ASSIGN_OR_RAISE(auto f, FormatArg(in, c, 1, "to_date"));
  return "CAST(strptime(" + c.arg_text[0] + ", " + f + ") AS DATE)";
}
Out ToTimestamp(const PassInput& in, const Call& c) {
  if (c.args.size() == 1) {
    if (in.tokens[c.args[0].first].kind == TokKind::kNumber) return std::nullopt;  // epoch seconds
    return "CAST(" + c.arg_text[0] + " AS TIMESTAMP)";
  }
  ARROW_ASSIGN_OR_RAISE(auto f, FormatArg(in, c, 1, "to_timestamp"));
  return "strptime(" + c.arg_text[0] + ", " + f + ")";
}
Out TryToTimestamp(const PassInput& in, const Call& c) {
  if (c.args.size() == 1) return "TRY_CAST(" + c.arg_text[0] + " AS TIMESTAMP)";
  ARROW_ASSIGN_OR_RAISE(auto f, FormatArg(in, c, 1, "try_to_timestamp"));
  return "try_strptime(" + c.arg_text[0] + ", " + f + ")";
}
Out DateFormat(const PassInput& in, const Call& c) {
  ARROW_ASSIGN_OR_RAISE(auto f, FormatArg(in, c, 1, "date_format"));
  return "strftime(" + c.arg_text[0] + ", " + f + ")";
}
Out FromUnixtime(const PassInput& in, const Call& c) {
  std::string f = "'%Y-%m-%d %H:%M:%S'";
  if (c.args.size() == 2) {
    ARROW_ASSIGN_OR_RAISE(f, FormatArg(in, c, 1, "from_unixtime"));
  }
  return "strftime(epoch_ms(CAST(" + c.arg_text[0] + " AS BIGINT) * 1000), " + f + ")";
}
Out UnixTimestamp(const PassInput& in, const Call& c) {
  if (c.args.empty()) return std::string("CAST(epoch(current_timestamp) AS BIGINT)");
  if (c.args.size() == 1) return "CAST(epoch(CAST(" + c.arg_text[0] + " AS TIMESTAMP)) AS BIGINT)";
  ARROW_ASSIGN_OR_RAISE(auto f, FormatArg(in, c, 1, "unix_timestamp"));
  return "CAST(epoch(strptime(" + c.arg_text[0] + ", " + f + ")) AS BIGINT)";
}
Out DateAdd(const PassInput& in, const Call& c) {
  if (c.args.size() == 3) {  // date_add(unit, n, ts)
    return "(" + c.arg_text[2] + " + INTERVAL (" + c.arg_text[1] + ") " + c.arg_text[0] + ")";
  }
  if (ArgStartsWith(in, c, 1, "interval")) return std::nullopt;  // DuckDB's own form
  return "(CAST(" + c.arg_text[0] + " AS DATE) + CAST(" + c.arg_text[1] + " AS INTEGER))";
}
Out DateSub(const PassInput& in, const Call& c) {
  if (c.args.size() != 2 || ArgStartsWith(in, c, 1, "interval")) return std::nullopt;
  return "(CAST(" + c.arg_text[0] + " AS DATE) - CAST(" + c.arg_text[1] + " AS INTEGER))";
}
Out TimestampAdd(const PassInput&, const Call& c) {
  return "(" + c.arg_text[2] + " + INTERVAL (" + c.arg_text[1] + ") " + c.arg_text[0] + ")";
}
Out DateDiff(const PassInput& in, const Call& c) {
  if (c.args.size() == 2) {
    return "date_diff('day', CAST(" + c.arg_text[1] + " AS DATE), CAST(" + c.arg_text[0] +
           " AS DATE))";
  }
  // (unit, start, end) with the unit as a bare word (Spark) or a string.
  if (ArgIsString(in, c, 0)) return std::nullopt;
  if (c.args[0].second != c.args[0].first + 1 ||
      in.tokens[c.args[0].first].kind != TokKind::kIdent) {
    return std::nullopt;
  }
  return "date_diff('" + ToLower(c.arg_text[0]) + "', " + c.arg_text[1] + ", " + c.arg_text[2] +
         ")";
}

std::optional<std::string> SparkTruncUnit(std::string_view unit) {
  std::string u = ToLower(unit);
  if (u == "year" || u == "yyyy" || u == "yy") return "year";
  if (u == "quarter") return "quarter";
  if (u == "month" || u == "mm" || u == "mon") return "month";
  if (u == "week") return "week";
  if (u == "day" || u == "dd") return "day";
  if (u == "hour") return "hour";
  if (u == "minute") return "minute";
  if (u == "second") return "second";
  if (u == "millisecond") return "millisecond";
  if (u == "microsecond") return "microsecond";
  return std::nullopt;
}
Out Trunc(const PassInput& in, const Call& c) {
  if (!ArgIsString(in, c, 1)) return std::nullopt;  // DuckDB's numeric trunc
  auto unit = SparkTruncUnit(ArgString(in, c, 1));
  if (!unit)
    return ErrorAt(in, c.args[1].first, "trunc(): unknown unit '" + ArgString(in, c, 1) + "'");
  return "CAST(date_trunc('" + *unit + "', " + c.arg_text[0] + ") AS DATE)";
}
Out DateTrunc(const PassInput& in, const Call& c) {
  if (!ArgIsString(in, c, 0)) return std::nullopt;
  std::string given = ArgString(in, c, 0);
  auto unit = SparkTruncUnit(given);
  if (!unit || *unit == ToLower(given)) return std::nullopt;  // already DuckDB's spelling
  return "date_trunc('" + *unit + "', " + c.arg_text[1] + ")";
}
Out SortArray(const PassInput& in, const Call& c) {
  bool asc = true;
  if (c.args.size() == 2) {
    const Token& t = in.tokens[c.args[1].first];
    if (c.args[1].second != c.args[1].first + 1 || !(IsWord(t, "true") || IsWord(t, "false"))) {
      return ErrorAt(in, c.args[1].first, "sort_array(): the order must be true or false");
    }
    asc = IsWord(t, "true");
  }
  return "list_sort(" + c.arg_text[0] +
         (asc ? ", 'ASC', 'NULLS FIRST')" : ", 'DESC', 'NULLS LAST')");
}
Out ArrayJoin(const PassInput&, const Call& c) {
  if (c.args.size() == 2) return "array_to_string(" + c.arg_text[0] + ", " + c.arg_text[1] + ")";
  return "array_to_string(list_transform(" + c.arg_text[0] +
         ", lambda __x: coalesce(CAST(__x AS VARCHAR), " + c.arg_text[2] + ")), " + c.arg_text[1] +
         ")";
}
Out Exists(const PassInput& in, const Call& c) {
  if (c.args.size() != 2 || ArgStartsWith(in, c, 0, "select")) return std::nullopt;
  return "(len(list_filter(" + c.arg_text[0] + ", " + c.arg_text[1] + ")) > 0)";
}
Out MapCall(const PassInput&, const Call& c) {
  if (c.args.size() % 2 != 0) return std::nullopt;
  std::string out = "MAP {";
  for (size_t k = 0; k < c.args.size(); k += 2) {
    out += (k ? ", " : "") + c.arg_text[k] + ": " + c.arg_text[k + 1];
  }
  return out + "}";
}
Out NamedStruct(const PassInput& in, const Call& c) {
  if (c.args.size() % 2 != 0) return std::nullopt;
  std::string out = "{";
  for (size_t k = 0; k < c.args.size(); k += 2) {
    if (!ArgIsString(in, c, k)) {
      return ErrorAt(in, c.args[k].first, "named_struct(): field names must be string literals");
    }
    out += (k ? ", " : "") + DuckDbStringLiteral(ArgString(in, c, k)) + ": " + c.arg_text[k + 1];
  }
  return out + "}";
}
Out StructCall(const PassInput& in, const Call& c) {
  std::string out = "{";
  for (size_t k = 0; k < c.args.size(); ++k) {
    auto [a, b] = c.args[k];
    const auto& t = in.tokens;
    std::string name, value = c.arg_text[k];
    if (b >= a + 3 && IsWord(t[b - 2], "as") && IsIdentifier(t[b - 1])) {
      name = IdentifierName(t[b - 1]);
      value = std::string(TextOf(in.text, t, a, b - 2));
    } else if (IsIdentifier(t[b - 1]) && (b == a + 1 || IsOp(t[b - 2], "."))) {
      name = IdentifierName(t[b - 1]);
    } else {
      name = "col" + std::to_string(k + 1);
    }
    out += (k ? ", " : "") + DuckDbStringLiteral(name) + ": " + value;
  }
  return out + "}";
}
Out RegexpReplace(const PassInput& in, const Call& c) {
  std::string repl = c.arg_text[2];
  if (ArgIsString(in, c, 2)) {
    // Java's $1 group references are \1 in DuckDB (RE2).
    std::string v = ArgString(in, c, 2), conv;
    for (size_t k = 0; k < v.size(); ++k) {
      if (v[k] == '$' && k + 1 < v.size() && std::isdigit(static_cast<unsigned char>(v[k + 1]))) {
        conv += '\\';
      } else if (v[k] == '\\' && k + 1 < v.size() && v[k + 1] == '$') {
        continue;
      } else {
        conv += v[k];
      }
    }
    repl = conv.find('\\') != std::string::npos ? "E'" +
                                                      [&] {
                                                        std::string e;
                                                        for (char ch : conv) {
                                                          if (ch == '\\')
                                                            e += "\\\\";
                                                          else if (ch == '\'')
                                                            e += "\\'";
                                                          else
                                                            e += ch;
                                                        }
                                                        return e;
                                                      }() +
                                                      "'"
                                                : DuckDbStringLiteral(conv);
  }
  return "regexp_replace(" + c.arg_text[0] + ", " + c.arg_text[1] + ", " + repl + ", 'g')";
}
Out Sha2(const PassInput& in, const Call& c) {
  const Token& t = in.tokens[c.args[1].first];
  if (c.args[1].second == c.args[1].first + 1 && (t.text == "256" || t.text == "0")) {
    return "sha256(" + c.arg_text[0] + ")";
  }
  return std::nullopt;
}
Out AnyAggregate(const PassInput& in, const Call& c) {
  // `x = ANY (subquery)` is SQL, not Spark's any() aggregate.
  if (c.name > 0) {
    const Token& p = in.tokens[c.name - 1];
    if (p.kind == TokKind::kOp && p.text != "(" && p.text != ",") return std::nullopt;
  }
  if (ArgStartsWith(in, c, 0, "select")) return std::nullopt;
  return "bool_or(" + c.arg_text[0] + ")";
}
Out FirstLast(const PassInput& in, const Call& c) {
  const bool first = IsWord(in.tokens[c.name], "first");
  const Token& t = in.tokens[c.args[1].first];
  if (IsWord(t, "true")) {
    if (!first) return std::nullopt;
    return "any_value(" + c.arg_text[0] + ")";
  }
  if (IsWord(t, "false")) return std::string(first ? "first(" : "last(") + c.arg_text[0] + ")";
  return std::nullopt;
}

Out Concat(const PassInput&, const Call& c) { return "(" + Join(c.arg_text, 0, " || ") + ")"; }

// Aggregates that must keep a FILTER (...) / OVER (...) that follows them.
size_t TrailingClausesEnd(const PassInput& in, size_t close) {
  const auto& t = in.tokens;
  size_t k = close;
  if (k + 2 < t.size() && IsWord(t[k + 1], "filter") && IsOp(t[k + 2], "(")) {
    k = MatchingClose(t, k + 2);
  }
  if (k + 1 < t.size() && IsWord(t[k + 1], "over")) {
    if (k + 2 < t.size() && IsOp(t[k + 2], "("))
      k = MatchingClose(t, k + 2);
    else if (k + 2 < t.size())
      k = k + 2;
  }
  return std::min(k, t.size() - 1);
}

constexpr FnRule kRules[] = {
    // conditional / null handling
    {"nvl", 2, 2, "coalesce", ""},
    {"nvl2", 3, 3, "CASE WHEN ($1) IS NOT NULL THEN ($2) ELSE ($3) END", ""},
    {"nanvl", 2, 2, "CASE WHEN isnan($1) THEN ($2) ELSE ($1) END", ""},
    {"isnull", 1, 1, "(($1) IS NULL)", ""},
    {"isnotnull", 1, 1, "(($1) IS NOT NULL)", ""},
    {"equal_null", 2, 2, "(($1) IS NOT DISTINCT FROM ($2))", ""},
    {"zeroifnull", 1, 1, "coalesce($1, 0)", ""},
    {"nullifzero", 1, 1, "nullif($1, 0)", ""},
    // strings
    {"concat", 1, -1, "($1 || $2 || ...)",
     "NULL if any argument is NULL, as in Spark (DuckDB's concat skips NULLs)", Concat},
    {"locate", 2, 2, "instr($2, $1)", "the 3-argument form is not translated"},
    {"space", 1, 1, "repeat(' ', $1)", ""},
    {"char", 1, 1, "chr", ""},
    {"btrim", 1, 2, "trim", ""},
    {"format_string", 1, -1, "printf", ""},
    {"startswith", 2, 2, "starts_with", ""},
    {"endswith", 2, 2, "ends_with", ""},
    {"split", 2, 2, "regexp_split_to_array", "the separator is a regular expression, as in Spark"},
    {"rlike", 2, 2, "regexp_matches", "also the infix forms a RLIKE b / a REGEXP b"},
    {"regexp", 2, 2, "regexp_matches", ""},
    {"regexp_like", 2, 2, "regexp_matches", ""},
    {"regexp_extract", 2, 2, "regexp_extract($1, $2, 1)", "Spark's default group is 1"},
    {"regexp_extract_all", 2, 2, "regexp_extract_all($1, $2, 1)", "Spark's default group is 1"},
    {"regexp_replace", 3, 3, "regexp_replace($1, $2, $3, 'g')",
     "replaces every match; $1 group references become \\1", RegexpReplace},
    {"regexp_count", 2, 2, "len(regexp_extract_all($1, $2))", ""},
    {"regexp_substr", 2, 2, "nullif(regexp_extract($1, $2), '')", ""},
    {"ilike", 2, 2, "(($1) ILIKE ($2))", ""},
    {"like", 2, 2, "(($1) LIKE ($2))", ""},
    {"get_json_object", 2, 2, "json_extract_string", ""},
    {"unbase64", 1, 1, "from_base64", ""},
    {"sha2", 2, 2, "sha256($1)", "bit lengths 0 and 256 only", Sha2},
    // dates and times
    {"to_date", 1, 2, "CAST($1 AS DATE) / CAST(strptime($1, fmt) AS DATE)",
     "the format must be a literal", ToDate},
    {"to_timestamp", 1, 2, "CAST($1 AS TIMESTAMP) / strptime($1, fmt)",
     "a numeric literal argument (epoch seconds) is left to DuckDB's to_timestamp", ToTimestamp},
    {"try_to_timestamp", 1, 2, "TRY_CAST($1 AS TIMESTAMP) / try_strptime($1, fmt)", "",
     TryToTimestamp},
    {"date_format", 2, 2, "strftime($1, fmt)",
     "Java patterns (yyyy-MM-dd HH:mm:ss.SSS) become strftime patterns", DateFormat},
    {"from_unixtime", 1, 2, "strftime(epoch_ms($1 * 1000), fmt)", "UTC", FromUnixtime},
    {"unix_timestamp", 0, 2, "CAST(epoch(...) AS BIGINT)", "", UnixTimestamp},
    {"timestamp_seconds", 1, 1, "epoch_ms(CAST(($1) * 1000 AS BIGINT))", ""},
    {"timestamp_millis", 1, 1, "epoch_ms", ""},
    {"timestamp_micros", 1, 1, "make_timestamp", ""},
    {"unix_seconds", 1, 1, "CAST(epoch($1) AS BIGINT)", ""},
    {"unix_millis", 1, 1, "epoch_ms", ""},
    {"unix_micros", 1, 1, "epoch_us", ""},
    {"unix_date", 1, 1, "date_diff('day', DATE '1970-01-01', $1)", ""},
    {"date_from_unix_date", 1, 1, "(DATE '1970-01-01' + CAST($1 AS INTEGER))", ""},
    {"date_add", 2, 3, "(CAST($1 AS DATE) + CAST($2 AS INTEGER))",
     "left alone when the second argument is an INTERVAL (DuckDB's form)", DateAdd},
    {"date_sub", 2, 2, "(CAST($1 AS DATE) - CAST($2 AS INTEGER))", "", DateSub},
    {"dateadd", 3, 3, "($3 + INTERVAL ($2) unit)", "", TimestampAdd},
    {"timestampadd", 3, 3, "($3 + INTERVAL ($2) unit)", "", TimestampAdd},
    {"datediff", 2, 3, "date_diff('day', CAST($2 AS DATE), CAST($1 AS DATE))",
     "2 arguments: end, start (Spark order)", DateDiff},
    {"timestampdiff", 3, 3, "date_diff('unit', $2, $3)", "", DateDiff},
    {"add_months", 2, 2, "CAST(($1) + to_months(CAST($2 AS INTEGER)) AS DATE)", ""},
    {"dayofweek", 1, 1, "(isodow($1) % 7 + 1)",
     "1 = Sunday, as in Spark (DuckDB's dayofweek starts at 0)"},
    {"weekday", 1, 1, "(isodow($1) - 1)", "0 = Monday"},
    {"trunc", 2, 2, "CAST(date_trunc(unit, $1) AS DATE)", "units such as 'MM', 'YYYY'", Trunc},
    {"date_trunc", 2, 2, "date_trunc(unit, $2)",
     "Spark unit spellings ('MM', 'YYYY', 'DD') normalized", DateTrunc},
    {"current_timezone", 0, 0, "current_setting('TimeZone')", ""},
    // math
    {"rand", 0, 1, "random()", "the seed is ignored"},
    {"pmod", 2, 2, "(((($1) % ($2)) + ($2)) % ($2))", ""},
    {"log", 1, 1, "ln", "one argument: natural logarithm (DuckDB's log is base 10)"},
    {"signum", 1, 1, "sign", ""},
    {"expm1", 1, 1, "(exp($1) - 1)", ""},
    {"log1p", 1, 1, "ln(1 + ($1))", ""},
    {"hypot", 2, 2, "sqrt(($1) * ($1) + ($2) * ($2))", ""},
    {"shiftleft", 2, 2, "(($1) << ($2))", ""},
    {"shiftright", 2, 2, "(($1) >> ($2))", ""},
    {"try_divide", 2, 2, "(($1) / nullif($2, 0))", ""},
    // arrays, maps, structs
    {"size", 1, 1, "len", ""},
    {"array_size", 1, 1, "len", ""},
    {"array", 0, -1, "list_value", ""},
    {"array_max", 1, 1, "list_max", ""},
    {"array_min", 1, 1, "list_min", ""},
    {"array_join", 2, 3, "array_to_string($1, $2)", "", ArrayJoin},
    {"array_union", 2, 2, "list_distinct(list_concat($1, $2))", ""},
    {"array_except", 2, 2, "list_filter(list_distinct($1), lambda __x: NOT list_contains($2, __x))",
     ""},
    {"array_compact", 1, 1, "list_filter($1, lambda __x: __x IS NOT NULL)", ""},
    {"array_remove", 2, 2, "list_filter($1, lambda __x: __x IS DISTINCT FROM ($2))", ""},
    {"array_repeat", 2, 2, "repeat([$1], $2)", ""},
    {"array_prepend", 2, 2, "list_prepend($2, $1)", ""},
    {"arrays_overlap", 2, 2, "list_has_any", ""},
    {"arrays_zip", 2, -1, "list_zip", ""},
    {"slice", 3, 3, "list_slice($1, $2, ($2) + ($3) - 1)", ""},
    {"sequence", 2, 3, "generate_series", ""},
    {"sort_array", 1, 2, "list_sort($1, 'ASC', 'NULLS FIRST')", "", SortArray},
    {"transform", 2, 2, "list_transform", ""},
    {"filter", 2, 2, "list_filter", ""},
    {"exists", 2, 2, "(len(list_filter($1, $2)) > 0)", "", Exists},
    {"forall", 2, 2, "(len(list_filter($1, $2)) = len($1))", ""},
    {"aggregate", 3, 3, "list_reduce($1, $3, $2)", ""},
    {"map", 0, -1, "MAP {k: v, ...}", "Spark's map(k1, v1, k2, v2, ...)", MapCall},
    {"map_from_arrays", 2, 2, "map_from_entries(list_zip($1, $2))", ""},
    {"named_struct", 2, -1, "{'name': value, ...}", "", NamedStruct},
    {"struct", 1, -1, "{'col': value, ...}", "fields named as Spark names them", StructCall},
    {"explode", 1, 1, "unnest", "in the SELECT list; LATERAL VIEW explode(...) is translated too"},
    // aggregates
    {"collect_list", 1, 1, "coalesce(list_filter(list($1), lambda __x: __x IS NOT NULL), [])",
     "NULLs skipped, as in Spark"},
    {"collect_set", 1, 1, "coalesce(list_distinct(list($1)), [])", ""},
    {"percentile_approx", 2, 3, "approx_quantile($1, $2)", "the accuracy argument is ignored"},
    {"approx_percentile", 2, 3, "approx_quantile($1, $2)", "the accuracy argument is ignored"},
    {"percentile", 2, 2, "quantile_cont($1, $2)", ""},
    {"every", 1, 1, "bool_and", ""},
    {"some", 1, 1, "bool_or($1)", "", AnyAggregate},
    {"any", 1, 1, "bool_or($1)", "", AnyAggregate},
    {"std", 1, 1, "stddev", ""},
    {"first", 2, 2, "any_value($1) / first($1)", "first(x, true) skips NULLs", FirstLast},
    {"last", 2, 2, "last($1)", "last(x, false) only", FirstLast},
    {"grouping_id", 1, -1, "grouping", ""},
    {"monotonically_increasing_id", 0, 0, "(row_number() OVER () - 1)", ""},
    {"spark_partition_id", 0, 0, "0", ""},
    // casts written as functions
    {"string", 1, 1, "CAST($1 AS VARCHAR)", ""},
    {"int", 1, 1, "CAST($1 AS INTEGER)", ""},
    {"bigint", 1, 1, "CAST($1 AS BIGINT)", ""},
    {"smallint", 1, 1, "CAST($1 AS SMALLINT)", ""},
    {"tinyint", 1, 1, "CAST($1 AS TINYINT)", ""},
    {"double", 1, 1, "CAST($1 AS DOUBLE)", ""},
    {"float", 1, 1, "CAST($1 AS FLOAT)", ""},
    {"boolean", 1, 1, "CAST($1 AS BOOLEAN)", ""},
    {"binary", 1, 1, "CAST($1 AS BLOB)", ""},
    {"timestamp", 1, 1, "CAST($1 AS TIMESTAMP)", ""},
    {"date", 1, 1, "CAST($1 AS DATE)", ""},
};

const FnRule* FindRule(std::string_view name) {
  for (const auto& r : kRules) {
    if (EqualsIgnoreCase(r.spark, name)) return &r;
  }
  return nullptr;
}

bool IsBareName(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

bool AfterTypeOrTableWord(const std::vector<Token>& t, size_t i) {
  if (i == 0) return false;
  const Token& prev = t[i - 1];
  return IsOp(prev, ".") || IsOp(prev, "::") || IsWord(prev, "as") || IsWord(prev, "into") ||
         IsWord(prev, "table") || IsWord(prev, "view");
}

}  // namespace thund::sql

namespace thund {
namespace {

bool IsAnyWord(const sql::Token& t, const char* const* words, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    if (sql::IsWord(t, words[k])) return true;
  }
  return false;
}

}  // namespace

std::vector<WrittenCall> SparkFunctionCalls(std::string_view spark_sql) {
  // Words that take "(" without being a call.
  static const char* const kClauseWords[] = {
      "in",     "exists", "values", "stream",  "over",     "filter",  "using", "on",
      "and",    "or",     "not",    "when",    "then",     "else",    "select", "from",
      "where",  "join",   "by",     "as",      "case",     "any",     "all",    "some",
      "lateral", "tablesample", "pivot", "unpivot", "sets", "distinct", "with", "having",
      "union",  "except", "intersect", "is",  "like",     "rlike",   "between", "row",
      "return", "insert", "into",   "table",   "view",     "descriptor"};
  // Words a call may follow (any other name before `x(` makes x an alias).
  static const char* const kCallFollows[] = {
      "select", "from",  "where", "and",    "or",     "not",    "on",     "by",
      "when",   "then",  "else",  "case",   "join",   "having", "distinct", "all",
      "any",    "some",  "in",    "is",     "like",   "rlike",  "between", "over",
      "filter", "using", "lateral", "exists", "values", "return", "limit", "qualify",
      "asc",    "desc",  "first", "last",   "union",  "except", "intersect", "stream",
      "escape", "div",   "mod"};
  sql::LexResult lex = sql::Lex(spark_sql);
  if (lex.error) return {};
  sql::Structure st = sql::Analyze(lex.tokens);
  const sql::PassInput in{spark_sql, lex.tokens, st};
  const auto& t = lex.tokens;
  std::vector<WrittenCall> out;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i].kind != sql::TokKind::kIdent || !sql::IsOp(t[i + 1], "(")) continue;
    if (sql::AfterTypeOrTableWord(t, i)) continue;
    if (IsAnyWord(t[i], kClauseWords, std::size(kClauseWords))) continue;
    if (i > 0) {
      // After ")" or a name, `x(...)` is an alias with column names:
      // (VALUES ...) t(a, b), FROM tbl t(a, b).
      const sql::Token& prev = t[i - 1];
      if (sql::IsOp(prev, ")") ||
          (sql::IsIdentifier(prev) && !IsAnyWord(prev, kCallFollows, std::size(kCallFollows)))) {
        continue;
      }
    }
    out.push_back(WrittenCall{sql::ToLower(t[i].text), t[i].line, t[i].column,
                              sql::AtRelationStart(in, i)});
  }
  return out;
}

}  // namespace thund

namespace thund::sql {

arrow::Status FunctionPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (t[i].kind != TokKind::kIdent || !IsOp(t[i + 1], "(")) continue;
    if (AfterTypeOrTableWord(t, i) || (i > 0 && IsWord(t[i - 1], "outer"))) {
      continue;  // a type, a table, or LATERAL VIEW [OUTER] explode(...)
    }
    if (AtRelationStart(in, i)) continue;
    const FnRule* rule = FindRule(t[i].text);
    if (!rule) continue;
    auto call = CallAt(in, i);
    if (!call) continue;
    const int n = static_cast<int>(call->args.size());
    if (n < rule->min_args || (rule->max_args >= 0 && n > rule->max_args)) continue;
    if (IsWord(t[i], "collect_list") || IsWord(t[i], "collect_set")) {
      size_t end = TrailingClausesEnd(in, call->close);
      std::string agg =
          "list(" + call->arg_text[0] + ")" +
          std::string(in.text.substr(t[call->close].end, t[end].end - t[call->close].end));
      std::string repl = IsWord(t[i], "collect_list")
                             ? "coalesce(list_filter(" + agg + ", lambda __x: __x IS NOT NULL), [])"
                             : "coalesce(list_distinct(" + agg + "), [])";
      out->push_back({t[i].begin, t[end].end, repl});
      continue;
    }
    std::optional<std::string> repl;
    if (rule->custom) {
      ARROW_ASSIGN_OR_RAISE(repl, rule->custom(in, *call));
    } else if (IsBareName(rule->duckdb)) {
      out->push_back({t[i].begin, t[i].end, std::string(rule->duckdb)});
      continue;
    } else {
      repl = Expand(rule->duckdb, call->arg_text);
    }
    if (repl) out->push_back({t[i].begin, t[call->close].end, *repl});
  }
  return arrow::Status::OK();
}

}  // namespace thund::sql

namespace thund {

std::vector<SparkFunctionMapping> SparkFunctionTable() {
  std::vector<SparkFunctionMapping> out;
  for (const auto& r : sql::kRules) {
    out.push_back({std::string(r.spark), std::string(r.duckdb), std::string(r.note)});
  }
  return out;
}

}  // namespace thund
