// Time windows: Spark's window() / session_window() grouping functions and
// the TUMBLE / HOP / SESSION window table functions.
//
// window(ts, size[, slide[, offset]]) becomes a struct column "window" with
// fields start / end (as in Spark), supplied by a LATERAL subquery appended to
// the block's FROM clause: one row per window the event falls in. Window starts
// are aligned to the epoch (plus offset) exactly as Spark computes them.
// session_window(ts, gap) wraps the block's single FROM relation in a derived
// table that numbers sessions with window functions.
#include <algorithm>

#include "sql/duckdb_parser.h"
#include "sql/plan_walk.h"
#include "sql/sql_dialect_internal.h"

namespace thund::sql {

std::string WindowBoundsSql(const PassInput& in, const std::string& end) {
  if (!in.window_bounds) return "";
  return " AND epoch_us(" + end + ") > getvariable('__thund_wlo') AND epoch_us(" + end +
         ") <= getvariable('__thund_whi')";
}

namespace {

struct WindowCall {
  bool session = false;
  std::string ts;
  int64_t size = 0, slide = 0, offset = 0, gap = 0;
  bool operator==(const WindowCall&) const = default;
};

arrow::Result<WindowCall> ParseWindowCall(const PassInput& in, const Call& c) {
  WindowCall w;
  w.session = IsWord(in.tokens[c.name], "session_window");
  const char* fn = w.session ? "session_window()" : "window()";
  const size_t max_args = w.session ? 2 : 4;
  if (c.args.size() < 2 || c.args.size() > max_args) {
    return ErrorAt(
        in, c.name,
        std::string(fn) + (w.session ? " takes (time_column, gap)"
                                     : " takes (time_column, size[, slide[, start_offset]])"));
  }
  w.ts = c.arg_text[0];
  if (w.session) {
    ARROW_ASSIGN_OR_RAISE(w.gap, DurationArgMicros(in, c.args[1], "the session_window() gap"));
    if (w.gap <= 0)
      return ErrorAt(in, c.args[1].first, "the session_window() gap must be positive");
    return w;
  }
  ARROW_ASSIGN_OR_RAISE(w.size, DurationArgMicros(in, c.args[1], "the window() size"));
  w.slide = w.size;
  if (c.args.size() >= 3) {
    ARROW_ASSIGN_OR_RAISE(w.slide, DurationArgMicros(in, c.args[2], "the window() slide"));
  }
  if (c.args.size() == 4) {
    ARROW_ASSIGN_OR_RAISE(w.offset, DurationArgMicros(in, c.args[3], "the window() start offset"));
  }
  if (w.size <= 0) return ErrorAt(in, c.args[1].first, "the window() size must be positive");
  if (w.slide <= 0) return ErrorAt(in, c.args[2].first, "the window() slide must be positive");
  if (w.slide > w.size) {
    return ErrorAt(in, c.args[2].first, "the window() slide must not exceed its size");
  }
  return w;
}

// Window starts of every window of `size` sliding by `slide` that holds ts, as
// a relation with one column `col`; with `panes`, only the newest of them.
std::string HopStarts(const std::string& ts, int64_t size, int64_t slide, int64_t offset,
                      const std::string& col, bool panes) {
  const int64_t n = panes ? 1 : (size + slide - 1) / slide;
  return "(SELECT " +
         AddMicros(WindowStartExpr(ts, slide, offset),
                   "-(__thund_i * " + std::to_string(slide) + ")") +
         " AS " + col + " FROM range(" + std::to_string(n) + ") AS __thund_r(__thund_i))";
}

// The single relation of a FROM clause [a, b): its core tokens and alias.
struct SingleRelation {
  size_t core_end = 0;
  std::string alias;  // "" for an unaliased subquery
};

std::optional<SingleRelation> SplitSingleRelation(const PassInput& in, size_t a, size_t b) {
  const auto& t = in.tokens;
  const int d = in.st.depth[a];
  for (size_t k = a; k < b; ++k) {
    if (in.st.depth[k] == d && (IsOp(t[k], ",") || IsWord(t[k], "join"))) return std::nullopt;
  }
  size_t k = a;
  SingleRelation r;
  // A parenthesis that does not close inside [a, b) (MatchingClose gives the
  // token count when it never closes): not a relation this pass can wrap.
  auto after_close = [&](size_t open) -> std::optional<size_t> {
    const size_t close = MatchingClose(t, open);
    if (close >= b) return std::nullopt;
    return close + 1;
  };
  if (IsOp(t[k], "(")) {
    auto next = after_close(k);
    if (!next) return std::nullopt;
    k = *next;
  } else {
    if (!IsIdentifier(t[k])) return std::nullopt;
    ++k;
    while (k + 1 < b && IsOp(t[k], ".") && IsIdentifier(t[k + 1])) k += 2;
    if (k < b && IsOp(t[k], "(")) {
      auto next = after_close(k);
      if (!next) return std::nullopt;
      k = *next;
    }
    r.alias = std::string(t[k - 1].text);
    if (IsOp(t[k - 1], ")")) r.alias.clear();
  }
  r.core_end = k;
  if (k < b && IsWord(t[k], "as")) ++k;
  if (k < b && IsIdentifier(t[k])) {
    r.alias = std::string(t[k].text);
    ++k;
  }
  if (k != b) return std::nullopt;
  return r;
}

// True when tokens [first, last] form a whole item of the block's SELECT list
// with no alias after it.
bool SelectItemWithoutAlias(const PassInput& in, const Block& blk, int owner, size_t first,
                            size_t last) {
  const auto& t = in.tokens;
  if (first == 0 || in.st.depth[first] != blk.depth || in.st.owner[first] != owner) return false;
  const size_t list_end = blk.from != kNone ? blk.from : blk.ClauseEnd(blk.select);
  if (first <= blk.select || last >= list_end) return false;
  const Token& prev = t[first - 1];
  const bool starts =
      first - 1 == blk.select || IsOp(prev, ",") || IsWord(prev, "distinct") || IsWord(prev, "all");
  const size_t next = last + 1;
  const bool ends = next == list_end || (next < t.size() && IsOp(t[next], ","));
  return starts && ends;
}

}  // namespace

arrow::Status WindowGroupPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  // The innermost block holding a window()/session_window() call.
  int best = -1;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (!(IsWord(t[i], "window") || IsWord(t[i], "session_window")) || !IsOp(t[i + 1], "("))
      continue;
    if (i > 0 && IsOp(t[i - 1], ".")) continue;
    int b = in.st.owner[i];
    if (b < 0) return ErrorAt(in, i, "window() is only allowed inside a SELECT");
    if (best < 0 || in.st.blocks[static_cast<size_t>(b)].depth >
                        in.st.blocks[static_cast<size_t>(best)].depth) {
      best = b;
    }
  }
  if (best < 0) return arrow::Status::OK();
  const Block& blk = in.st.blocks[static_cast<size_t>(best)];
  std::optional<WindowCall> spec;
  std::vector<Call> calls;
  for (size_t i = blk.select; i + 1 < blk.end; ++i) {
    if (in.st.owner[i] != best) continue;
    if (!(IsWord(t[i], "window") || IsWord(t[i], "session_window")) || !IsOp(t[i + 1], "("))
      continue;
    if (i > 0 && IsOp(t[i - 1], ".")) continue;
    auto c = CallAt(in, i);
    if (!c) return ErrorAt(in, i, "unbalanced parentheses in window()");
    ARROW_ASSIGN_OR_RAISE(WindowCall w, ParseWindowCall(in, *c));
    if (spec && !(*spec == w)) {
      return ErrorAt(in, i,
                     "a query block may use only one time window; this one differs from "
                     "the first window() of the block");
    }
    spec = w;
    calls.push_back(*c);
    i = c->close;
  }
  if (blk.from == kNone) return ErrorAt(in, calls.front().name, "window() needs a FROM clause");
  const size_t from_end = blk.ClauseEnd(blk.from);
  const std::string& ts = spec->ts;
  if (!spec->session && spec->slide == spec->size) {
    // Tumbling: the window struct is a plain expression of ts, substituted
    // for every window() call and every reference to the window column
    // (a projection; much faster in DuckDB than a LATERAL join).
    const std::string s = WindowStartExpr(ts, spec->size, spec->offset);
    const std::string e = "{'start': " + s + ", 'end': " + AddMicros(s, spec->size) + "}";
    for (const Call& c : calls) {
      const bool item = SelectItemWithoutAlias(in, blk, best, c.name, c.close);
      out->push_back({t[c.name].begin, t[c.close].end, e + (item ? " AS \"window\"" : "")});
    }
    for (size_t k = blk.select; k < blk.end; ++k) {
      if (in.st.owner[k] != best || t[k].kind != TokKind::kQuotedIdent ||
          IdentifierName(t[k]) != "window" || (k + 1 < t.size() && IsOp(t[k + 1], "("))) {
        continue;
      }
      if (k > 0 && IsOp(t[k - 1], ".")) continue;
      if (k + 2 < blk.end && IsOp(t[k + 1], ".") && IsIdentifier(t[k + 2])) {
        out->push_back({t[k].begin, t[k].end, "(" + e + ")"});
        if (SelectItemWithoutAlias(in, blk, best, k, k + 2)) {
          std::string field = IdentifierName(t[k + 2]);
          out->push_back({t[k + 2].end, t[k + 2].end, " AS \"" + field + "\""});
        }
        k += 2;
      } else {
        const bool item = SelectItemWithoutAlias(in, blk, best, k, k);
        out->push_back({t[k].begin, t[k].end, "(" + e + ")" + (item ? " AS \"window\"" : "")});
      }
    }
    // Spark leaves rows without event time out of every window.
    const std::string not_null =
        "(" + ts + ") IS NOT NULL" + WindowBoundsSql(in, AddMicros(s, spec->size));
    if (blk.where != kNone) {
      size_t w1 = blk.ClauseEnd(blk.where);
      out->push_back({t[blk.where + 1].begin, t[blk.where + 1].begin, "("});
      out->push_back({t[w1 - 1].end, t[w1 - 1].end, ") AND " + not_null});
    } else {
      out->push_back({t[from_end - 1].end, t[from_end - 1].end, " WHERE " + not_null});
    }
    return arrow::Status::OK();
  }
  const char* column = spec->session ? "session_window" : "\"window\"";
  for (const Call& c : calls) out->push_back({t[c.name].begin, t[c.close].end, column});
  if (!spec->session) {
    std::string lateral;
    if (spec->slide == spec->size) {
      std::string s = WindowStartExpr(ts, spec->size, spec->offset);
      lateral = "LATERAL (SELECT {'start': " + s + ", 'end': " + AddMicros(s, spec->size) +
                "} AS \"window\" WHERE (" + ts + ") IS NOT NULL" +
                WindowBoundsSql(in, AddMicros(s, spec->size)) + ") AS __thund_w";
    } else {
      lateral = "LATERAL (SELECT {'start': __thund_ws, 'end': " +
                AddMicros("__thund_ws", spec->size) + "} AS \"window\" FROM " +
                HopStarts(ts, spec->size, spec->slide, spec->offset, "__thund_ws", in.hop_panes) +
                " WHERE (" + ts + ") < " + AddMicros("__thund_ws", spec->size) +
                WindowBoundsSql(in, AddMicros("__thund_ws", spec->size)) + ") AS __thund_w";
    }
    size_t at = t[from_end - 1].end;
    out->push_back({at, at, ", " + lateral});
    return arrow::Status::OK();
  }
  // session_window(): wrap the single relation, partitioned by the other
  // GROUP BY expressions.
  auto rel = SplitSingleRelation(in, blk.from + 1, from_end);
  if (!rel) {
    return ErrorAt(in, blk.from + 1,
                   "session_window() needs a single relation in FROM; join in a subquery first");
  }
  std::vector<std::string> keys;
  if (blk.group_by != kNone) {
    size_t g0 = blk.group_by + 2, g1 = blk.ClauseEnd(blk.group_by);
    size_t start = g0;
    for (size_t k = g0; k <= g1; ++k) {
      if (k == g1 || (in.st.depth[k] == blk.depth && IsOp(t[k], ","))) {
        bool is_call =
            std::any_of(calls.begin(), calls.end(), [&](const Call& c) { return c.name == start; });
        if (!is_call && start < k) {
          if (k == start + 1 && t[start].kind == TokKind::kNumber) {
            return ErrorAt(in, start,
                           "with session_window(), GROUP BY keys must be expressions, "
                           "not column positions");
          }
          keys.emplace_back(TextOf(in.text, t, start, k));
        }
        start = k + 1;
      }
    }
  }
  std::string where;
  if (blk.where != kNone) {
    size_t w1 = blk.ClauseEnd(blk.where);
    where = std::string(TextOf(in.text, t, blk.where + 1, w1));
    out->push_back({t[blk.where].begin, t[w1 - 1].end, ""});
  }
  std::string core(TextOf(in.text, t, blk.from + 1, rel->core_end));
  std::string alias_text = rel->alias;
  out->push_back({t[blk.from + 1].begin, t[from_end - 1].end,
                  SessionRelation(core + (alias_text.empty() ? "" : " AS " + alias_text),
                                  alias_text, where, ts, keys, spec->gap, "session_window") +
                      (alias_text.empty() ? "" : " AS " + alias_text)});
  return arrow::Status::OK();
}

