// The one walk of DuckDB's parse tree into a logical plan. Each SELECT block
// becomes the chain
//   FROM tree -> [Filter where] -> [WindowAssign] -> [Aggregate] ->
//   [Filter having] -> Project -> [Filter qualify] -> [Distinct] -> [Sort] -> [Limit]
// and every node gets a render job: the block cut off at that node, as a
// json_serialize_sql document, so its DuckDB SQL (and through it, its schema)
// is exactly what DuckDB would run.
#include "sql/plan_walk.h"

#include <algorithm>
#include <map>

#include "sql/duckdb_parser.h"
#include "sql/plan_expr.h"
#include "ir/validate_internal.h"
#include "sql/plan_json.h"
#include "thund/json_text.h"

namespace thund::sql {
namespace {

using namespace plan_json;  // NOLINT: the parse-tree helpers of this module
using plan::Expr;
using plan::ExprKind;
using plan::NodeKind;
using plan::PlanNode;

class Walker {
 public:
  Walker(std::string_view user_sql, std::string_view duck_sql,
         std::vector<plan::WindowInfo> windows)
      : user_sql_(user_sql),
        duck_sql_(duck_sql),
        windows_(std::move(windows)),
        exprs_(duck_sql, &renders_, [this](const Json& node) { return Query(node); }) {}

  const ExprConverter& exprs() const { return exprs_; }

  arrow::Result<WalkResult> Run(const Json& statement) {
    const Json* node = Field(statement, "node");
    if (!node) return arrow::Status::UnknownError("DuckDB parser: statement without a query node");
    WalkResult out;
    out.root = Query(*node);
    out.renders = std::move(renders_);
    out.nodes = std::move(nodes_);
    out.copies = std::move(copies_);
    return out;
  }

 private:
  // ------------------------------------------------------------ positions
  // A relation's position in the user's text: the translation keeps lines,
  // but may move columns; the name is looked for on the same line.
  plan::TextPos NamePos(const Json& j, const std::string& name) {
    plan::TextPos p = exprs_.PosOf(j);
    if (!p.known() || user_sql_ == duck_sql_ || name.empty()) return p;
    size_t line_start = 0;
    for (int l = 1; l < p.line; ++l) {
      size_t nl = user_sql_.find('\n', line_start);
      if (nl == std::string_view::npos) return p;
      line_start = nl + 1;
    }
    size_t line_end = user_sql_.find('\n', line_start);
    std::string line = internal::Lower(std::string(
        user_sql_.substr(line_start, line_end == std::string_view::npos ? std::string_view::npos
                                                                         : line_end - line_start)));
    const std::string want = internal::Lower(name);
    size_t best = std::string::npos;
    for (size_t at = line.find(want); at != std::string::npos; at = line.find(want, at + 1)) {
      auto word = [&](size_t k) { return std::isalnum(static_cast<unsigned char>(line[k])) || line[k] == '_'; };
      if ((at > 0 && word(at - 1)) || (at + want.size() < line.size() && word(at + want.size()))) {
        continue;
      }
      // The occurrence closest to DuckDB's column.
      if (best == std::string::npos ||
          std::abs(static_cast<long>(at) + 1 - p.column) <
              std::abs(static_cast<long>(best) + 1 - p.column)) {
        best = at;
      }
    }
    if (best != std::string::npos) p.column = static_cast<int>(best) + 1;
    return p;
  }

  // --------------------------------------------------------------- nodes
  std::shared_ptr<PlanNode> NewNode(NodeKind kind, const Json& render_query) {
    auto n = std::make_shared<PlanNode>();
    n->kind = kind;
    Json q = render_query;
    AttachCtes(&q);
    renders_.push_back({StatementDocument(q), &n->sql, false});
    nodes_.push_back(n);
    return n;
  }

