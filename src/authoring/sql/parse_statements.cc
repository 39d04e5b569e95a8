// The small statements and the dispatch: CREATE <what>, SET, USE,
// CREATE PIPELINE.
#include <cctype>

#include "authoring/sql/parser.h"

namespace thund::sqlp {

void StatementParser::Parse() {
  if (AtEnd()) return;
  if (Word("create")) {
    Create();
  } else if (Word("set")) {
    Set();
  } else if (Word("use")) {
    Use();
  } else if (IsWord("apply") && IsWord("changes", 1)) {
    Fail(pos_,
         "APPLY CHANGES INTO is a statement of its own in legacy DLT; SDP writes it as a flow",
         "write CREATE FLOW name AS AUTO CDC INTO target FROM STREAM source KEYS (...) SEQUENCE BY "
         "col",
         "sql-unsupported");
  } else {
    Fail(pos_, "unsupported statement " + Describe(pos_) + " in a pipeline definition file",
         "a pipeline file holds CREATE MATERIALIZED VIEW / STREAMING TABLE / VIEW / FLOW, SET and "
         "USE statements (see docs/sql.md)",
         "sql-unsupported");
  }
}

bool StatementParser::Create() {
  const size_t create_tok = pos_ - 1;
  if (Word("or")) {
    if (!Word("refresh") && !Word("replace")) return FailHere("expected OR REFRESH or OR REPLACE");
  }
  const bool temporary = Word("temporary") || Word("temp");
  if (Words({"materialized", "view"})) {
    if (temporary) return Fail(create_tok, "TEMPORARY applies only to VIEW");
    return Dataset(DatasetKind::kMaterializedView);
  }
  if (Words({"streaming", "table"}) || Words({"streaming", "live", "table"})) {
    if (temporary) return Fail(create_tok, "TEMPORARY applies only to VIEW");
    return Dataset(DatasetKind::kStreamingTable);
  }
  if (Word("view")) return Dataset(temporary ? DatasetKind::kTemporaryView : DatasetKind::kView);
  if (temporary && Words({"live", "view"})) return Dataset(DatasetKind::kTemporaryView);
  if (temporary) return FailHere("TEMPORARY applies only to VIEW");
  if (Word("table")) return Dataset(DatasetKind::kTable);
  if (Word("sink")) return Dataset(DatasetKind::kSink);
  if (Word("flow")) return Flow();
  if (Word("pipeline")) return PipelineStatement();
  if (IsWord("live")) {
    return FailHere("CREATE LIVE TABLE / LIVE VIEW is legacy DLT syntax",
                    "write CREATE MATERIALIZED VIEW (or CREATE TEMPORARY VIEW)", "sql-unsupported");
  }
  return FailHere("CREATE " + Describe(pos_) + " is not a pipeline definition",
                  "use CREATE MATERIALIZED VIEW, STREAMING TABLE, [TEMPORARY] VIEW, TABLE, SINK, "
                  "FLOW or PIPELINE",
                  "sql-unsupported");
}

bool StatementParser::PipelineStatement() {
  const size_t at = pos_ - 1;
  if (ctx_->options.project_library) {
    return Fail(at, "CREATE PIPELINE is not allowed in a library file of an SDP project",
                "the project's spark-pipeline.yml names the pipeline and its storage",
                "sql-unsupported");
  }
  if (ctx_->pipeline_declared) return Fail(at, "the pipeline is already declared in this file");
  ctx_->pipeline_declared = true;
  std::string name;
  if (!AtEnd() && !IsWord("with") && !Identifier(&name)) return false;
  std::vector<Option> options;
  if (Word("with") && !PropertyList(&options, true, "CREATE PIPELINE ... WITH")) return false;
  if (!AtEnd()) return FailHere("unexpected " + Describe(pos_) + " after CREATE PIPELINE");
  ctx_->pipeline.name = name;
  for (const Option& o : options) {
    if (o.key == "storage" && o.value.kind == OptValue::kString) {
      ctx_->pipeline.storage = o.value.text;
    } else if (o.key == "storage") {
      return Fail(o.token, "storage must be a string, e.g. storage = 'file:///tmp/thund'");
    } else {
      return Fail(o.token, "CREATE PIPELINE has no option '" + o.key + "'",
                  "the only option is storage; the catalog, schema and configuration come from "
                  "USE and SET",
                  "sql-option");
    }
  }
  return true;
}

bool StatementParser::Set() {
  const size_t set_tok = pos_ - 1;
  if (Word("catalog")) {
    std::string name;
    if (!AtEnd() && sql::IsStringToken(Peek())) {
      name = sql::StringValue(Peek());
      ++pos_;
    } else if (!Identifier(&name)) {
      return false;
    }
    ctx_->catalog = name;
    ctx_->database.clear();
    if (!ctx_->options.project_library && !ctx_->any_definition) {
      ctx_->pipeline.catalog = name;
      ctx_->pipeline.database.clear();
    }
    return AtEnd() || FailHere("unexpected " + Describe(pos_));
  }
  size_t eq = end_;
  for (size_t k = pos_; k < end_; ++k) {
    if (sql::IsOp(t_[k], "=")) {
      eq = k;
      break;
    }
  }
  if (AtEnd())
    return Fail(set_tok, "SET needs a key and a value: SET key = value", "", "sdp-refused");
  if (eq == end_ || eq + 1 >= end_) {
    return Fail(set_tok, "SET needs a value: SET key = value (SDP refuses SET without one)", "",
                "sdp-refused");
  }
  if (eq == pos_) return Fail(eq, "SET needs a key before '='");
  std::string key = (eq == pos_ + 1 && t_[pos_].kind == TokKind::kBacktick)
                        ? sql::IdentifierName(t_[pos_])
                        : std::string(Text(pos_, eq));
  std::string value = (end_ == eq + 2 && sql::IsStringToken(t_[eq + 1]))
                          ? sql::StringValue(t_[eq + 1])
                          : std::string(Text(eq + 1, end_));
  auto& conf = ctx_->pipeline.configuration;
  auto it = conf.find(key);
  if (it != conf.end() && it->second != value) {
    ctx_->Add(Severity::kWarning, ctx_->Loc(set_tok), "sql-set-override",
              "SET " + key + " replaces the value '" + it->second + "' set earlier",
              "SDP applies SET to the definitions after it; thund keeps one value per key for the "
              "whole pipeline (the last one)");
  }
  conf[key] = value;
  pos_ = end_;
  return true;
}

bool StatementParser::Use() {
  bool catalog_only = false;
  if (Word("catalog")) {
    catalog_only = true;
  } else {
    Word("schema") || Word("database") || Word("namespace");
  }
  std::vector<std::string> parts;
  while (true) {
    std::string part;
    if (!AtEnd() && sql::IsStringToken(Peek())) {
      part = sql::StringValue(Peek());
      ++pos_;
    } else if (!Identifier(&part)) {
      return false;
    }
    parts.push_back(part);
    if (!Op(".")) break;
  }
  if (!AtEnd()) return FailHere("unexpected " + Describe(pos_) + " after USE");
  if (catalog_only) {
    if (parts.size() != 1) return Fail(begin_, "USE CATALOG takes one name");
    ctx_->catalog = parts[0];
    ctx_->database.clear();  // as SDP does
  } else if (parts.size() == 1) {
    ctx_->database = parts[0];
  } else if (parts.size() == 2) {
    ctx_->catalog = parts[0];
    ctx_->database = parts[1];
  } else {
    return Fail(begin_, "USE takes a schema or catalog.schema", "", "sdp-refused");
  }
  if (!ctx_->options.project_library && !ctx_->any_definition) {
    ctx_->pipeline.catalog = ctx_->catalog;
    ctx_->pipeline.database = ctx_->database;
  }
  return true;
}

}  // namespace thund::sqlp