// TUMBLE(TABLE t, DESCRIPTOR(ts), size) / HOP(TABLE t, DESCRIPTOR(ts), slide,
// size) / SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap), also with
// named arguments (DATA =>, TIMECOL =>, SIZE =>, SLIDE =>, GAP =>) and the
// RisingWave form without TABLE / DESCRIPTOR.
namespace {

// One TUMBLE / HOP / SESSION call, its arguments read by position or name.
struct TvfCall {
  bool tumble = false, hop = false, session = false;
  std::string relation, ts;
  std::vector<std::string> keys;
  int64_t size = 0, slide = 0, gap = 0;
  size_t close = 0;  // token index of the call's ")"
};

// The window table function called at token i, nullopt when there is none.
arrow::Result<std::optional<TvfCall>> ParseTvfAt(const PassInput& in, size_t i) {
  const auto& t = in.tokens;
  TvfCall call;
  call.tumble = IsWord(t[i], "tumble");
  call.hop = IsWord(t[i], "hop");
  call.session = IsWord(t[i], "session");
  const bool tumble = call.tumble, hop = call.hop, session = call.session;
  if (!(tumble || hop || session) || !AtRelationStart(in, i)) return std::nullopt;
  auto c = CallAt(in, i);
  if (!c) return std::nullopt;
  call.close = c->close;
  const char* fn = tumble ? "TUMBLE" : hop ? "HOP" : "SESSION";
  // Arguments by position or by name.
  std::pair<size_t, size_t> data{0, 0}, timecol{0, 0}, size{0, 0}, slide{0, 0}, gap{0, 0};
  std::vector<std::pair<size_t, size_t>> positional;
  for (auto [a, b] : c->args) {
    if (b - a >= 3 && IsIdentifier(t[a]) && IsOp(t[a + 1], "=>")) {
      std::string key = ToLower(IdentifierName(t[a]));
      std::pair<size_t, size_t> v{a + 2, b};
      if (key == "data")
        data = v;
      else if (key == "timecol")
        timecol = v;
      else if (key == "size")
        size = v;
      else if (key == "slide")
        slide = v;
      else if (key == "gap")
        gap = v;
      else
        return ErrorAt(in, a, std::string(fn) + "() has no argument named " + key);
    } else {
      positional.push_back({a, b});
    }
  }
  std::vector<std::pair<size_t, size_t>*> order = {&data, &timecol};
  if (tumble) order.push_back(&size);
  if (hop) {
    order.push_back(&slide);
    order.push_back(&size);
  }
  if (session) order.push_back(&gap);
  for (size_t k = 0; k < positional.size() && k < order.size(); ++k) *order[k] = positional[k];
  for (auto* p : order) {
    if (p->first == p->second) {
      return ErrorAt(in, i,
                     std::string(fn) + "() takes " +
                         (tumble ? "(TABLE t, DESCRIPTOR(ts), size)"
                          : hop  ? "(TABLE t, DESCRIPTOR(ts), slide, size)"
                                 : "(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap)"));
    }
  }
  // The data argument: [TABLE] relation [PARTITION BY keys].
  size_t d0 = data.first, d1 = data.second;
  if (d0 < d1 && IsWord(t[d0], "table")) ++d0;
  if (d0 + 1 < d1 && IsWord(t[d0], "stream")) ++d0;  // TUMBLE(TABLE STREAM x, ...)
  for (size_t k = d0; k < d1; ++k) {
    if (IsWord(t[k], "partition") && k + 1 < d1 && IsWord(t[k + 1], "by")) {
      if (!session) return ErrorAt(in, k, std::string(fn) + "() does not take PARTITION BY");
      size_t p0 = k + 2;
      if (p0 < d1 && IsOp(t[p0], "(")) {
        size_t close = MatchingClose(t, p0);
        for (auto [a, b] : SplitArgs(t, p0, close)) {
          call.keys.emplace_back(TextOf(in.text, t, a, b));
        }
      } else {
        call.keys.emplace_back(TextOf(in.text, t, p0, d1));
      }
      d1 = k;
      break;
    }
  }
  if (d0 >= d1) return ErrorAt(in, i, std::string(fn) + "() needs a table: TABLE name");
  call.relation = std::string(TextOf(in.text, t, d0, d1));
  if (IsOp(t[d0], "(") && MatchingClose(t, d0) == d1 - 1 && d1 - d0 >= 3 &&
      !IsWord(t[d0 + 1], "select") && !IsWord(t[d0 + 1], "with")) {
    call.relation = std::string(TextOf(in.text, t, d0 + 1, d1 - 1));  // TABLE (name)
  }
  size_t c0 = timecol.first, c1 = timecol.second;
  if (IsWord(t[c0], "descriptor") && c0 + 1 < c1 && IsOp(t[c0 + 1], "(")) {
    c1 = MatchingClose(t, c0 + 1);
    c0 += 2;
  }
  call.ts = std::string(TextOf(in.text, t, c0, c1));
  if (session) {
    ARROW_ASSIGN_OR_RAISE(call.gap, DurationArgMicros(in, gap, "the SESSION() gap"));
    if (call.gap <= 0) return ErrorAt(in, gap.first, "the SESSION() gap must be positive");
    return call;
  }
  ARROW_ASSIGN_OR_RAISE(call.size,
                        DurationArgMicros(in, size, std::string("the ") + fn + "() size"));
  call.slide = call.size;
  if (hop) {
    ARROW_ASSIGN_OR_RAISE(call.slide, DurationArgMicros(in, slide, "the HOP() slide"));
  }
  if (call.size <= 0 || call.slide <= 0) {
    return ErrorAt(in, i, std::string(fn) + "() sizes must be positive");
  }
  if (call.slide > call.size) {
    return ErrorAt(in, slide.first, "the HOP() slide must not exceed its size");
  }
  return call;
}

}  // namespace