  // Every CTE in scope is attached to a rendered node, so that node's SQL
  // runs on its own.
  void AttachCtes(Json* q) {
    if (cte_entries_.empty() || !q->is_object() || !q->contains("cte_map")) return;
    Json& map = (*q)["cte_map"]["map"];
    Json merged = Json::array();
    for (const Json* e : cte_entries_) {
      bool shadowed = false;
      for (const auto& own : map) {
        if (Str(own, "key") == Str(*e, "key")) shadowed = true;
      }
      if (!shadowed) merged.push_back(*e);
    }
    for (const auto& own : map) merged.push_back(own);
    map = std::move(merged);
  }

  std::shared_ptr<PlanNode> Opaque(const Json& query_node, std::string reason) {
    auto n = NewNode(NodeKind::kOpaque, query_node);
    n->opaque_reason = std::move(reason);
    // Inputs below an opaque node are still found (in its parts: the node
    // itself is what could not be modelled).
    if (query_node.is_object()) {
      for (const auto& [k, v] : query_node.items()) CollectScans(v, n.get());
    }
    return n;
  }

  // Scans inside a construct the walk does not model, as the opaque node's
  // inputs (so PlanInputs stays exact).
  void CollectScans(const Json& j, PlanNode* into) {
    if (j.is_array()) {
      for (const auto& v : j) CollectScans(v, into);
      return;
    }
    if (!j.is_object()) return;
    if (!j.contains("class")) {
      const std::string type = Str(j, "type");
      if (type == "BASE_TABLE" || type == "TABLE_FUNCTION") {
        into->inputs.push_back(TableRef(j));
        return;
      }
      if (j.contains("cte_map") || type == "SELECT_NODE" || type == "SET_OPERATION_NODE") {
        into->inputs.push_back(Query(j));
        return;
      }
    }
    for (const auto& [k, v] : j.items()) CollectScans(v, into);
  }

  std::shared_ptr<PlanNode> Query(const Json& node) {
    // The node's CTEs: visible in its body and in the CTEs after them.
    const size_t mark = cte_entries_.size();
    const size_t plan_mark = cte_plans_.size();
    if (const Json* map = Field(node, "cte_map")) {
      if (const Json* entries = Field(*map, "map"); entries && entries->is_array()) {
        for (const auto& entry : *entries) {
          const std::string key = Str(entry, "key");
          const Json* value = Field(entry, "value");
          const Json* query = value ? Field(*value, "query") : nullptr;
          const Json* qnode = query ? Field(*query, "node") : nullptr;
          if (key.empty() || !qnode) continue;
          if (Str(*qnode, "type") == "RECURSIVE_CTE_NODE") {
            // Rendered as `WITH RECURSIVE key AS (...) SELECT * FROM key`.
            cte_entries_.push_back(&entry);
            cte_plans_.emplace_back(internal::Lower(key), nullptr);  // its self-references
            Json ref;
            ref["type"] = "BASE_TABLE";
            ref["alias"] = "";
            ref["sample"] = nullptr;
            ref["query_location"] = static_cast<uint64_t>(-1);
            ref["schema_name"] = "";
            ref["table_name"] = key;
            ref["column_name_alias"] = Json::array();
            ref["catalog_name"] = "";
            ref["at_clause"] = nullptr;
            auto n = NewNode(NodeKind::kOpaque, BareSelect(ref));
            n->opaque_reason = "a recursive CTE";
            for (const auto& [k, v] : qnode->items()) CollectScans(v, n.get());
            cte_plans_.back().second = n;
            continue;
          }
          std::shared_ptr<PlanNode> cte = Query(*qnode);
          cte_plans_.emplace_back(internal::Lower(key), cte);
          cte_entries_.push_back(&entry);
        }
      }
    }
    std::shared_ptr<PlanNode> out;
    const std::string type = Str(node, "type");
    if (type == "SELECT_NODE") {
      out = Select(node);
    } else if (type == "SET_OPERATION_NODE") {
      out = SetOperation(node);
    } else if (type == "CTE_NODE" && Field(node, "child")) {
      out = Query(*Field(node, "child"));
    } else if (type == "RECURSIVE_CTE_NODE") {
      cte_plans_.emplace_back(internal::Lower(Str(node, "cte_name")), nullptr);
      out = Opaque(StripCtes(node), "a recursive CTE");
    } else {
      out = Opaque(StripCtes(node), "a " + type);
    }
    cte_entries_.resize(mark);
    cte_plans_.resize(plan_mark);
    return out;
  }

