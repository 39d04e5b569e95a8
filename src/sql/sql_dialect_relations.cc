// Relation-level translations: STREAM reads, WATERMARK clauses, stream read
// options, range(), read_files() and LATERAL VIEW.
#include <algorithm>

#include "sql/sql_dialect_internal.h"

namespace thund::sql {
namespace {

bool IsClauseWord(const Token& t) {
  static constexpr std::string_view kWords[] = {
      "where",     "group",  "order",   "limit",   "join",    "left",        "right",     "inner",
      "full",      "cross",  "natural", "on",      "using",   "as",          "union",     "except",
      "intersect", "having", "window",  "qualify", "lateral", "tablesample", "watermark", "pivot",
      "unpivot",   "with",   "semi",    "anti",    "outer",   "offset",      "minus"};
  for (auto w : kWords) {
    if (IsWord(t, w)) return true;
  }
  return false;
}

// True when tokens [a, b) are a (possibly qualified) name.
bool IsQualifiedName(const std::vector<Token>& t, size_t a, size_t b) {
  if (a >= b) return false;
  for (size_t k = a; k < b; ++k) {
    bool want_ident = (k - a) % 2 == 0;
    if (want_ident ? !IsIdentifier(t[k]) : !IsOp(t[k], ".")) return false;
  }
  return (b - a) % 2 == 1;
}

bool InFromClause(const PassInput& in, size_t i) {
  int b = in.st.owner[i];
  if (b < 0) return false;
  const Block& blk = in.st.blocks[static_cast<size_t>(b)];
  return blk.from != kNone && i > blk.from && i < blk.ClauseEnd(blk.from) &&
         in.st.depth[i] == blk.depth;
}

// First token of the relation that ends just before `i` in a FROM clause.
size_t RelationStart(const PassInput& in, size_t i) {
  const auto& t = in.tokens;
  const int d = in.st.depth[i];
  size_t k = i;
  while (k > 0) {
    size_t p = k - 1;
    if (in.st.depth[p] == d && (IsWord(t[p], "from") || IsWord(t[p], "join") || IsOp(t[p], ",") ||
                                IsWord(t[p], "lateral"))) {
      break;
    }
    k = p;
  }
  return k;
}

// The table alias at tokens[i] ("AS x" or "x"), as [first, last) or empty.
std::pair<size_t, size_t> AliasAt(const std::vector<Token>& t, size_t i) {
  if (i < t.size() && IsWord(t[i], "as") && i + 1 < t.size() && IsIdentifier(t[i + 1])) {
    return {i, i + 2};
  }
  if (i < t.size() && IsIdentifier(t[i]) && !IsClauseWord(t[i])) return {i, i + 1};
  return {i, i};
}

}  // namespace

std::vector<std::string> StreamReadsIn(const PassInput& in) {
  const auto& t = in.tokens;
  std::vector<std::string> out;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (!IsWord(t[i], "stream") || !AtRelationStart(in, i)) continue;
    size_t a = i + 1, b = i + 1;
    if (IsOp(t[i + 1], "(")) {
      const size_t close = MatchingClose(t, i + 1);
      if (close >= t.size() || !IsQualifiedName(t, i + 2, close)) continue;
      a = i + 2;
      b = close;
    } else if (IsIdentifier(t[i + 1]) && !IsClauseWord(t[i + 1])) {
      b = i + 2;
      while (b + 1 < t.size() && IsOp(t[b], ".") && IsIdentifier(t[b + 1])) b += 2;
    }
    std::string name;
    for (size_t k = a; k < b; ++k) {
      name += IsOp(t[k], ".") ? std::string(".") : ToLower(IdentifierName(t[k]));
    }
    if (!name.empty()) out.push_back(std::move(name));
  }
  return out;
}

