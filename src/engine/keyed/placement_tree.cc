#include "engine/keyed/placement_tree.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "sql/duckdb_parser.h"

namespace thund::engine::keyed::placement_internal {

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

namespace {

std::string Str(const Json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool IsNullOrEmpty(const Json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() || (it->is_array() && it->empty());
}

class Planner {
 public:
  explicit Planner(const std::vector<SourceSchema>& sources) : sources_(sources) {}

  QueryColumns Node(const Json& node) {
    if (!IsNullOrEmpty(node["cte_map"], "map")) return Opaque("the query has a WITH clause");
    for (const auto& m : node["modifiers"]) {
      const std::string type = Str(m, "type");
      if (type == "LIMIT_MODIFIER" || type == "LIMIT_PERCENT_MODIFIER") {
        return Opaque("the query has a LIMIT");
      }
      if (type == "DISTINCT_MODIFIER" && !IsNullOrEmpty(m, "distinct_on_targets")) {
        return Opaque("the query has DISTINCT ON");
      }
    }
    const std::string type = Str(node, "type");
    if (type == "SELECT_NODE") return Select(node);
    if (type == "SET_OPERATION_NODE") return SetOperation(node);
    return Opaque("the query is a " + type);
  }

  std::map<std::string, int>& references() { return references_; }

 private:
  static QueryColumns Opaque(std::string why) {
    QueryColumns r;
    r.opaque = true;
    r.why = std::move(why);
    return r;
  }

  static bool HasWindow(const Json& j) {
    if (j.is_object()) {
      if (Str(j, "class") == "WINDOW") return true;
      for (const auto& [k, v] : j.items()) {
        if (HasWindow(v)) return true;
      }
    } else if (j.is_array()) {
      for (const auto& v : j) {
        if (HasWindow(v)) return true;
      }
    }
    return false;
  }

  // Counts every BASE_TABLE anywhere (FROM, subqueries in WHERE, ...).
  void CountReferences(const Json& j) {
    if (j.is_object()) {
      if (Str(j, "type") == "BASE_TABLE" && !j.contains("class")) {
        ++references_[Lower(Str(j, "table_name"))];
      }
      for (const auto& [k, v] : j.items()) CountReferences(v);
    } else if (j.is_array()) {
      for (const auto& v : j) CountReferences(v);
    }
  }

 public:
  void Count(const Json& root) { CountReferences(root); }

 private:
  QueryColumns SetOperation(const Json& node) {
    const std::string op = Str(node, "setop_type");
    if (op != "UNION" && op != "UNION_BY_NAME") return Opaque("the query uses " + op);
    QueryColumns left = Node(node["left"]);
    QueryColumns right = Node(node["right"]);
    if (left.opaque) return left;
    if (right.opaque) return right;
    QueryColumns out;
    out.columns = left.columns;
    for (size_t i = 0; i < out.columns.size(); ++i) {
      const OutColumn* other = nullptr;
      if (op == "UNION") {
        if (i < right.columns.size()) other = &right.columns[i];
      } else {
        for (const auto& c : right.columns) {
          if (Lower(c.name) == Lower(out.columns[i].name)) other = &c;
        }
      }
      if (other == nullptr || !other->plain) {
        out.columns[i].plain = false;
        out.columns[i].origins.clear();
        continue;
      }
      out.columns[i].origins.insert(out.columns[i].origins.end(), other->origins.begin(),
                                    other->origins.end());
    }
    return out;
  }

  // Relations of a FROM clause, left to right.
  std::vector<Relation> From(const Json& ref, bool preserved, std::string* why) {
    if (ref.is_null()) return {};
    const std::string type = Str(ref, "type");
    if (type == "BASE_TABLE") {
      Relation rel;
      const std::string table = Str(ref, "table_name");
      rel.alias = Str(ref, "alias").empty() ? table : Str(ref, "alias");
      rel.preserved = preserved;
      const SourceSchema* src = nullptr;
      for (const auto& s : sources_) {
        if (Lower(s.name) == Lower(table) && Str(ref, "schema_name").empty()) src = &s;
      }
      if (src == nullptr) {
        rel.opaque = true;
        *why = "'" + table + "' is not a source of this write";
        return {rel};
      }
      for (const auto& f : src->schema->fields()) {
        rel.columns.push_back(OutColumn{f->name(), true, {Origin{src->name, f->name()}}});
      }
      if (!IsNullOrEmpty(ref, "column_name_alias")) {
        const auto& names = ref["column_name_alias"];
        for (size_t i = 0; i < names.size() && i < rel.columns.size(); ++i) {
          rel.columns[i].name = names[i].get<std::string>();
        }
      }
      return {rel};
    }
    if (type == "SUBQUERY") {
      QueryColumns sub = Node(ref["subquery"]["node"]);
      Relation rel;
      rel.alias = Str(ref, "alias");
      rel.preserved = preserved;
      rel.opaque = sub.opaque;
      rel.columns = sub.columns;
      if (sub.opaque) *why = sub.why;
      return {rel};
    }
    if (type == "JOIN") {
      const std::string join = Str(ref, "join_type");
      const std::string kind = Str(ref, "ref_type");
      bool left_ok = false, right_ok = false, right_visible = true;
      if (kind == "POSITIONAL") {
        *why = "a POSITIONAL JOIN pairs rows by position";
      } else if (join == "INNER") {
        left_ok = right_ok = true;
      } else if (join == "LEFT") {
        left_ok = true;
      } else if (join == "RIGHT") {
        right_ok = true;
      } else if (join == "SEMI" || join == "ANTI") {
        left_ok = true;
        right_visible = false;
      } else {
        *why = "a " + join + " join can null-supply both sides";
      }
      std::vector<Relation> out = From(ref["left"], preserved && left_ok, why);
      std::vector<Relation> right = From(ref["right"], preserved && right_ok, why);
      for (auto& r : right) r.visible = r.visible && right_visible;
      out.insert(out.end(), right.begin(), right.end());
      return out;
    }
    Relation rel;
    rel.opaque = true;
    rel.alias = Str(ref, "alias");
    return {rel};  // table functions, VALUES, ...: no source columns
  }

  // Resolves a column reference in `rels`.
  std::optional<OutColumn> Column(const std::vector<Relation>& rels,
                                  const std::vector<std::string>& parts) {
    const std::string col = Lower(parts.back());
    std::vector<const OutColumn*> found;
    bool preserved = true;
    for (const auto& rel : rels) {
      if (!rel.visible) continue;
      if (parts.size() >= 2 && Lower(rel.alias) != Lower(parts[parts.size() - 2])) continue;
      for (const auto& c : rel.columns) {
        if (Lower(c.name) == col) {
          found.push_back(&c);
          preserved = preserved && rel.preserved && !rel.opaque;
        }
      }
    }
    if (found.size() != 1 || !preserved) return std::nullopt;  // ambiguous/USING/null-supplied
    return *found[0];
  }

  QueryColumns Select(const Json& node) {
    if (!IsNullOrEmpty(node, "group_expressions") || !node["having"].is_null()) {
      return Opaque("the query aggregates (GROUP BY / HAVING)");
    }
    if (!node["qualify"].is_null() || HasWindow(node["select_list"])) {
      return Opaque("the query uses window functions");
    }
    std::string why;
    std::vector<Relation> rels = From(node["from_table"], true, &why);
    QueryColumns out;
    for (const auto& expr : node["select_list"]) {
      const std::string cls = Str(expr, "class");
      const std::string alias = Str(expr, "alias");
      if (cls == "COLUMN_REF") {
        std::vector<std::string> parts = expr["column_names"].get<std::vector<std::string>>();
        auto c = Column(rels, parts);
        OutColumn oc = c.value_or(OutColumn{});
        oc.name = alias.empty() ? parts.back() : alias;
        if (!c || !c->plain) {
          oc.plain = false;
          oc.origins.clear();
        }
        out.columns.push_back(std::move(oc));
      } else if (cls == "STAR") {
        if (expr.value("columns", false) || !expr["expr"].is_null()) {
          return Opaque("the query uses COLUMNS(...)");
        }
        std::set<std::string> excluded, replaced;
        for (const auto& e : expr["exclude_list"]) excluded.insert(Lower(e.get<std::string>()));
        for (const auto& e : expr["replace_list"]) {
          replaced.insert(Lower(e.is_object() ? Str(e, "key") : e.dump()));
        }
        const std::string qualifier = Lower(Str(expr, "relation_name"));
        for (const auto& rel : rels) {
          if (!rel.visible || (!qualifier.empty() && Lower(rel.alias) != qualifier)) continue;
          if (rel.opaque) return Opaque(why.empty() ? "`*` over an unknown relation" : why);
          for (OutColumn c : rel.columns) {
            if (excluded.count(Lower(c.name))) continue;
            if (replaced.count(Lower(c.name)) || !rel.preserved) {
              c.plain = false;
              c.origins.clear();
            }
            out.columns.push_back(std::move(c));
          }
        }
      } else {
        out.columns.push_back(OutColumn{alias, false, {}});
      }
    }
    if (out.why.empty()) out.why = why;
    return out;
  }

  const std::vector<SourceSchema>& sources_;
  std::map<std::string, int> references_;
};

bool HasAggregateOrSubquery(const Json& j) {
  if (j.is_object()) {
    const std::string cls = Str(j, "class");
    if (cls == "SUBQUERY" || cls == "WINDOW") return true;
    if (cls == "FUNCTION" &&
        internal::AggregateFunctionNames().count(Lower(Str(j, "function_name"))) > 0) {
      return true;
    }
    for (const auto& [k, v] : j.items()) {
      if (HasAggregateOrSubquery(v)) return true;
    }
  } else if (j.is_array()) {
    for (const auto& v : j) {
      if (HasAggregateOrSubquery(v)) return true;
    }
  }
  return false;
}

}  // namespace

QueryColumns AnalyzeQuery(const Json& root, const std::vector<SourceSchema>& sources,
                          std::map<std::string, int>* references) {
  Planner planner(sources);
  planner.Count(root);
  QueryColumns out = planner.Node(root);
  *references = planner.references();
  return out;
}

bool IsRowWise(const Json& node, const std::vector<SourceSchema>& sources) {
  if (sources.size() != 1 || Str(node, "type") != "SELECT_NODE") return false;
  if (!node["modifiers"].empty() || !IsNullOrEmpty(node["cte_map"], "map")) return false;
  if (!IsNullOrEmpty(node, "group_expressions") || !node["having"].is_null() ||
      !node["qualify"].is_null() || !node["sample"].is_null()) {
    return false;
  }
  const Json& from = node["from_table"];
  if (Str(from, "type") != "BASE_TABLE" || !Str(from, "schema_name").empty() ||
      Lower(Str(from, "table_name")) != Lower(sources[0].name)) {
    return false;
  }
  return !HasAggregateOrSubquery(node["select_list"]) &&
         !HasAggregateOrSubquery(node["where_clause"]);
}

}  // namespace thund::engine::keyed::placement_internal