  Json StripCtes(const Json& node) {
    Json copy = node;
    if (copy.contains("cte_map")) copy["cte_map"] = Json{{"map", Json::array()}};
    return copy;
  }

  std::shared_ptr<PlanNode> SetOperation(const Json& node) {
    Json render = StripCtes(node);
    render["modifiers"] = Json::array();
    auto n = NewNode(NodeKind::kUnion, render);
    const std::string op = Str(node, "setop_type");
    const bool all = node.contains("setop_all") && node["setop_all"].is_boolean() &&
                     node["setop_all"].get<bool>();
    if (op == "UNION") {
      n->set_op = all ? plan::SetOp::kUnionAll : plan::SetOp::kUnion;
    } else if (op == "UNION_BY_NAME") {
      n->set_op = all ? plan::SetOp::kUnionAllByName : plan::SetOp::kUnionByName;
    } else if (op == "EXCEPT") {
      n->set_op = all ? plan::SetOp::kExceptAll : plan::SetOp::kExcept;
    } else if (op == "INTERSECT") {
      n->set_op = all ? plan::SetOp::kIntersectAll : plan::SetOp::kIntersect;
    }
    if (NonEmptyArray(node, "children")) {
      for (const auto& c : node["children"]) n->inputs.push_back(Query(c));
    } else {
      for (const char* side : {"left", "right"}) {
        if (const Json* c = Field(node, side)) n->inputs.push_back(Query(*c));
      }
    }
    return Modifiers(node, n, render);
  }

  // ---------------------------------------------------------- SELECT block
  // A WHERE / HAVING / QUALIFY node over `input`; `render` is the block cut
  // off after that clause.
  std::shared_ptr<PlanNode> Filter(const Json& render, const Json& predicate, const char* clause,
                                   std::shared_ptr<PlanNode> input) {
    auto f = NewNode(NodeKind::kFilter, render);
    f->predicate = exprs_.Convert(predicate);
    f->filter_clause = clause;
    f->inputs.push_back(std::move(input));
    return f;
  }

  std::shared_ptr<PlanNode> Select(const Json& node) {
    const Json* from = Field(node, "from_table");
    std::shared_ptr<PlanNode> cur = from ? TableRef(*from) : nullptr;
    Json base = BareSelect(from ? *from : EmptyFrom());
    if (!cur) cur = Values(base);

    if (const Json* where = Field(node, "where_clause")) {
      base["where_clause"] = *where;
      cur = Filter(base, *where, "where", cur);
    }

    const bool group_all = Str(node, "aggregate_handling") == "FORCE_AGGREGATES";
    const Json& select_list = node["select_list"];
    std::vector<const Json*> aggregate_calls;
    for (const char* key : {"select_list", "having", "qualify"}) {
      if (const Json* e = Field(node, key)) FindAggregates(*e, &aggregate_calls);
    }
    const bool aggregates = NonEmptyArray(node, "group_expressions") || group_all ||
                            !aggregate_calls.empty();
    if (aggregates) {
      // Group keys: positions and GROUP BY ALL resolved to select-list items.
      std::vector<Json> keys;
      if (const Json* g = Field(node, "group_expressions"); g && g->is_array()) {
        for (const auto& k : *g) keys.push_back(ResolvePosition(k, select_list));
      }
      if (group_all) {
        for (const auto& item : select_list) {
          std::vector<const Json*> inner;
          FindAggregates(item, &inner);
          if (inner.empty() && Str(item, "class") != "WINDOW") keys.push_back(Unaliased(item));
        }
      }
      // A time window among the keys gets its own node below the aggregate.
      cur = MaybeWindow(keys, base, cur);
      Json agg = base;
      agg["select_list"] = Json::array();
      for (const auto& k : keys) agg["select_list"].push_back(k);
      for (const Json* a : aggregate_calls) agg["select_list"].push_back(Unaliased(*a));
      if (agg["select_list"].empty()) agg["select_list"].push_back(CountStar());
      agg["group_expressions"] = Json::array();
      for (const auto& k : keys) agg["group_expressions"].push_back(Unaliased(k));
      agg["group_sets"] = node.contains("group_sets") && node["group_sets"].size() > 1
                              ? node["group_sets"]
                              : Json::array();
      if (agg["group_sets"].empty() && !keys.empty()) {
        Json set = Json::array();
        for (size_t i = 0; i < keys.size(); ++i) set.push_back(i);
        agg["group_sets"] = Json::array({set});
      }
      auto a = NewNode(NodeKind::kAggregate, agg);
      for (const auto& k : keys) a->group_keys.push_back(exprs_.Convert(k));
      for (const Json* c : aggregate_calls) a->aggregates.push_back(exprs_.Convert(*c));
      a->group_by_all = group_all;
      a->grouping_sets = node.contains("group_sets") && node["group_sets"].size() > 1;
      a->inputs.push_back(cur);
      cur = a;
    }

    Json block = node;
    block["modifiers"] = Json::array();
    block["qualify"] = nullptr;
    block["cte_map"] = Json{{"map", Json::array()}};
    if (const Json* having = Field(node, "having")) {
      cur = Filter(block, *having, "having", cur);
    }
    auto p = NewNode(NodeKind::kProject, block);
    for (const auto& item : select_list) p->exprs.push_back(exprs_.Convert(item));
    p->inputs.push_back(cur);
    cur = p;
    if (const Json* qualify = Field(node, "qualify")) {
      block["qualify"] = *qualify;
      cur = Filter(block, *qualify, "qualify", cur);
    }
    Json full = node;
    full["cte_map"] = Json{{"map", Json::array()}};
    return Modifiers(full, cur, block);
  }