// FROM STREAM(x) / FROM STREAM x -> FROM x; a stream read's WITH (options)
// is dropped (thund reads the whole dataset on every trigger).
arrow::Status StreamPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    if (IsWord(t[i], "stream") && AtRelationStart(in, i)) {
      if (IsOp(t[i + 1], "(")) {
        size_t close = MatchingClose(t, i + 1);
        if (close < t.size() && IsQualifiedName(t, i + 2, close)) {
          out->push_back({t[i].begin, t[close].end, std::string(TextOf(in.text, t, i + 2, close))});
        }
      } else if (IsIdentifier(t[i + 1]) && !IsClauseWord(t[i + 1])) {
        out->push_back({t[i].begin, t[i + 1].begin, ""});
      }
    }
    if (IsWord(t[i], "with") && IsOp(t[i + 1], "(") && i > 0 && IsIdentifier(t[i - 1]) &&
        InFromClause(in, i)) {
      size_t close = MatchingClose(t, i + 1);
      if (close < t.size()) out->push_back({t[i - 1].end, t[close].end, ""});
    }
  }
  return arrow::Status::OK();
}

// relation WATERMARK col DELAY OF INTERVAL ...  -> relation
// relation WATERMARK expr AS col DELAY OF ...   -> (SELECT *, expr AS col FROM relation) alias
// The watermark itself becomes the flow's StreamingSpec (authoring/sql).
arrow::Status WatermarkPass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 1; i < t.size(); ++i) {
    if (!IsWord(t[i], "watermark")) continue;
    const int d = in.st.depth[i];
    size_t delay = kNone;
    for (size_t j = i + 1; j + 1 < t.size() && in.st.depth[j] >= d; ++j) {
      if (in.st.depth[j] == d && IsWord(t[j], "delay") && IsWord(t[j + 1], "of")) {
        delay = j;
        break;
      }
    }
    if (delay == kNone || delay == i + 1) {
      return ErrorAt(
          in, i, "WATERMARK needs a column and a delay: WATERMARK ts DELAY OF INTERVAL 10 SECONDS");
    }
    if (delay + 2 >= t.size() || !IsWord(t[delay + 2], "interval")) {
      return ErrorAt(in, delay,
                     "WATERMARK ... DELAY OF needs an interval, e.g. INTERVAL 10 SECONDS");
    }
    auto lit = ParseIntervalLiteral(t, delay + 2);
    if (!lit.ok()) return ErrorAt(in, delay + 2, "WATERMARK delay: " + lit.status().message());
    const size_t next = lit->next;
    if (IsQualifiedName(t, i + 1, delay)) {
      out->push_back({t[i - 1].end, t[next - 1].end, ""});
      continue;
    }
    if (!(delay >= i + 3 && IsWord(t[delay - 2], "as") && IsIdentifier(t[delay - 1]))) {
      return ErrorAt(
          in, i + 1,
          "a WATERMARK expression needs a name: WATERMARK <expression> AS <column> DELAY OF ...");
    }
    const size_t rs = RelationStart(in, i);
    std::string relation(TextOf(in.text, t, rs, i));
    std::string expr(TextOf(in.text, t, i + 1, delay - 2));
    std::string name(t[delay - 1].text);
    std::string alias;
    auto [a0, a1] = AliasAt(t, next);
    if (a0 == a1) {
      if (IsQualifiedName(t, rs, i)) alias = " AS " + std::string(t[i - 1].text);
    }
    out->push_back({t[rs].begin, t[next - 1].end,
                    "(SELECT *, " + expr + " AS " + name + " FROM " + relation + ")" + alias});
  }
  return arrow::Status::OK();
}

