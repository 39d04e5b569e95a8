// Internal to the plan walk: parse-tree expressions into plan::Expr values.
// Each expression's DuckDB SQL is rendered in the walk's one batch; until then
// the Expr (a value, copied into nodes) carries a mark that Fill() replaces.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "sql/plan_walk.h"
#include "thund/plan.h"

namespace thund::sql {

class ExprConverter {
 public:
  using Json = nlohmann::ordered_json;
  // Plans a subquery found inside an expression (the walk's own Query()).
  using SubqueryFn = std::function<std::shared_ptr<plan::PlanNode>(const Json& query_node)>;

  // `renders` receives one render job per expression and must outlive the
  // converter's Convert() calls.
  ExprConverter(std::string_view duck_sql, std::vector<RenderJob>* renders, SubqueryFn subquery)
      : duck_sql_(duck_sql), renders_(renders), subquery_(std::move(subquery)) {}

  plan::Expr Convert(const Json& j);

  // Replaces the marks in every expression of `n` by the rendered texts.
  // REQUIRES: the render batch has run.
  void Fill(plan::PlanNode& n) const;

  // Line:column of a parse-tree element in the DuckDB text.
  plan::TextPos PosOf(const Json& j) const;

  // A FUNCTION whose name DuckDB's catalog lists as an aggregate (or a Spark one).
  static bool IsAggregateCall(const Json& j);

  // The first column reference in `e` (pre-order), or an empty Expr.
  static plan::Expr FirstColumn(const plan::Expr& e);

 private:
  static constexpr const char* kPendingMark = "\x01";
  void FillExpr(plan::Expr& e) const;
  void FillText(std::string* s) const;

  std::string_view duck_sql_;
  std::vector<RenderJob>* renders_;
  SubqueryFn subquery_;
  std::vector<std::unique_ptr<plan::Expr>> pending_;  // rendered copies, by mark index
};

// The files a table function's first argument names (a string constant or a
// list of them); nothing when it is computed.
void FilesOf(const nlohmann::ordered_json& arg, std::vector<std::string>* out);

}  // namespace thund::sql