  // DISTINCT, ORDER BY, LIMIT in the order written; each a node whose SQL is
  // the query with the modifiers so far (`render` holds none yet).
  std::shared_ptr<PlanNode> Modifiers(const Json& node, std::shared_ptr<PlanNode> cur,
                                      Json render) {
    const Json* mods = Field(node, "modifiers");
    if (!mods || !mods->is_array()) return cur;
    render["modifiers"] = Json::array();
    for (const auto& m : *mods) {
      render["modifiers"].push_back(m);
      const std::string type = Str(m, "type");
      std::shared_ptr<PlanNode> n;
      if (type == "DISTINCT_MODIFIER") {
        n = NewNode(NodeKind::kDistinct, render);
        if (const Json* on = Field(m, "distinct_on_targets"); on && on->is_array()) {
          for (const auto& e : *on) n->exprs.push_back(exprs_.Convert(e));
        }
      } else if (type == "ORDER_MODIFIER") {
        n = NewNode(NodeKind::kSort, render);
        if (const Json* orders = Field(m, "orders"); orders && orders->is_array()) {
          for (const auto& o : *orders) {
            plan::SortKey k;
            if (const Json* e = Field(o, "expression")) k.expr = exprs_.Convert(*e);
            k.descending = Str(o, "type") == "DESCENDING";
            const std::string nulls = Str(o, "null_order");
            k.nulls = nulls == "NULLS_FIRST" ? "first" : nulls == "NULLS_LAST" ? "last" : "";
            n->order.push_back(std::move(k));
          }
        }
      } else if (type == "LIMIT_MODIFIER" || type == "LIMIT_PERCENT_MODIFIER") {
        n = NewNode(NodeKind::kLimit, render);
        if (const Json* l = Field(m, "limit")) n->limit = exprs_.Convert(*l).sql;
        if (const Json* o = Field(m, "offset")) n->offset = exprs_.Convert(*o).sql;
      } else {
        n = NewNode(NodeKind::kOpaque, render);
        n->opaque_reason = "the query modifier " + type;
      }
      n->inputs.push_back(cur);
      cur = n;
    }
    return cur;
  }

  std::shared_ptr<PlanNode> Values(const Json& base) {
    auto n = NewNode(NodeKind::kValues, base);
    return n;
  }


