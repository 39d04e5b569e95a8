// Internal: the one walk of DuckDB's parse tree (json_serialize_sql's
// document) into a logical plan (thund/plan.h). Only src/sql/ includes this.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/result.h>
#include <nlohmann/json.hpp>

#include "thund/plan.h"

namespace thund::sql {

// Time windows the user's text declares, in order of appearance (from the
// dialect, which reads the Spark forms before it rewrites them).
std::vector<plan::WindowInfo> WindowUses(std::string_view spark_sql);

// Where the walk writes each node's and expression's DuckDB SQL once rendered:
// one json_serialize_sql-shaped document per target, rendered in one batch.
struct RenderJob {
  std::string document;
  std::string* target = nullptr;
  bool strip_select = false;  // an expression rendered as "SELECT <expr>"
};

struct WalkResult {
  std::shared_ptr<plan::PlanNode> root;
  std::vector<RenderJob> renders;
  // Every node built, each once (the walk owns them until it returns).
  std::vector<std::shared_ptr<plan::PlanNode>> nodes;
  // Nodes that are another node under a name (a CTE reference, an aliased
  // derived table): (copy, original), in creation order. FinishCopies() makes
  // each copy equal to its original, once rendered and bound, but for its
  // alias, CTE name and position.
  std::vector<std::pair<std::shared_ptr<plan::PlanNode>, std::shared_ptr<plan::PlanNode>>> copies;

  void FinishCopies();
};

// Builds the plan of `statement` (one element of the document's
// "statements"). `duck_sql` is the text DuckDB parsed, `user_sql` the text as
// written (positions are mapped to it), `windows` from WindowUses(user_sql).
arrow::Result<WalkResult> WalkStatement(const nlohmann::ordered_json& statement,
                                        std::string_view user_sql, std::string_view duck_sql,
                                        std::vector<plan::WindowInfo> windows);

// `duck_sql` (DuckDB SQL) with one more output column `name`: the window end
// of each row of its windowed aggregation (max of the window's end, which is
// one value per group). For a windowed Append flow whose SELECT keeps no
// window column. NotImplemented when the outermost SELECT is not the windowed
// aggregation.
arrow::Result<std::string> AddWindowEndColumn(std::string_view duck_sql, const std::string& name);

// `duck_sql` with each derived table whose SELECT renders as `tables[i].first`
// (a plan block's `sql`) read from the table `tables[i].second` instead,
// under the same alias. Each entry replaces one derived table (two equal
// derived tables need two entries); NotImplemented when one is not found.
arrow::Result<std::string> ReplaceDerivedTables(
    std::string_view duck_sql, const std::vector<std::pair<std::string, std::string>>& tables);

// `duck_sql` with each reference to the outermost query's CTE `cte` read
// from the table `table` instead, under the name the reference gives it (its
// alias, else the CTE's name; the CTE's column aliases carried over), and
// the CTE's definition dropped. NotImplemented when no FROM names it.
arrow::Result<std::string> ReplaceCteReferences(std::string_view duck_sql, const std::string& cte,
                                                const std::string& table);

}  // namespace thund::sql