// TUMBLE(TABLE t, DESCRIPTOR(ts), size) / HOP(TABLE t, DESCRIPTOR(ts), slide,
// size) / SESSION(TABLE t [PARTITION BY k], DESCRIPTOR(ts), gap), also with
// named arguments (DATA =>, TIMECOL =>, SIZE =>, SLIDE =>, GAP =>) and the
// RisingWave form without TABLE / DESCRIPTOR.
arrow::Status WindowTvfPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    ARROW_ASSIGN_OR_RAISE(std::optional<TvfCall> call, ParseTvfAt(in, i));
    if (!call) continue;
    const std::string& relation = call->relation;
    const std::string& ts = call->ts;
    std::string repl;
    if (call->session) {
      repl = SessionRelation(relation, "", "", ts, call->keys, call->gap, "");
    } else if (call->tumble) {
      std::string s = WindowStartExpr(ts, call->size, 0);
      repl = "(SELECT *, " + s + " AS window_start, " + AddMicros(s, call->size) +
             " AS window_end FROM " + relation + " WHERE (" + ts + ") IS NOT NULL" +
             WindowBoundsSql(in, AddMicros(s, call->size)) + ")";
    } else {
      // Each row times the window count (a cross join with a constant range:
      // DuckDB runs that about twice as fast as a LATERAL subquery), then
      // only the windows that hold the row.
      const int64_t n = in.hop_panes ? 1 : (call->size + call->slide - 1) / call->slide;
      repl = "(SELECT * EXCLUDE (__thund_i, __thund_ws), __thund_ws AS window_start, " +
             AddMicros("__thund_ws", call->size) + " AS window_end FROM (SELECT *, " +
             AddMicros(WindowStartExpr(ts, call->slide, 0),
                       "-(__thund_i * " + std::to_string(call->slide) + ")") +
             " AS __thund_ws FROM " + relation + " CROSS JOIN range(" + std::to_string(n) +
             ") AS __thund_r(__thund_i)) WHERE (" + ts + ") < " +
             AddMicros("__thund_ws", call->size) +
             WindowBoundsSql(in, AddMicros("__thund_ws", call->size)) + ")";
    }
    out->push_back({t[i].begin, t[call->close].end, repl});
    i = call->close;
  }
  return arrow::Status::OK();
}

}  // namespace thund::sql