  // GROUP BY 2 -> the second select-list item.
  static Json ResolvePosition(const Json& key, const Json& select_list) {
    if (Str(key, "class") == "CONSTANT" && key.contains("value") && key["value"].is_object()) {
      const Json& v = key["value"];
      if (v.contains("value") && v["value"].is_number_integer()) {
        const int64_t k = v["value"].get<int64_t>();
        if (k >= 1 && select_list.is_array() && static_cast<size_t>(k) <= select_list.size()) {
          return Unaliased(select_list[static_cast<size_t>(k - 1)]);
        }
      }
    }
    return key;
  }

  // Aggregate calls of one block: not inside subqueries, not nested in
  // another aggregate's arguments.
  void FindAggregates(const Json& j, std::vector<const Json*>* out) const {
    if (j.is_array()) {
      for (const auto& v : j) FindAggregates(v, out);
      return;
    }
    if (!j.is_object()) return;
    const std::string cls = Str(j, "class");
    if (cls == "SUBQUERY") return;
    if (ExprConverter::IsAggregateCall(j)) {
      out->push_back(&j);
      return;
    }
    for (const auto& [k, v] : j.items()) FindAggregates(v, out);
  }

  // -------------------------------------------------------------- windows
  // The window use (from the dialect) a generated construct stands for: the
  // first one not taken, of the same kind, written on the construct's line
  // (the dialect rewrites in place, so lines are kept); else the first one
  // not taken of that kind. -1 when none is left.
  int TakeWindow(bool table_function, int line) {
    int fallback = -1;
    for (size_t i = 0; i < windows_.size(); ++i) {
      if (taken_[i] || windows_[i].from_table_function != table_function) continue;
      if (line > 0 && windows_[i].pos.line == line) {
        taken_[i] = true;
        return static_cast<int>(i);
      }
      if (fallback < 0) fallback = static_cast<int>(i);
    }
    if (fallback >= 0) taken_[static_cast<size_t>(fallback)] = true;
    return fallback;
  }

  std::shared_ptr<PlanNode> MaybeWindow(const std::vector<Json>& keys, const Json& base,
                                        std::shared_ptr<PlanNode> cur) {
    const Json* key = nullptr;
    for (const auto& k : keys) {
      if (IsWindowKey(k)) key = &k;
    }
    if (!key) return cur;
    const int taken = TakeWindow(/*table_function=*/false, exprs_.PosOf(*key).line);
    if (taken < 0) return cur;
    plan::WindowInfo w = windows_[static_cast<size_t>(taken)];
    Json render = base;
    Json item = Unaliased(*key);
    item["alias"] = w.shape == plan::WindowShape::kSession ? "session_window" : "window";
    if (Str(*key, "class") == "FUNCTION") render["select_list"].push_back(item);
    auto n = NewNode(NodeKind::kWindowAssign, render);
    n->window = std::move(w);
    n->pos = n->window.pos;
    n->inputs.push_back(cur);
    return n;
  }

  // The TUMBLE / HOP / SESSION table functions: the dialect's derived table
  // adds window_start / window_end to its relation.
  bool IsWindowTvf(const Json& subquery_node) const {
    const Json* list = Field(subquery_node, "select_list");
    if (!list || !list->is_array()) return false;
    bool start = false, end = false;
    for (const auto& item : *list) {
      start |= Str(item, "alias") == "window_start";
      end |= Str(item, "alias") == "window_end";
    }
    return start && end;
  }

  // The relation a window table function reads: the leftmost relation of the
  // dialect's derived table, past its own derived tables.
  std::shared_ptr<PlanNode> TvfInput(const Json& node) {
    const Json* from = Field(node, "from_table");
    while (from) {
      const std::string t = Str(*from, "type");
      if (t == "JOIN") {
        from = Field(*from, "left");
      } else if (t == "SUBQUERY" && internal::Lower(Str(*from, "alias")).rfind("__thund", 0) != 0 &&
                 Str(*from, "alias").empty()) {
        const Json* sub = Field(*from, "subquery");
        const Json* n = sub ? Field(*sub, "node") : nullptr;
        if (!n) break;
        from = Field(*n, "from_table");
      } else {
        break;
      }
    }
    return from ? TableRef(*from) : Values(BareSelect(EmptyFrom()));
  }

