// CREATE MATERIALIZED VIEW / STREAMING TABLE / [TEMPORARY] VIEW / TABLE /
// SINK: the column list (columns and EXPECT constraints), the table clauses
// and the optional AS query.
#include <set>

#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>

#include "authoring/enum_values.h"
#include "authoring/sql/parser.h"
#include "thund/type_names.h"

namespace thund::sqlp {
namespace {

std::string KindWords(DatasetKind k) {
  switch (k) {
    case DatasetKind::kMaterializedView:
      return "CREATE MATERIALIZED VIEW";
    case DatasetKind::kStreamingTable:
      return "CREATE STREAMING TABLE";
    case DatasetKind::kView:
      return "CREATE VIEW";
    case DatasetKind::kTemporaryView:
      return "CREATE TEMPORARY VIEW";
    case DatasetKind::kTable:
      return "CREATE TABLE";
    case DatasetKind::kSink:
      return "CREATE SINK";
  }
  return "CREATE";
}

bool IsColumnStop(const Token& t) {
  for (std::string_view w : {"not", "null", "comment", "metadata", "generated", "default",
                             "constraint", "primary", "unique", "references", "check", "collate"}) {
    if (sql::IsWord(t, w)) return true;
  }
  return false;
}

}  // namespace

bool StatementParser::Dataset(DatasetKind kind) {
  const std::string what = KindWords(kind);
  if (IsWord("if") && IsWord("not", 1) && IsWord("exists", 2)) {
    Warn(pos_, "IF NOT EXISTS is ignored",
         "pipeline definitions always create or refresh their dataset");
    pos_ += 3;
  }
  const size_t name_tok = pos_;
  std::string name;
  size_t parts = 0;
  if (!QualifiedName(&name, &parts)) return false;
  if (kind == DatasetKind::kTemporaryView && parts > 1) {
    return Fail(name_tok, "a temporary view name cannot be qualified",
                "temporary views live in the pipeline; write a plain name", "sdp-refused");
  }
  thund::Dataset d(ctx_->Qualify(name, parts), kind);
  d.location = ctx_->Loc(name_tok);
  if (IsOp("(") && !Columns(&d)) return false;

  std::vector<Option> with;
  std::set<std::string> seen;
  auto once = [&](const std::string& clause, size_t at) {
    if (seen.insert(clause).second) return true;
    return Fail(at, clause + " is given twice in " + what);
  };
  while (!AtEnd() && !IsWord("as")) {
    const size_t at = pos_;
    if (Word("using")) {
      if (!once("USING", at)) return false;
      size_t p = 0;
      const size_t name_at = pos_;
      std::string format;
      if (!QualifiedName(&format, &p)) return false;
      auto parsed = authoring::ParseStorageFormat(format);
      if (const auto* bad = std::get_if<authoring::BadValue>(&parsed)) {
        return Fail(name_at, bad->message, bad->hint, bad->code);
      }
      d.storage.format = std::get<0>(parsed);
    } else if (Word("options")) {
      if (!once("OPTIONS", at)) return false;
      std::vector<Option> opts;
      if (!PropertyList(&opts, false, "OPTIONS")) return false;
      for (const auto& o : opts) {
        if (o.value.kind == OptValue::kList || o.value.kind == OptValue::kMap) {
          return Fail(o.token, "OPTIONS values are single values, e.g. 'compression' = 'zstd'");
        }
        d.storage.options[o.key] = o.value.text;
      }
    } else if (Words({"partitioned", "by"})) {
      if (!once("PARTITIONED BY", at)) return false;
      if (!IdentifierList(&d.storage.partition_by)) return false;
    } else if (Word("location")) {
      if (!once("LOCATION", at)) return false;
      if (!StringLit(&d.storage.location, "LOCATION")) return false;
    } else if (Word("comment")) {
      if (!once("COMMENT", at)) return false;
      if (!StringLit(&d.comment, "COMMENT")) return false;
    } else if (Word("tblproperties")) {
      if (!once("TBLPROPERTIES", at)) return false;
      std::vector<Option> props;
      if (!PropertyList(&props, false, "TBLPROPERTIES")) return false;
      for (const auto& o : props) {
        if (o.value.kind == OptValue::kList || o.value.kind == OptValue::kMap) {
          return Fail(o.token, "TBLPROPERTIES values are single values, e.g. 'quality' = 'gold'");
        }
        d.properties[o.key] = o.value.text;
      }
    } else if (Word("with")) {
      if (!once("WITH", at)) return false;
      if (!PropertyList(&with, true, "WITH")) return false;
    } else if (Words({"cluster", "by"})) {
      if (IsOp("(")) {
        pos_ = Close(pos_) + 1;
      } else if (!AtEnd()) {
        ++pos_;  // NONE / AUTO
      }
      Warn(at, "CLUSTER BY is ignored by thund", "thund lays out rows by PARTITIONED BY only");
    } else if (kind == DatasetKind::kStreamingTable && IsWord("flow")) {
      break;
    } else {
      return FailHere("unexpected " + Describe(pos_) + " in " + what,
                      "the clauses are USING, OPTIONS, PARTITIONED BY, LOCATION, COMMENT, "
                      "TBLPROPERTIES, WITH (...) and AS <query>");
    }
  }

  std::optional<thund::Flow> flow;
  ParsedBody body;
  if (Word("as")) {
    flow.emplace(d.name, d.name, "");
    flow->location = d.location;
    if (!Body(&*flow, &body)) return false;
  } else if (Words({"flow", "auto", "cdc"})) {
    // Spark 4.2: CREATE STREAMING TABLE t FLOW AUTO CDC FROM src KEYS (...) ...
    flow.emplace(d.name, d.name, "");
    flow->location = d.location;
    if (!CdcFlow(&*flow, &body)) return false;
  } else if (!AtEnd()) {
    return FailHere("unexpected " + Describe(pos_) + " in " + what);
  }
  if (!ApplyOptions(with, &d, flow ? &*flow : nullptr, flow ? &body : nullptr)) return false;
  ctx_->pipeline.datasets.push_back(std::move(d));
  if (flow) ctx_->pipeline.flows.push_back(std::move(*flow));
  ctx_->any_definition = true;
  return true;
}

bool StatementParser::Columns(thund::Dataset* d) {
  ++pos_;  // (
  arrow::FieldVector fields;
  bool any_column = false, empty = IsOp(")");
  while (!Op(")")) {
    if (AtEnd()) return FailHere("the column list is not closed with ')'");
    if (IsWord("constraint")) {
      if (!Constraint(d)) return false;
    } else if (IsWord("primary") || IsWord("foreign") || IsWord("unique") || IsWord("check")) {
      return FailHere(std::string(Peek().text) + " constraints are not supported",
                      "thund checks rows with CONSTRAINT name EXPECT (predicate) [ON VIOLATION "
                      "DROP ROW | FAIL UPDATE]",
                      "sql-unsupported");
    } else {
      if (!ColumnDef(&fields)) return false;
      any_column = true;
    }
    if (IsOp(")")) continue;
    if (!ExpectOp(",", "the column list")) return false;
  }
  if (any_column || empty) d->schema.arrow = arrow::schema(std::move(fields));
  return true;
}

bool StatementParser::ColumnDef(arrow::FieldVector* fields) {
  std::string name;
  if (!Identifier(&name)) return false;
  const size_t start = pos_;
  int angle = 0;
  size_t k = start;
  while (k < end_) {
    const Token& tok = t_[k];
    if (angle == 0 && (sql::IsOp(tok, ",") || sql::IsOp(tok, ")"))) break;
    if (angle == 0 && k > start && IsColumnStop(tok)) break;
    if (sql::IsOp(tok, "(")) {
      k = Close(k) + 1;
      continue;
    }
    if (sql::IsOp(tok, "<")) ++angle;
    if (sql::IsOp(tok, ">")) --angle;
    if (sql::IsOp(tok, ">>")) angle -= 2;
    ++k;
  }
  if (k == start) {
    return Fail(start, "column '" + name + "' needs a type, e.g. " + name + " bigint");
  }
  std::string type_text(Text(start, k));
  auto type = ParseTypeName(type_text);
  if (!type.ok()) return Fail(start, "column '" + name + "': " + type.status().message());
  pos_ = k;
  bool nullable = true;
  std::vector<std::pair<std::string, std::string>> md;
  bool has_comment = false;
  while (!AtEnd() && !IsOp(",") && !IsOp(")")) {
    const size_t at = pos_;
    if (Words({"not", "null"})) {
      nullable = false;
    } else if (Word("null")) {
    } else if (Word("comment")) {
      std::string c;
      if (!StringLit(&c, "COMMENT")) return false;
      if (has_comment) return Fail(at, "column '" + name + "' has two comments");
      has_comment = true;
      md.insert(md.begin(), {"comment", c});
    } else if (Word("metadata")) {
      std::vector<Option> entries;
      if (!PropertyList(&entries, true, "METADATA")) return false;
      for (const auto& e : entries) {
        if (e.key == "comment" && has_comment)
          return Fail(e.token, "column '" + name + "' has two comments");
        has_comment = has_comment || e.key == "comment";
        md.push_back({e.key, e.value.text});
      }
    } else if (IsWord("as")) {
      return FailHere("the column list is not closed: expected ',' or ')' before AS",
                      "close the column list with ')'");
    } else {
      return FailHere(Describe(pos_) + " is not supported on a column",
                      "a column is: name type [NOT NULL] [COMMENT '...']", "sql-unsupported");
    }
  }
  std::shared_ptr<arrow::KeyValueMetadata> meta;
  if (!md.empty()) {
    meta = std::make_shared<arrow::KeyValueMetadata>();
    for (auto& [mk, mv] : md) meta->Append(mk, mv);
  }
  fields->push_back(arrow::field(name, *type, nullable, meta));
  return true;
}

bool StatementParser::Constraint(thund::Dataset* d) {
  const size_t at = pos_;
  ++pos_;  // CONSTRAINT
  std::string name;
  if (!Identifier(&name)) return false;
  if (!Word("expect")) {
    if (IsWord("check") || IsWord("primary") || IsWord("unique") || IsWord("foreign")) {
      return FailHere(std::string(Peek().text) + " constraints are not supported",
                      "thund checks rows with CONSTRAINT " + name + " EXPECT (predicate)",
                      "sql-unsupported");
    }
    return FailHere("CONSTRAINT " + name + " expects EXPECT (predicate), not " + Describe(pos_));
  }
  Expectation e;
  e.name = name;
  e.location = ctx_->Loc(at);
  if (IsWord("sql") && pos_ + 1 < end_ && sql::IsStringToken(t_[pos_ + 1])) {
    e.predicate = sql::StringValue(t_[pos_ + 1]);
    pos_ += 2;
  } else if (IsOp("(")) {
    size_t close = Close(pos_);
    if (close >= end_) return FailHere("EXPECT ( is not closed");
    if (close == pos_ + 1) return FailHere("EXPECT needs a predicate inside the parentheses");
    e.predicate = std::string(Text(pos_ + 1, close));
    pos_ = close + 1;
  } else {
    return FailHere("EXPECT needs a predicate in parentheses, e.g. EXPECT (id IS NOT NULL)");
  }
  if (Words({"on", "violation"})) {
    if (Words({"drop", "row"})) {
      e.action = ExpectationAction::kDrop;
    } else if (Words({"fail", "update"})) {
      e.action = ExpectationAction::kFail;
    } else {
      return FailHere("ON VIOLATION takes DROP ROW or FAIL UPDATE, not " + Describe(pos_));
    }
  }
  d->expectations.push_back(std::move(e));
  return true;
}

}  // namespace thund::sqlp
