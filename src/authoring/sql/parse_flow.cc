// CREATE FLOW name AS INSERT INTO target BY NAME <query>
// CREATE FLOW name AS AUTO CDC INTO target FROM <source> KEYS (...) ...
// and query bodies (shared with CREATE <dataset> ... AS <query>).
#include <charconv>
#include <set>

#include "authoring/sql/parser.h"

namespace thund::sqlp {
namespace {

bool IsCdcClause(const Token& t) {
  for (std::string_view w : {"keys", "ignore", "apply", "sequence", "columns", "stored", "track"}) {
    if (sql::IsWord(t, w)) return true;
  }
  return false;
}

}  // namespace

bool StatementParser::Flow() {
  if (IsWord("if") && IsWord("not", 1) && IsWord("exists", 2)) {
    return FailHere("CREATE FLOW does not take IF NOT EXISTS", "remove IF NOT EXISTS",
                    "sdp-refused");
  }
  const size_t name_tok = pos_;
  std::string name;
  size_t parts = 0;
  if (!QualifiedName(&name, &parts)) return false;
  if (parts > 1) {
    return Fail(name_tok, "a flow name is a single identifier, not '" + name + "'",
                "only the target may be qualified: CREATE FLOW my_flow AS INSERT INTO "
                "schema.table BY NAME ...",
                "sdp-refused");
  }
  thund::Flow f;
  f.name = name;
  f.location = ctx_->Loc(name_tok);
  std::vector<Option> with;
  std::set<std::string> seen;
  while (!AtEnd() && !IsWord("as")) {
    const size_t at = pos_;
    if (Word("comment")) {
      if (!seen.insert("COMMENT").second) return Fail(at, "COMMENT is given twice in CREATE FLOW");
      if (!StringLit(&f.comment, "COMMENT")) return false;
    } else if (Word("with")) {
      if (!seen.insert("WITH").second) return Fail(at, "WITH is given twice in CREATE FLOW");
      if (!PropertyList(&with, true, "WITH")) return false;
    } else {
      return FailHere("CREATE FLOW " + QuoteName(name) + " expects AS, not " + Describe(pos_),
                      "write CREATE FLOW name [COMMENT '...'] [WITH (...)] AS INSERT INTO target "
                      "BY NAME SELECT ...");
    }
  }
  if (!ExpectWord("as", "CREATE FLOW " + QuoteName(name))) return false;
  ParsedBody body;
  auto target = [&]() -> bool {
    Word("table");
    std::string t;
    size_t p = 0;
    if (!QualifiedName(&t, &p)) return false;
    f.target = ctx_->Qualify(t, p);
    return true;
  };
  if (Word("insert")) {
    const size_t at = pos_;
    if (Word("overwrite")) {
      return Fail(at, "CREATE FLOW cannot INSERT OVERWRITE",
                  "a flow appends to its target: write INSERT INTO target BY NAME SELECT ...",
                  "sdp-refused");
    }
    if (!ExpectWord("into", "CREATE FLOW ... AS INSERT")) return false;
    f.once = Word("once");
    if (!target()) return false;
    if (IsWord("with") && IsOp("(", 1)) {
      return FailHere("CREATE FLOW cannot set options on the INSERT target", "", "sdp-refused");
    }
    if (IsWord("partition")) {
      return FailHere("CREATE FLOW cannot write to a PARTITION of its target",
                      "partition the target with PARTITIONED BY on its CREATE statement",
                      "sdp-refused");
    }
    if (IsWord("if") && IsWord("not", 1)) {
      return FailHere("CREATE FLOW does not take IF NOT EXISTS", "remove IF NOT EXISTS",
                      "sdp-refused");
    }
    if (IsOp("(")) {
      return FailHere("CREATE FLOW cannot list target columns",
                      "rows are matched to the target's columns by name: write INSERT INTO " +
                          QuoteName(f.target) + " BY NAME SELECT ...",
                      "sdp-refused");
    }
    if (!Words({"by", "name"})) {
      return FailHere(
          "CREATE FLOW needs INSERT INTO ... BY NAME",
          "SDP matches the query's columns to the target's by name: write INSERT INTO " +
              QuoteName(f.target) + " BY NAME SELECT ...",
          "sdp-refused");
    }
    if (!Body(&f, &body)) return false;
  } else if (Words({"auto", "cdc"}) || Words({"apply", "changes"})) {
    if (!ExpectWord("into", "AUTO CDC")) return false;
    f.once = Word("once");
    if (!target()) return false;
    if (!CdcFlow(&f, &body)) return false;
  } else {
    return FailHere("CREATE FLOW ... AS expects INSERT INTO ... BY NAME or AUTO CDC INTO, not " +
                    Describe(pos_));
  }
  if (!ApplyOptions(with, nullptr, &f, &body)) return false;
  ctx_->pipeline.flows.push_back(std::move(f));
  ctx_->any_definition = true;
  return true;
}

bool StatementParser::SourceCall(std::optional<SourceSpec>* out) {
  const bool stream = Word("stream");
  if (AtEnd() || Peek().kind != TokKind::kIdent || !IsSourceFunction(Peek().text) ||
      !IsOp("(", 1)) {
    return FailHere("expected a source read such as STREAM read_files(...), not " + Describe(pos_));
  }
  const size_t close = Close(pos_ + 1);
  if (close >= end_) return FailHere("the source read is not closed with ')'");
  size_t at = pos_;
  const bool streaming_only = !sql::IsWord(Peek(), "read_files");
  auto src = ParseSourceCall(ctx_->text, t_, pos_, close, stream || streaming_only, &at);
  if (!src.ok()) return Fail(at, src.status().message());
  *out = *src;
  pos_ = close + 1;
  return true;
}

// Analyzes `text` (a query; `prefix` synthetic characters before the user's
// text, which starts at file offset `file_offset`) into `f`.
static bool AnalyzeInto(FileContext* ctx, std::string_view text, size_t prefix, size_t file_offset,
                        thund::Flow* f, ParsedBody* out, bool* failed) {
  BodyResult br = AnalyzeBody(text);
  if (br.problem) {
    size_t off = br.problem->offset >= prefix ? br.problem->offset - prefix : 0;
    ctx->Add(Severity::kError, ctx->LocAtOffset(file_offset + off), "sql-body", br.problem->message,
             br.problem->hint, "", f->name);
    *failed = true;
    return false;
  }
  for (const auto& w : br.info.warnings) {
    ctx->Add(Severity::kWarning, ctx->LocAtOffset(file_offset), "sql-body", w, "", "", f->name);
  }
  if (br.info.source) {
    f->source = br.info.source;
    f->sql.clear();
  } else {
    f->sql = std::string(text);
    f->sql_location = ctx->LocAtOffset(file_offset);
  }
  out->implied = ImpliedStreaming(br.info);
  return true;
}

bool StatementParser::Body(thund::Flow* f, ParsedBody* out) {
  if (AtEnd()) return FailHere("expected a query, not the end of the statement");
  if (IsWord("sql") && pos_ + 1 < end_ && sql::IsStringToken(t_[pos_ + 1])) {
    f->sql = sql::StringValue(t_[pos_ + 1]);
    pos_ += 2;
    out->escaped = true;
    if (Words({"with", "source"}) && !SourceCall(&f->source)) return false;
    if (!AtEnd()) return FailHere("unexpected " + Describe(pos_) + " after SQL '...'");
    return true;
  }
  if (Word("source")) {
    if (!SourceCall(&f->source)) return false;
    out->escaped = true;
    if (!AtEnd()) return FailHere("unexpected " + Describe(pos_) + " after the source");
    return true;
  }
  const size_t a = pos_;
  std::string_view text = Text(a, end_);
  pos_ = end_;
  if (!AnalyzeInto(ctx_, text, 0, t_[a].begin, f, out, &failed_)) return false;
  return true;
}

bool StatementParser::CdcFlow(thund::Flow* f, ParsedBody* out) {
  if (!ExpectWord("from", "AUTO CDC INTO " + QuoteName(f->target))) return false;
  const size_t s0 = pos_;
  size_t s1 = s0;
  int depth = 0;
  for (; s1 < end_; ++s1) {
    const Token& tok = t_[s1];
    if (sql::IsOp(tok, "(")) ++depth;
    if (sql::IsOp(tok, ")")) --depth;
    if (depth == 0 && s1 > s0 && IsCdcClause(tok)) break;
  }
  if (s1 == s0) return FailHere("AUTO CDC ... FROM needs a source, e.g. FROM STREAM raw_changes");
  if (sql::IsWord(t_[s0], "sql") && s0 + 1 < s1 && sql::IsStringToken(t_[s0 + 1])) {
    f->sql = sql::StringValue(t_[s0 + 1]);
    out->escaped = true;
    pos_ = s0 + 2;
    if (Words({"with", "source"}) && !SourceCall(&f->source)) return false;
    if (pos_ != s1) return FailHere("unexpected " + Describe(pos_) + " in the AUTO CDC source");
  } else if (sql::IsWord(t_[s0], "source")) {
    pos_ = s0 + 1;
    out->escaped = true;
    if (!SourceCall(&f->source)) return false;
    if (pos_ != s1) return FailHere("unexpected " + Describe(pos_) + " in the AUTO CDC source");
  } else if (sql::IsOp(t_[s0], "(") && Close(s0) == s1 - 1 && s1 - s0 > 2) {
    if (!AnalyzeInto(ctx_, Text(s0 + 1, s1 - 1), 0, t_[s0 + 1].begin, f, out, &failed_))
      return false;
  } else {
    const std::string prefix = "SELECT * FROM ";
    std::string text = prefix + std::string(Text(s0, s1));
    if (!AnalyzeInto(ctx_, text, prefix.size(), t_[s0].begin, f, out, &failed_)) return false;
  }
  pos_ = s1;

  Cdc cdc;
  std::set<std::string> seen;
  auto expr_end = [&](size_t from) {
    size_t k = from;
    int d = 0;
    for (; k < end_; ++k) {
      if (sql::IsOp(t_[k], "(")) ++d;
      if (sql::IsOp(t_[k], ")")) --d;
      if (d == 0 && k > from && IsCdcClause(t_[k])) break;
    }
    return k;
  };
  auto fragment = [&](size_t from, size_t to) {
    if (to == from + 2 && sql::IsWord(t_[from], "sql") && sql::IsStringToken(t_[from + 1])) {
      return sql::StringValue(t_[from + 1]);
    }
    return std::string(Text(from, to));
  };
  while (!AtEnd()) {
    const size_t at = pos_;
    auto once = [&](const char* c) {
      if (seen.insert(c).second) return true;
      return Fail(at, std::string(c) + " is given twice in AUTO CDC");
    };
    if (Word("keys")) {
      if (!once("KEYS") || !IdentifierList(&cdc.keys)) return false;
    } else if (Words({"ignore", "null", "updates"})) {
      return Fail(at, "IGNORE NULL UPDATES is not supported by thund yet",
                  "remove it; NULL values in an update then overwrite the stored values",
                  "sql-unsupported");
    } else if (Words({"apply", "as", "delete", "when"})) {
      if (!once("APPLY AS DELETE WHEN")) return false;
      size_t e = expr_end(pos_);
      if (e == pos_) return FailHere("APPLY AS DELETE WHEN needs a condition");
      cdc.apply_as_deletes = fragment(pos_, e);
      pos_ = e;
    } else if (Words({"apply", "as", "truncate"})) {
      return Fail(at, "APPLY AS TRUNCATE WHEN is not supported by thund", "", "sql-unsupported");
    } else if (Words({"sequence", "by"})) {
      if (!once("SEQUENCE BY")) return false;
      size_t e = expr_end(pos_);
      if (e == pos_) return FailHere("SEQUENCE BY needs a column");
      cdc.sequence_by = (e == pos_ + 1 && sql::IsIdentifier(t_[pos_]))
                            ? sql::IdentifierName(t_[pos_])
                            : fragment(pos_, e);
      pos_ = e;
    } else if (Word("columns")) {
      if (!once("COLUMNS")) return false;
      if (!Op("*")) {
        if (!IdentifierList(&cdc.columns)) return false;
      } else if (!ExpectWord("except", "COLUMNS *") || !IdentifierList(&cdc.except_columns)) {
        return false;
      }
    } else if (Words({"stored", "as", "scd", "type"})) {
      if (!once("STORED AS SCD TYPE")) return false;
      bool negative = Op("-");
      if (AtEnd() || Peek().kind != TokKind::kNumber) return FailHere("SCD TYPE takes 1 or 2");
      int v = 0;
      std::string_view n = Peek().text;
      auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
      if (ec != std::errc() || p != n.data() + n.size()) return FailHere("SCD TYPE takes 1 or 2");
      cdc.scd_type = negative ? -v : v;
      ++pos_;
    } else if (Words({"track", "history", "on"})) {
      if (!once("TRACK HISTORY ON")) return false;
      if (!Op("*")) {
        if (!IdentifierList(&cdc.track_history)) return false;
      } else if (!ExpectWord("except", "TRACK HISTORY ON *") ||
                 !IdentifierList(&cdc.track_history_except)) {
        return false;
      }
    } else {
      return FailHere("unexpected " + Describe(pos_) + " in AUTO CDC",
                      "the clauses are KEYS (...), APPLY AS DELETE WHEN ..., SEQUENCE BY ..., "
                      "COLUMNS (...) | * EXCEPT (...), STORED AS SCD TYPE 1|2, "
                      "TRACK HISTORY ON (...) | * EXCEPT (...)");
    }
  }
  f->cdc = std::move(cdc);
  return true;
}

}  // namespace thund::sqlp