  // ------------------------------------------------------------ FROM tree
  std::shared_ptr<PlanNode> TableRef(const Json& ref) {
    const std::string type = Str(ref, "type");
    const Json render = BareSelect(ref);
    if (type == "BASE_TABLE") {
      std::vector<std::string> parts;
      for (const char* key : {"catalog_name", "schema_name", "table_name"}) {
        std::string s = Str(ref, key);
        if (!s.empty()) parts.push_back(s);
      }
      if (parts.size() == 1) {
        const std::string lower = internal::Lower(parts[0]);
        for (auto it = cte_plans_.rbegin(); it != cte_plans_.rend(); ++it) {
          if (it->first == lower) {
            if (it->second) {
              // A reference: the CTE's plan, named for this use.
              auto ref_node = std::make_shared<PlanNode>(*it->second);
              copies_.emplace_back(ref_node, it->second);
              ref_node->cte = parts[0];
              ref_node->alias = Str(ref, "alias").empty() ? parts[0] : Str(ref, "alias");
              ref_node->pos = NamePos(ref, parts[0]);
              return ref_node;
            }
            // A recursive CTE's self-reference.
            auto n = NewNode(NodeKind::kOpaque, render);
            n->opaque_reason = "a recursive CTE's reference to itself";
            return n;
          }
        }
      }
      auto n = NewNode(NodeKind::kScan, render);
      n->scan.kind = plan::ScanKind::kDataset;
      n->scan.name = parts;
      n->scan.alias = Str(ref, "alias");
      if (const Json* names = Field(ref, "column_name_alias"); names && names->is_array()) {
        for (const auto& c : *names) {
          if (c.is_string()) n->scan.column_aliases.push_back(c.get<std::string>());
        }
      }
      n->pos = NamePos(ref, parts.empty() ? "" : parts.back());
      return n;
    }
    if (type == "TABLE_FUNCTION") {
      const Json* fn = Field(ref, "function");
      auto n = NewNode(NodeKind::kScan, render);
      n->scan.kind = plan::ScanKind::kTableFunction;
      n->scan.alias = Str(ref, "alias");
      if (fn) {
        n->scan.name = {internal::Lower(Str(*fn, "function_name"))};
        if (const Json* children = Field(*fn, "children"); children && children->is_array()) {
          for (const auto& c : *children) {
            if (Str(c, "class") == "SUBQUERY") {
              CollectScans(c, n.get());
            }
            n->scan.args.push_back(exprs_.Convert(c));
          }
          if (!children->empty()) FilesOf((*children)[0], &n->scan.files);
        }
        n->pos = NamePos(*fn, n->scan.name.empty() ? "" : n->scan.name[0]);
      }
      return n;
    }
    if (type == "SUBQUERY") {
      const Json* sub = Field(ref, "subquery");
      const Json* node = sub ? Field(*sub, "node") : nullptr;
      if (!node) return Opaque(render, "a subquery without a query");
      if (IsWindowTvf(*node)) {
        const int taken = TakeWindow(/*table_function=*/true, exprs_.PosOf(ref).line);
        if (taken >= 0) {
          auto n = NewNode(NodeKind::kWindowAssign, render);
          n->window = windows_[static_cast<size_t>(taken)];
          n->pos = n->window.pos;
          n->inputs.push_back(TvfInput(*node));
          return n;
        }
      }
      // A derived table is its query; its alias only names it.
      std::shared_ptr<PlanNode> q = Query(*node);
      if (!q->cte.empty() || !q->alias.empty()) {
        auto copy = std::make_shared<PlanNode>(*q);
        copies_.emplace_back(copy, q);
        q = copy;
      }
      q->cte.clear();
      q->alias = Str(ref, "alias");
      return q;
    }
    if (type == "JOIN") return Join(ref, render);
    if (type == "EXPRESSION_LIST") {
      auto n = NewNode(NodeKind::kValues, render);
      if (const Json* values = Field(ref, "values"); values && values->is_array()) {
        for (const auto& row : *values) {
          std::vector<Expr> r;
          for (const auto& e : row) r.push_back(exprs_.Convert(e));
          n->rows.push_back(std::move(r));
        }
      }
      return n;
    }
    if (type == "EMPTY") return Values(render);
    return Opaque(render, type == "PIVOT" ? (NonEmptyArray(ref, "aggregates") ? "PIVOT" : "UNPIVOT")
                                          : "a " + type + " relation");
  }