arrow::Status TablePass(const PassInput& in, std::vector<Edit>* out) {
  const auto& t = in.tokens;
  for (size_t i = 0; i + 1 < t.size(); ++i) {
    // Spark's range(n) yields a column named id.
    if (IsWord(t[i], "range") && AtRelationStart(in, i)) {
      auto call = CallAt(in, i);
      if (!call) continue;
      auto [a0, a1] = AliasAt(t, call->close + 1);
      if (a1 < t.size() && IsOp(t[a1], "(")) continue;  // already has a column list
      if (call->args.empty() || call->args.size() > 4) continue;
      std::string args;
      for (size_t k = 0; k < std::min<size_t>(3, call->args.size()); ++k) {
        args += (k ? ", " : "") + call->arg_text[k];
      }
      std::string alias = a0 == a1 ? "range" : IdentifierName(t[a1 - 1]);
      size_t end = a0 == a1 ? call->close : a1 - 1;
      out->push_back(
          {t[i].begin, t[end].end,
           "range(" + args + ") AS " + (a0 == a1 ? alias : std::string(t[a1 - 1].text)) + "(id)"});
      continue;
    }
    // read_files(path, format => 'csv', ...) read as a batch.
    if (IsWord(t[i], "read_files") && AtRelationStart(in, i)) {
      auto call = CallAt(in, i);
      if (!call || call->args.empty()) continue;
      std::string format;
      std::vector<std::string> options;
      for (size_t k = 1; k < call->args.size(); ++k) {
        auto [a, b] = call->args[k];
        if (b - a < 3 || !IsOp(t[a + 1], "=>")) {
          return ErrorAt(in, a, "read_files options are written name => value");
        }
        std::string key = ToLower(IdentifierName(t[a]));
        std::string value(TextOf(in.text, t, a + 2, b));
        if (key == "format") {
          if (b != a + 3 || !IsStringToken(t[a + 2])) {
            return ErrorAt(in, a + 2, "read_files format must be a string such as 'json'");
          }
          format = ToLower(StringValue(t[a + 2]));
          continue;
        }
        if (key == "sep" || key == "delimiter") key = "delim";
        if (key == "nullvalue") key = "nullstr";
        if (key == "inferschema" || key == "multiline" || key == "schemahints") continue;
        options.push_back(key + " = " + value);
      }
      if (format.empty()) {
        std::string path =
            IsStringToken(t[call->args[0].first]) ? StringValue(t[call->args[0].first]) : "";
        for (const char* ext : {"parquet", "csv", "json"}) {
          std::string suffix = std::string(".") + ext;
          if (path.size() >= suffix.size() &&
              ToLower(path.substr(path.size() - suffix.size())) == suffix) {
            format = ext;
          }
        }
        if (path.size() >= 6 && ToLower(path.substr(path.size() - 6)) == ".jsonl") format = "json";
      }
      if (format != "parquet" && format != "csv" && format != "json") {
        return ErrorAt(in, i, "read_files needs format => 'parquet', 'csv' or 'json'");
      }
      std::string repl = "read_" + format + "(" + call->arg_text[0];
      for (const auto& o : options) repl += ", " + o;
      out->push_back({t[i].begin, t[call->close].end, repl + ")"});
      continue;
    }
    // LATERAL VIEW [OUTER] explode(e) tbl [AS] col  /  posexplode(e) tbl AS pos, col
    if (IsWord(t[i], "lateral") && IsWord(t[i + 1], "view")) {
      size_t f = i + 2;
      bool outer = f < t.size() && IsWord(t[f], "outer");
      if (outer) ++f;
      auto call = CallAt(in, f);
      if (!call || call->args.size() != 1) continue;
      std::string fn = ToLower(t[f].text);
      bool pos = fn == "posexplode" || fn == "posexplode_outer";
      if (!(pos || fn == "explode" || fn == "explode_outer")) continue;
      outer = outer || fn.find("_outer") != std::string::npos;
      size_t k = call->close + 1;
      if (k >= t.size() || !IsIdentifier(t[k])) continue;
      std::string table(t[k].text);
      ++k;
      if (k < t.size() && IsWord(t[k], "as")) ++k;
      std::vector<std::string> cols;
      while (k < t.size() && IsIdentifier(t[k]) && !IsClauseWord(t[k])) {
        cols.emplace_back(t[k].text);
        ++k;
        if (k < t.size() && IsOp(t[k], ",") && k + 1 < t.size() && IsIdentifier(t[k + 1]) &&
            !IsClauseWord(t[k + 1]) && cols.size() < (pos ? 2u : 1u)) {
          ++k;
        } else {
          break;
        }
      }
      if (cols.size() != (pos ? 2u : 1u)) continue;
      const std::string& e = call->arg_text[0];
      std::string select = pos ? "generate_subscripts(" + e + ", 1) - 1 AS " + cols[0] +
                                     ", unnest(" + e + ") AS " + cols[1]
                               : "unnest(" + e + ") AS " + cols[0];
      std::string repl = (outer ? "LEFT JOIN LATERAL (SELECT " : "CROSS JOIN LATERAL (SELECT ") +
                         select + ") AS " + table + (outer ? " ON true" : "");
      out->push_back({t[i].begin, t[k - 1].end, repl});
    }
  }
  return arrow::Status::OK();
}

}  // namespace thund::sql