namespace thund::sql {

namespace {

plan::TextPos PosOf(std::string_view text, size_t offset) {
  const internal::TextPosition p = internal::PositionOf(text, offset);
  return {p.line, p.column};
}

}  // namespace

std::vector<plan::WindowInfo> WindowUses(std::string_view spark_sql) {
  LexResult lex = Lex(spark_sql);
  if (lex.error) return {};
  Structure st = Analyze(lex.tokens);
  const PassInput in{spark_sql, lex.tokens, st};
  const auto& t = lex.tokens;
  // (sort key, window): a window() belongs to its block and is keyed by the
  // block's end; a table function by its closing parenthesis. The plan walk
  // meets them in that order (inner blocks before the blocks around them).
  std::vector<std::pair<size_t, plan::WindowInfo>> found;
  std::vector<int> blocks_seen;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if ((IsWord(t[i], "window") || IsWord(t[i], "session_window")) && IsOp(t[i + 1], "(") &&
        !(i > 0 && IsOp(t[i - 1], "."))) {
      const int b = st.owner[i];
      if (b < 0 || std::find(blocks_seen.begin(), blocks_seen.end(), b) != blocks_seen.end()) {
        continue;
      }
      auto c = CallAt(in, i);
      if (!c) continue;
      auto w = ParseWindowCall(in, *c);
      if (!w.ok()) continue;
      blocks_seen.push_back(b);
      plan::WindowInfo info;
      info.time_column = w->ts;
      if (w->session) {
        info.shape = plan::WindowShape::kSession;
        info.gap_us = w->gap;
        info.output_columns = {"session_window"};
      } else {
        info.shape = w->slide == w->size ? plan::WindowShape::kTumbling
                                         : plan::WindowShape::kHopping;
        info.size_us = w->size;
        info.slide_us = w->slide;
        info.offset_us = w->offset;
        info.output_columns = {"window"};
      }
      info.pos = PosOf(spark_sql, t[i].begin);
      found.emplace_back(st.blocks[static_cast<size_t>(b)].end, std::move(info));
      continue;
    }
    auto tvf = ParseTvfAt(in, i);
    if (!tvf.ok() || !*tvf) continue;
    const TvfCall& call = **tvf;
    plan::WindowInfo info;
    info.from_table_function = true;
    info.time_column = call.ts;
    info.output_columns = {"window_start", "window_end"};
    if (call.session) {
      info.shape = plan::WindowShape::kSession;
      info.gap_us = call.gap;
      info.partition_keys = call.keys;
    } else {
      info.shape = call.hop ? plan::WindowShape::kHopping : plan::WindowShape::kTumbling;
      info.size_us = call.size;
      info.slide_us = call.slide;
    }
    info.pos = PosOf(spark_sql, t[i].begin);
    found.emplace_back(call.close, std::move(info));
  }
  std::stable_sort(found.begin(), found.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<plan::WindowInfo> out;
  for (auto& [key, w] : found) out.push_back(std::move(w));
  return out;
}

}  // namespace thund::sql