  std::shared_ptr<PlanNode> Join(const Json& ref, const Json& render) {
    auto n = NewNode(NodeKind::kJoin, render);
    const std::string jt = Str(ref, "join_type");
    const std::string rt = Str(ref, "ref_type");
    using plan::JoinKind;
    n->join.kind = jt == "LEFT"    ? JoinKind::kLeft
                   : jt == "RIGHT" ? JoinKind::kRight
                   : jt == "FULL" || jt == "OUTER" ? JoinKind::kFull
                   : jt == "SEMI"  ? JoinKind::kSemi
                   : jt == "ANTI"  ? JoinKind::kAnti
                                   : JoinKind::kInner;
    if (rt == "CROSS") n->join.kind = JoinKind::kCross;
    if (rt == "ASOF") n->join.kind = JoinKind::kAsOf;
    if (rt == "POSITIONAL") n->join.kind = JoinKind::kPositional;
    n->join.lateral = Str(ref["right"], "type") == "SUBQUERY" && rt == "DEPENDENT";
    for (const char* side : {"left", "right"}) {
      if (const Json* s = Field(ref, side)) n->inputs.push_back(TableRef(*s));
    }
    if (const Json* cols = Field(ref, "using_columns"); cols && cols->is_array()) {
      for (const auto& c : *cols) {
        if (c.is_string()) n->join.using_columns.push_back(c.get<std::string>());
      }
    }
    if (const Json* cond = Field(ref, "condition")) SplitCondition(*cond, n.get());
    return n;
  }

  // Top-level conjuncts: column = column pairs become equi-keys, the rest the
  // residual; a BETWEEN (or a pair of bounds) on two columns a time bound.
  void SplitCondition(const Json& cond, PlanNode* n) {
    std::vector<const Json*> conjuncts;
    std::vector<const Json*> stack = {&cond};
    while (!stack.empty()) {
      const Json* c = stack.back();
      stack.pop_back();
      if (Str(*c, "type") == "CONJUNCTION_AND" && c->contains("children")) {
        const Json& ch = (*c)["children"];
        for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(&*it);
      } else {
        conjuncts.push_back(c);
      }
    }
    std::vector<Expr> rest;
    struct Bounds {
      const Json* column = nullptr;
      const Json* lower = nullptr;
      const Json* upper = nullptr;
    };
    std::map<std::string, Bounds> bounds;  // by the bounded column's name parts
    for (const Json* c : conjuncts) {
      const std::string t = Str(*c, "type");
      const Json* l = Field(*c, "left");
      const Json* r = Field(*c, "right");
      if (t == "COMPARE_EQUAL" && l && r && Str(*l, "class") == "COLUMN_REF" &&
          Str(*r, "class") == "COLUMN_REF") {
        n->join.equi_keys.emplace_back(exprs_.Convert(*l), exprs_.Convert(*r));
        continue;
      }
      if (t == "COMPARE_BETWEEN" && Field(*c, "input") && Field(*c, "lower") &&
          Field(*c, "upper") && Str((*c)["input"], "class") == "COLUMN_REF") {
        plan::JoinInfo::TimeBound b;
        b.right_time = exprs_.Convert((*c)["input"]);
        b.lower = exprs_.Convert((*c)["lower"]);
        b.upper = exprs_.Convert((*c)["upper"]);
        b.lower_sql = b.lower.sql;
        b.upper_sql = b.upper.sql;
        const Expr& lower = b.lower;
        b.left_time = ExprConverter::FirstColumn(lower);
        n->join.time_bound = std::move(b);
      }
      // One side of a bound pair: X >= lo / X > lo / X <= hi / X < hi (or flipped).
      const bool ge = t == "COMPARE_GREATERTHANOREQUALTO" || t == "COMPARE_GREATERTHAN";
      const bool le = t == "COMPARE_LESSTHANOREQUALTO" || t == "COMPARE_LESSTHAN";
      if ((ge || le) && l && r) {
        const bool left_is_column = Str(*l, "class") == "COLUMN_REF";
        const Json* column = left_is_column ? l : r;
        const Json* other = left_is_column ? r : l;
        const bool lower = left_is_column ? ge : le;
        if (Str(*column, "class") == "COLUMN_REF" && Str(*other, "class") != "CONSTANT") {
          const std::string key = column->contains("column_names")
                                      ? JsonText((*column)["column_names"])
                                      : std::string();
          bounds[key].column = column;
          (lower ? bounds[key].lower : bounds[key].upper) = other;
        }
      }
      rest.push_back(exprs_.Convert(*c));
    }
    // a.ts >= b.ts - INTERVAL x AND a.ts <= b.ts + INTERVAL y: a time bound
    // like BETWEEN, when the two bounds read a column of their own.
    for (const auto& [key, b] : bounds) {
      if (n->join.time_bound || !b.lower || !b.upper) continue;
      plan::JoinInfo::TimeBound tb;
      tb.right_time = exprs_.Convert(*b.column);
      const Expr lower = exprs_.Convert(*b.lower);
      tb.left_time = ExprConverter::FirstColumn(lower);
      if (tb.left_time.kind != ExprKind::kColumn) continue;
      tb.lower = lower;
      tb.upper = exprs_.Convert(*b.upper);
      tb.lower_sql = lower.sql;
      tb.upper_sql = tb.upper.sql;
      n->join.time_bound = std::move(tb);
    }
    if (rest.size() == 1) {
      n->join.residual = std::move(rest[0]);
    } else if (!rest.empty()) {
      Expr all;
      all.kind = ExprKind::kOperator;
      all.name = "and";
      all.args = std::move(rest);
      n->join.residual = std::move(all);
    }
  }



