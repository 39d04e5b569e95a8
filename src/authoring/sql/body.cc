// What a query body implies for the IR: a whole-query source read, the
// watermark of a WATERMARK clause, the time window of window() /
// session_window() / TUMBLE / HOP / SESSION, and whether it reads a STREAM.
#include "authoring/sql/sql_internal.h"
#include "sql/sql_dialect_internal.h"

namespace thund::sqlp {
namespace {

using sql::IsOp;
using sql::IsWord;

BodyResult Problem(std::string message, size_t offset, std::string hint = "") {
  BodyResult r;
  r.problem = BodyProblem{std::move(message), std::move(hint), offset};
  return r;
}

bool IsQualifiedName(const std::vector<Token>& t, size_t a, size_t b) {
  if (a >= b || (b - a) % 2 == 0) return false;
  for (size_t k = a; k < b; ++k) {
    if ((k - a) % 2 == 0 ? !sql::IsIdentifier(t[k]) : !IsOp(t[k], ".")) return false;
  }
  return true;
}

// The column a time argument names: the last part of a (qualified) name, or
// the expression text.
std::string ColumnOf(std::string_view text, const std::vector<Token>& t, size_t a, size_t b) {
  if (IsQualifiedName(t, a, b)) return sql::IdentifierName(t[b - 1]);
  return std::string(sql::TextOf(text, t, a, b));
}

// Milliseconds of a duration argument ('10 seconds' / INTERVAL ...).
arrow::Result<int64_t> DurationMs(const std::vector<Token>& t, size_t a, size_t b) {
  sql::IntervalValue v;
  if (b == a + 1 && sql::IsStringToken(t[a])) {
    ARROW_ASSIGN_OR_RAISE(v, sql::ParseIntervalText(sql::StringValue(t[a])));
  } else if (a < b && IsWord(t[a], "interval")) {
    ARROW_ASSIGN_OR_RAISE(auto lit, sql::ParseIntervalLiteral(t, a));
    if (lit.next != b) return arrow::Status::Invalid("unexpected text after the interval");
    v = lit.value;
  } else {
    return arrow::Status::Invalid(
        "expected a constant interval such as '10 seconds' or INTERVAL 10 SECONDS");
  }
  ARROW_ASSIGN_OR_RAISE(int64_t us, sql::FixedMicros(v));
  if (us % 1000 != 0)
    return arrow::Status::Invalid("thund time windows have millisecond precision");
  return us / 1000;
}

}  // namespace

BodyResult AnalyzeBody(std::string_view body) {
  sql::LexResult lex = sql::Lex(body);
  if (lex.error) return Problem(lex.error->message, lex.error->offset);
  const auto& t = lex.tokens;
  if (t.empty()) return Problem("the query is empty", 0, "write a SELECT");
  sql::Structure st = sql::Analyze(t);
  sql::PassInput in{body, t, st};
  BodyResult r;
  BodyInfo& info = r.info;

  // SELECT * FROM [STREAM] read_x(...) [[AS] alias]: a source flow.
  {
    size_t k = 0;
    if (t.size() >= 6 && IsWord(t[0], "select") && IsOp(t[1], "*") && IsWord(t[2], "from")) {
      k = 3;
      bool stream = false;
      if (IsWord(t[k], "stream") && k + 1 < t.size() && sql::IsIdentifier(t[k + 1])) {
        stream = true;
        ++k;
      }
      if (k + 1 < t.size() && t[k].kind == TokKind::kIdent && IsSourceFunction(t[k].text) &&
          IsOp(t[k + 1], "(")) {
        size_t close = sql::MatchingClose(t, k + 1);
        size_t end = close + 1;
        if (end < t.size() && IsWord(t[end], "as")) ++end;
        if (end < t.size() && sql::IsIdentifier(t[end])) ++end;
        const bool streaming_only = !IsWord(t[k], "read_files");
        // A batch read_files(...) stays SQL (DuckDB's reader runs it); a
        // batch file source is written SOURCE read_files(...).
        if (close < t.size() && end == t.size() && (stream || streaming_only)) {
          size_t at = k;
          auto src = ParseSourceCall(body, t, k, close, stream || streaming_only, &at);
          if (!src.ok())
            return Problem(src.status().message(), t[std::min(at, t.size() - 1)].begin);
          info.source = *src;
          return r;
        }
      }
    }
  }

  bool window_taken = false;
  for (size_t i = 0; i < t.size(); ++i) {
    const Token& tok = t[i];
    // Source functions anywhere else.
    if (tok.kind == TokKind::kIdent && IsSourceFunction(tok.text) && i + 1 < t.size() &&
        IsOp(t[i + 1], "(") && !(i > 0 && IsOp(t[i - 1], "."))) {
      const bool streamed = i > 0 && IsWord(t[i - 1], "stream");
      if (streamed || !IsWord(tok, "read_files")) {
        return Problem(std::string(tok.text) + "() must be the whole query of its flow", tok.begin,
                       "declare it alone (CREATE STREAMING TABLE raw AS SELECT * FROM STREAM " +
                           std::string(tok.text) +
                           "(...)) and select from that table in another statement");
      }
    }
    if (IsWord(tok, "stream") && i + 1 < t.size() &&
        (IsOp(t[i + 1], "(") || sql::IsIdentifier(t[i + 1])) &&
        (sql::AtRelationStart(in, i) || (i > 0 && IsWord(t[i - 1], "table")))) {
      info.reads_stream = true;
    }
    if (IsWord(tok, "watermark") && i > 0 && !IsOp(t[i - 1], ".") && !IsOp(t[i - 1], ",") &&
        !IsWord(t[i - 1], "select")) {
      size_t delay = sql::kNone;
      for (size_t j = i + 1; j + 1 < t.size() && st.depth[j] >= st.depth[i]; ++j) {
        if (st.depth[j] == st.depth[i] && IsWord(t[j], "delay") && IsWord(t[j + 1], "of")) {
          delay = j;
          break;
        }
      }
      if (delay == sql::kNone || delay == i + 1) {
        return Problem("WATERMARK needs a column and a delay", tok.begin,
                       "write WATERMARK ts DELAY OF INTERVAL 10 SECONDS");
      }
      std::string column;
      if (IsQualifiedName(t, i + 1, delay)) {
        column = sql::IdentifierName(t[delay - 1]);
      } else if (delay >= i + 3 && IsWord(t[delay - 2], "as") && sql::IsIdentifier(t[delay - 1])) {
        column = sql::IdentifierName(t[delay - 1]);
      } else {
        return Problem("a WATERMARK expression needs a name", t[i + 1].begin,
                       "write WATERMARK <expression> AS <column> DELAY OF ...");
      }
      if (delay + 2 >= t.size() || !IsWord(t[delay + 2], "interval")) {
        return Problem("WATERMARK ... DELAY OF needs an interval", t[delay].begin,
                       "write DELAY OF INTERVAL 10 SECONDS");
      }
      auto lit = sql::ParseIntervalLiteral(t, delay + 2);
      if (!lit.ok())
        return Problem("WATERMARK delay: " + lit.status().message(), t[delay + 2].begin);
      auto us = sql::FixedMicros(lit->value);
      if (!us.ok() || *us % 1000 != 0) {
        return Problem("WATERMARK delay must be a whole number of milliseconds, not months",
                       t[delay + 2].begin);
      }
      if (info.watermark) {
        info.warnings.push_back("thund keeps one watermark per flow; the WATERMARK on '" + column +
                                "' is used only for translation");
      } else {
        info.watermark = Watermark{column, *us / 1000, std::nullopt};
      }
      i = lit->next - 1;
      continue;
    }
    // window(ts, size[, slide[, offset]]) / session_window(ts, gap)
    if ((IsWord(tok, "window") || IsWord(tok, "session_window")) && i + 1 < t.size() &&
        IsOp(t[i + 1], "(") && !(i > 0 && IsOp(t[i - 1], "."))) {
      auto call = sql::CallAt(in, i);
      if (!call) return Problem("unbalanced parentheses", tok.begin);
      const bool session = IsWord(tok, "session_window");
      const auto& a = call->args;
      if (a.size() < 2 || a.size() > (session ? 2u : 4u)) {
        return Problem(session ? "session_window() takes (time_column, gap)"
                               : "window() takes (time_column, size[, slide[, start_offset]])",
                       tok.begin);
      }
      WindowSpec w;
      w.time_column = ColumnOf(body, t, a[0].first, a[0].second);
      auto d1 = DurationMs(t, a[1].first, a[1].second);
      if (!d1.ok())
        return Problem(std::string(tok.text) + "(): " + d1.status().message(), t[a[1].first].begin);
      if (session) {
        w.kind = WindowKind::kSession;
        w.gap_ms = *d1;
      } else if (a.size() >= 3) {
        auto d2 = DurationMs(t, a[2].first, a[2].second);
        if (!d2.ok())
          return Problem("window() slide: " + d2.status().message(), t[a[2].first].begin);
        w = WindowSpec::Hopping(w.time_column, *d1, *d2);
        if (a.size() == 4) {
          info.warnings.push_back(
              "the window() start offset is applied when the query runs but "
              "is not part of the flow's window spec");
        }
      } else {
        w = WindowSpec::Tumbling(w.time_column, *d1);
      }
      if (!window_taken) {
        info.window = w;
        window_taken = true;
      } else if (!(*info.window == w)) {
        info.warnings.push_back(
            "the flow has more than one time window; its window spec is the first");
      }
      i = call->close;
      continue;
    }
    // TUMBLE / HOP / SESSION window table functions.
    if ((IsWord(tok, "tumble") || IsWord(tok, "hop") || IsWord(tok, "session")) &&
        sql::AtRelationStart(in, i)) {
      auto call = sql::CallAt(in, i);
      if (!call) continue;
      std::pair<size_t, size_t> data{0, 0}, col{0, 0}, d1{0, 0}, d2{0, 0};
      std::vector<std::pair<size_t, size_t>> pos;
      for (auto [x, y] : call->args) {
        if (y - x >= 3 && sql::IsIdentifier(t[x]) && IsOp(t[x + 1], "=>")) {
          std::string key = sql::ToLower(sql::IdentifierName(t[x]));
          std::pair<size_t, size_t> v{x + 2, y};
          if (key == "data")
            data = v;
          else if (key == "timecol")
            col = v;
          else if (key == "size")
            (IsWord(tok, "hop") ? d2 : d1) = v;
          else if (key == "slide")
            d1 = v;
          else if (key == "gap")
            d1 = v;
        } else {
          pos.push_back({x, y});
        }
      }
      std::vector<std::pair<size_t, size_t>*> order = {&data, &col, &d1, &d2};
      for (size_t k = 0; k < pos.size() && k < order.size(); ++k) *order[k] = pos[k];
      if (col.first == col.second || d1.first == d1.second) continue;  // the translation reports it
      (void)data;
      size_t c0 = col.first, c1 = col.second;
      if (IsWord(t[c0], "descriptor") && c0 + 1 < c1) {
        c1 = sql::MatchingClose(t, c0 + 1);
        c0 += 2;
      }
      WindowSpec w;
      w.time_column = ColumnOf(body, t, c0, c1);
      auto v1 = DurationMs(t, d1.first, d1.second);
      if (!v1.ok())
        return Problem(std::string(tok.text) + "(): " + v1.status().message(), t[d1.first].begin);
      if (IsWord(tok, "tumble")) {
        w = WindowSpec::Tumbling(w.time_column, *v1);
      } else if (IsWord(tok, "session")) {
        w = WindowSpec::Session(w.time_column, *v1);
      } else {
        if (d2.first == d2.second) continue;
        auto v2 = DurationMs(t, d2.first, d2.second);
        if (!v2.ok()) return Problem("HOP(): " + v2.status().message(), t[d2.first].begin);
        w = WindowSpec::Hopping(w.time_column, *v2, *v1);  // HOP(data, col, slide, size)
      }
      if (!window_taken) {
        info.window = w;
        window_taken = true;
      }
      // TUMBLE(TABLE STREAM x, ...) reads a stream.
      for (size_t k = call->open; k < call->close; ++k) {
        if (IsWord(t[k], "stream")) info.reads_stream = true;
      }
    }
  }
  return r;
}

std::optional<StreamingSpec> ImpliedStreaming(const BodyInfo& info) {
  if (!info.watermark && !(info.window && info.reads_stream)) return std::nullopt;
  StreamingSpec s;
  s.watermark = info.watermark;
  s.window = info.window;
  return s;
}

}  // namespace thund::sqlp
