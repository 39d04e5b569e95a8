// SparkToDuckDb: the pass driver and the helpers the passes share.
#include "thund/sql_dialect.h"

#include <algorithm>

#include "sql/duckdb_functions.h"
#include "sql/sql_dialect_internal.h"

namespace thund {
namespace sql {

std::string ApplyEdits(std::string_view text, std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  std::string out;
  size_t pos = 0;
  for (const Edit& e : edits) {
    if (e.begin < pos) continue;  // overlapping: callers filter these out
    out.append(text.substr(pos, e.begin - pos));
    out += e.text;
    pos = e.end;
  }
  out.append(text.substr(pos));
  return out;
}

std::vector<Edit> InnermostNonOverlapping(std::vector<Edit> edits) {
  std::stable_sort(edits.begin(), edits.end(), [](const Edit& a, const Edit& b) {
    return (a.end - a.begin) < (b.end - b.begin);
  });
  std::vector<Edit> kept;
  for (Edit& e : edits) {
    bool overlaps = std::any_of(kept.begin(), kept.end(), [&](const Edit& k) {
      // Any shared byte, or two insertions at one point, conflict.
      if (e.begin == e.end && k.begin == k.end) return e.begin == k.begin;
      if (e.begin == e.end) return k.begin < e.begin && e.begin < k.end;
      if (k.begin == k.end) return e.begin < k.begin && k.begin < e.end;
      return e.begin < k.end && k.begin < e.end;
    });
    if (!overlaps) kept.push_back(std::move(e));
  }
  return kept;
}

bool AtRelationStart(const PassInput& in, size_t i) {
  if (i == 0) return false;
  const auto& t = in.tokens;
  const Token& p = t[i - 1];
  if (IsWord(p, "from")) return !(i >= 2 && IsWord(t[i - 2], "distinct"));
  if (IsWord(p, "join")) return true;
  if (IsWord(p, "lateral")) return i >= 2 && !IsWord(t[i - 2], "view");
  if (IsOp(p, ",")) {
    int b = in.st.owner[i - 1];
    if (b < 0) return false;
    const Block& blk = in.st.blocks[static_cast<size_t>(b)];
    return blk.from != kNone && i - 1 > blk.from && i - 1 < blk.ClauseEnd(blk.from) &&
           in.st.depth[i - 1] == blk.depth;
  }
  return false;
}

std::optional<Call> CallAt(const PassInput& in, size_t name) {
  const auto& t = in.tokens;
  if (name + 1 >= t.size() || !IsIdentifier(t[name]) || !IsOp(t[name + 1], "(")) {
    return std::nullopt;
  }
  Call c;
  c.name = name;
  c.open = name + 1;
  c.close = MatchingClose(t, c.open);
  if (c.close >= t.size()) return std::nullopt;
  c.args = SplitArgs(t, c.open, c.close);
  for (const auto& [a, b] : c.args) c.arg_text.emplace_back(TextOf(in.text, t, a, b));
  return c;
}

arrow::Status ErrorAt(const PassInput& in, size_t token, const std::string& message) {
  int line = 1, column = 1;
  if (token < in.tokens.size()) {
    line = in.tokens[token].line;
    column = in.tokens[token].column;
  }
  return arrow::Status::Invalid(message, " (query line ", line, ", column ", column, ")");
}

arrow::Result<int64_t> DurationArgMicros(const PassInput& in, std::pair<size_t, size_t> arg,
                                         std::string_view what) {
  const auto& t = in.tokens;
  auto [a, b] = arg;
  if (a >= b) return ErrorAt(in, a, std::string(what) + " is empty");
  IntervalValue v;
  if (b == a + 1 && IsStringToken(t[a])) {
    auto r = ParseIntervalText(StringValue(t[a]));
    if (!r.ok()) return ErrorAt(in, a, std::string(what) + ": " + r.status().message());
    v = *r;
  } else if (IsWord(t[a], "interval")) {
    auto r = ParseIntervalLiteral(t, a);
    if (!r.ok() || r->next != b) {
      return ErrorAt(in, a,
                     std::string(what) +
                         " must be a constant interval such as '10 seconds' or "
                         "INTERVAL 10 SECONDS");
    }
    v = r->value;
  } else {
    return ErrorAt(in, a,
                   std::string(what) +
                       " must be a constant interval such as '10 seconds' or "
                       "INTERVAL 10 SECONDS");
  }
  auto micros = FixedMicros(v);
  if (!micros.ok()) return ErrorAt(in, a, std::string(what) + ": " + micros.status().message());
  return *micros;
}

std::string WindowStartExpr(std::string_view ts, int64_t slide_us, int64_t offset_us) {
  std::string e = "epoch_us(" + std::string(ts) + ")";
  if (offset_us != 0) e = "(" + e + " - " + std::to_string(offset_us) + ")";
  const std::string s = std::to_string(slide_us);
  return AddMicros(ts, "-(((" + e + " % " + s + ") + " + s + ") % " + s + ")");
}

std::string AddMicros(std::string_view ts, std::string_view micros) {
  return std::string(kAddMicrosFunction) + "(" + std::string(ts) + ", " + std::string(micros) + ")";
}

std::string AddMicros(std::string_view ts, int64_t micros) {
  return AddMicros(ts, std::to_string(micros));
}

std::string SessionRelation(std::string_view relation, std::string_view alias,
                            std::string_view where, std::string_view ts,
                            const std::vector<std::string>& keys, int64_t gap_us,
                            std::string_view struct_name) {
  std::string part;
  for (const auto& k : keys) part += (part.empty() ? "" : ", ") + k;
  const std::string by = part.empty() ? "" : "PARTITION BY " + part + " ";
  const std::string by_sid = "PARTITION BY " + (part.empty() ? "" : part + ", ") + "__thund_sid";
  const std::string order = "ORDER BY " + std::string(ts);

  const std::string as = alias.empty() ? "" : " AS " + std::string(alias);
  std::string filter = "(" + std::string(ts) + ") IS NOT NULL";
  if (!where.empty()) filter = "(" + std::string(where) + ") AND " + filter;
  // A row starts a session when it is the first of its partition or comes
  // more than `gap` after the previous row (Spark merges windows that touch).
  std::string inner = "SELECT *, CASE WHEN lag(" + std::string(ts) + ") OVER (" + by + order +
                      ") IS NULL OR " + std::string(ts) + " > " +
                      AddMicros("lag(" + std::string(ts) + ") OVER (" + by + order + ")", gap_us) +
                      " THEN 1 ELSE 0 END AS __thund_new FROM " +
                      std::string(relation) + " WHERE " + filter;
  std::string numbered =
      "SELECT *, sum(__thund_new) OVER (" + by + order +
      " RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS __thund_sid FROM (" + inner + ")" +
      as;
  const std::string lo = "min(" + std::string(ts) + ") OVER (" + by_sid + ")";
  const std::string hi = AddMicros("max(" + std::string(ts) + ") OVER (" + by_sid + ")", gap_us);
  std::string cols = !struct_name.empty()
                         ? "{'start': " + lo + ", 'end': " + hi + "} AS " + std::string(struct_name)
                         : lo + " AS window_start, " + hi + " AS window_end";
  return "(SELECT * EXCLUDE (__thund_new, __thund_sid), " + cols + " FROM (" + numbered + ")" + as +
         ")";
}

}  // namespace sql

bool ReadsStream(std::string_view spark_sql) {
  sql::LexResult lex = sql::Lex(spark_sql);
  if (lex.error) return false;
  sql::Structure st = sql::Analyze(lex.tokens);
  const sql::PassInput in{spark_sql, lex.tokens, st};
  for (size_t i = 0; i + 1 < lex.tokens.size(); ++i) {
    if (sql::IsWord(lex.tokens[i], "stream") && sql::AtRelationStart(in, i)) return true;
  }
  return false;
}

std::vector<std::string> StreamReads(std::string_view spark_sql) {
  sql::LexResult lex = sql::Lex(spark_sql);
  if (lex.error) return {};
  sql::Structure st = sql::Analyze(lex.tokens);
  return sql::StreamReadsIn(sql::PassInput{spark_sql, lex.tokens, st});
}

arrow::Result<std::string> SparkToDuckDb(std::string_view spark_sql) {
  return sql::TranslateToDuckDb(spark_sql, /*hop_panes=*/false);
}

arrow::Result<std::string> SparkToDuckDbWindowBounded(std::string_view spark_sql) {
  return sql::TranslateToDuckDb(spark_sql, /*hop_panes=*/false, /*window_bounds=*/true);
}

namespace sql {

arrow::Result<std::string> TranslateToDuckDb(std::string_view spark_sql, bool hop_panes,
                                             bool window_bounds) {
  static constexpr sql::Pass kPasses[] = {
      sql::FileReadPass,  sql::LexicalPass,     sql::StreamPass,   sql::WatermarkPass,
      sql::IntervalPass,  sql::TypePass,        sql::FunctionPass, sql::OperatorPass,
      sql::WindowTvfPass, sql::WindowGroupPass, sql::TablePass};
  // Each pass runs until it has nothing left to rewrite; the whole sequence
  // runs again until the text settles, so the result is a fixed point (what
  // makes the translation idempotent even when one pass exposes a pattern to
  // an earlier one). Real queries settle in the first sequence.
  std::string text(spark_sql);
  for (int sequence = 0; sequence < 8; ++sequence) {
    const std::string before = text;
    for (sql::Pass pass : kPasses) {
      for (int round = 0;; ++round) {
        if (round > 200) {
          return arrow::Status::Invalid("the query is nested too deeply to translate");
        }
        sql::LexResult lex = sql::Lex(text);
        if (lex.error) {
          return arrow::Status::Invalid(lex.error->message, " (query line ", lex.error->line,
                                        ", column ", lex.error->column, ")");
        }
        sql::Structure st = sql::Analyze(lex.tokens);
        std::vector<sql::Edit> edits;
        ARROW_RETURN_NOT_OK(pass({text, lex.tokens, st, hop_panes, window_bounds}, &edits));
        if (edits.empty()) break;
        text = sql::ApplyEdits(text, sql::InnermostNonOverlapping(std::move(edits)));
        // A rewrite that keeps growing the text (fuzz_check_json: a mangled
        // window(...) grew a 428-byte query past 16 GB) stops here; real
        // translations stay within a few times the input.
        if (text.size() > 16 * spark_sql.size() + 65536) {
          return arrow::Status::Invalid(
              "the translation of this query does not settle (it keeps growing); check the "
              "query's window(...) and other Spark forms");
        }
      }
    }
    if (text == before) return text;
  }
  return arrow::Status::Invalid("the translation of this query does not settle; please report it");
}

}  // namespace sql

}  // namespace thund