 private:
  std::string_view user_sql_;
  std::string_view duck_sql_;
  std::vector<plan::WindowInfo> windows_;
  std::vector<bool> taken_ = std::vector<bool>(windows_.size(), false);
  std::vector<const Json*> cte_entries_;
  std::vector<std::pair<std::string, std::shared_ptr<PlanNode>>> cte_plans_;
  std::vector<RenderJob> renders_;
  std::vector<std::shared_ptr<PlanNode>> nodes_;
  std::vector<std::pair<std::shared_ptr<PlanNode>, std::shared_ptr<PlanNode>>> copies_;
  ExprConverter exprs_;  // last: it keeps a pointer to renders_
};

}  // namespace

void WalkResult::FinishCopies() {
  for (auto& [copy, original] : copies) {
    const std::string alias = copy->alias, cte = copy->cte;
    const plan::TextPos pos = copy->pos;
    *copy = *original;
    copy->alias = alias;
    copy->cte = cte;
    if (pos.known()) copy->pos = pos;
  }
}

arrow::Result<WalkResult> WalkStatement(const nlohmann::ordered_json& statement,
                                        std::string_view user_sql, std::string_view duck_sql,
                                        std::vector<plan::WindowInfo> windows) {
  Walker w(user_sql, duck_sql, std::move(windows));
  ARROW_ASSIGN_OR_RAISE(WalkResult out, w.Run(statement));
  // Render every node and expression in one batch.
  std::vector<std::string> docs;
  docs.reserve(out.renders.size());
  for (const auto& r : out.renders) docs.push_back(r.document);
  ARROW_ASSIGN_OR_RAISE(auto texts, internal::RenderSqlJson(docs));
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string text = texts[i].ok() ? *texts[i] : std::string();
    if (out.renders[i].strip_select && text.rfind("SELECT ", 0) == 0) text = text.substr(7);
    *out.renders[i].target = std::move(text);
  }
  for (auto& n : out.nodes) w.exprs().Fill(*n);
  return out;
}

}  // namespace thund::sql
