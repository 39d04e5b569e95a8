// PlanQuery: translate, parse (the one json_serialize_sql), walk, bind; and
// the facts the IR rules read, taken from the plan.
#include <arrow/type.h>

#include <algorithm>

#include "sql/duckdb_parser.h"
#include "sql/plan_walk.h"
#include "sql/sql_analysis.h"
#include "sql/verdict_cache.h"
#include "thund/sql_dialect.h"
#include "thund/validate.h"

namespace thund::sql {
namespace {

using internal::Lower;

std::string CacheKey(const std::string& sql, const InputSchemas* inputs) {
  std::string key = sql;
  key.push_back('\0');
  if (inputs) {
    key += "bound";
    for (const auto& [name, schema] : *inputs) {
      key += "\0" + name + "=" + (schema ? schema->ToString(/*show_metadata=*/false) : "?");
    }
  }
  return key;
}

// Output schemas of every node, from DuckDB's binder over the inputs.
void Bind(const WalkResult& walk, const InputSchemas& inputs) {
  std::vector<std::pair<std::vector<std::string>, std::shared_ptr<arrow::Schema>>> tables;
  std::vector<std::string> unknown;
  for (const auto* scan : plan::PlanInputs(*walk.root)) {
    auto it = inputs.find(Lower(scan->Joined()));
    if (it != inputs.end() && it->second) {
      tables.emplace_back(scan->name, it->second);
    } else {
      unknown.push_back(scan->Joined());
    }
  }
  std::vector<std::string> queries;
  for (const auto& n : walk.nodes) queries.push_back(n->sql);
  auto bound = internal::BindQuerySchemas(tables, queries);
  for (size_t i = 0; i < walk.nodes.size(); ++i) {
    plan::PlanNode& n = *walk.nodes[i];
    if (n.kind == plan::NodeKind::kValues && n.rows.empty()) {
      // SELECT without FROM reads one row of no columns, which SQL cannot
      // write as a query of its own.
      n.schema = arrow::schema(arrow::FieldVector{});
      continue;
    }
    if (!bound.ok()) {
      n.bind_error = bound.status().message();
      continue;
    }
    auto& schema = (*bound)[i];
    if (schema.ok()) {
      n.schema = *schema;
    } else if (!unknown.empty()) {
      n.bind_error = "the schema of " + unknown.front() + " is not known before it runs";
    } else {
      n.bind_error = schema.status().message();
    }
    if (!n.schema) continue;
    // Output expressions take their column's type.
    auto type_exprs = [&](std::vector<plan::Expr>& exprs, int first) {
      for (size_t k = 0; k < exprs.size(); ++k) {
        const int f = first + static_cast<int>(k);
        if (exprs[k].kind == plan::ExprKind::kStar || f >= n.schema->num_fields()) return;
        exprs[k].type = n.schema->field(f)->type();
      }
    };
    if (n.kind == plan::NodeKind::kProject) {
      const bool star = std::any_of(n.exprs.begin(), n.exprs.end(), [](const plan::Expr& e) {
        return e.kind == plan::ExprKind::kStar;
      });
      if (!star && static_cast<int>(n.exprs.size()) == n.schema->num_fields()) type_exprs(n.exprs, 0);
    } else if (n.kind == plan::NodeKind::kAggregate) {
      type_exprs(n.group_keys, 0);
      type_exprs(n.aggregates, static_cast<int>(n.group_keys.size()));
    }
  }
}

arrow::Result<plan::PlanPtr> BuildPlan(const std::string& sql, const InputSchemas* inputs) {
  ARROW_ASSIGN_OR_RAISE(std::string duck_sql, SparkToDuckDb(sql));
  ARROW_ASSIGN_OR_RAISE(nlohmann::ordered_json statements, internal::ParseSqlToJson(duck_sql));
  if (statements.empty()) return arrow::Status::Invalid("the query is empty");
  if (statements.size() > 1) {
    return arrow::Status::Invalid("expected one SELECT query, found ", statements.size(),
                                  " statements");
  }
  ARROW_ASSIGN_OR_RAISE(WalkResult walk,
                        WalkStatement(statements[0], sql, duck_sql, WindowUses(sql)));
  // Relations read as streams (FROM STREAM(x)).
  const std::vector<std::string> streamed = StreamReads(sql);
  for (const auto& n : walk.nodes) {
    if (n->kind != plan::NodeKind::kScan || n->scan.kind != plan::ScanKind::kDataset) continue;
    const std::string name = Lower(n->scan.Joined());
    n->scan.stream = std::find(streamed.begin(), streamed.end(), name) != streamed.end();
  }
  if (inputs) Bind(walk, *inputs);
  walk.FinishCopies();
  return plan::PlanPtr(walk.root);
}

}  // namespace

arrow::Result<plan::PlanPtr> PlanQuery(const std::string& sql, const InputSchemas* inputs) {
  static VerdictCache<plan::PlanPtr> cache(512);
  return cache.GetOrCompute(CacheKey(sql, inputs), [&] { return BuildPlan(sql, inputs); });
}

arrow::Result<std::map<std::string, plan::PlanPtr>> PlanPipeline(
    const Pipeline& p, const SourceSchemaFn& source_schema) {
  ARROW_ASSIGN_OR_RAISE(std::vector<const Flow*> order, TopoOrder(p));
  std::map<std::string, plan::PlanPtr> plans;
  std::map<std::string, std::shared_ptr<arrow::Schema>> produced;  // dataset -> schema
  for (const Flow* f : order) {
    if (f->sql.empty()) {
      if (f->source && source_schema && !produced.count(f->target)) {
        if (auto schema = source_schema(*f)) produced[f->target] = std::move(schema);
      }
      continue;
    }
    ARROW_ASSIGN_OR_RAISE(internal::SqlFacts facts, AnalyzeSql(f->sql));
    InputSchemas inputs;
    for (const auto& ref : facts.inputs) {
      internal::ResolvedInput in = internal::ResolveInput(p, ref);
      std::shared_ptr<arrow::Schema> schema;
      if (const Dataset* d = p.FindDataset(in.name); d && d->schema.declared()) {
        schema = d->schema.arrow;
      } else if (auto it = produced.find(in.name); it != produced.end()) {
        schema = it->second;
      }
      inputs[Lower(ref.Joined())] = schema;
    }
    auto planned = PlanQuery(f->sql, &inputs);
    if (!planned.ok()) continue;
    plans[f->name] = *planned;
    if ((*planned)->schema && !produced.count(f->target)) produced[f->target] = (*planned)->schema;
  }
  return plans;
}

arrow::Result<internal::SqlFacts> AnalyzeSql(const std::string& sql) {
  ARROW_ASSIGN_OR_RAISE(plan::PlanPtr root, PlanQuery(sql));
  internal::SqlFacts facts;
  for (const plan::ScanInfo* scan : plan::PlanInputs(*root)) {
    internal::TableRef ref;
    ref.parts = scan->name;
    facts.inputs.push_back(std::move(ref));
  }
  // The line:column of each reference is on its scan node.
  std::vector<const plan::PlanNode*> nodes = plan::Nodes(*root);
  for (auto& ref : facts.inputs) {
    for (const plan::PlanNode* n : nodes) {
      if (n->kind == plan::NodeKind::kScan && Lower(n->scan.Joined()) == Lower(ref.Joined())) {
        ref.line = n->pos.line;
        ref.column = n->pos.column;
        break;
      }
    }
  }
  const plan::PlanNode* agg = plan::RowPathAggregate(*root);
  facts.aggregates = agg != nullptr;
  facts.windowed = agg && agg->kind == plan::NodeKind::kAggregate && plan::AggregateWindow(*agg);
  facts.reads_stream = ReadsStream(sql);
  return facts;
}

arrow::Result<std::string> WithWindowEndColumn(const std::string& sql, const std::string& name) {
  // Asked on every trigger of the flow: parse and render once.
  static VerdictCache<std::string> cache(256);
  return cache.GetOrCompute(sql + '\0' + name, [&]() -> arrow::Result<std::string> {
    ARROW_ASSIGN_OR_RAISE(std::string duck_sql, SparkToDuckDb(sql));
    return AddWindowEndColumn(duck_sql, name);
  });
}

arrow::Result<std::string> WithDerivedTablesReplaced(
    const std::string& sql, const std::vector<std::pair<std::string, std::string>>& tables) {
  ARROW_ASSIGN_OR_RAISE(std::string duck_sql, SparkToDuckDb(sql));
  return ReplaceDerivedTables(duck_sql, tables);
}

arrow::Result<std::string> WithCteReplaced(const std::string& sql, const std::string& cte,
                                           const std::string& table) {
  ARROW_ASSIGN_OR_RAISE(std::string duck_sql, SparkToDuckDb(sql));
  return ReplaceCteReferences(duck_sql, cte, table);
}

arrow::Status CheckPredicate(const std::string& predicate) {
  ARROW_ASSIGN_OR_RAISE(std::string duck, SparkToDuckDb(predicate));
  static const std::string kPrefix = "SELECT 1 FROM t WHERE (";
  ARROW_ASSIGN_OR_RAISE(auto statements,
                        internal::ParseSqlToJson(kPrefix + duck + "\n)", kPrefix.size()));
  if (statements.size() != 1) return arrow::Status::Invalid("not a single boolean expression");
  return arrow::Status::OK();
}

}  // namespace thund::sql
