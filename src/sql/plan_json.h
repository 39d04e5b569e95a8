// Internal to the plan walk: small readers and builders of DuckDB's parse-tree
// documents (json_serialize_sql's shape). Only src/sql/plan_*.cc include this;
// nothing outside src/sql/ sees a parse tree.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace thund::sql::plan_json {

using Json = nlohmann::ordered_json;

// Typed look-ups that never throw: "" / null / false when absent or mistyped.
std::string Str(const Json& j, const char* key);
const Json* Field(const Json& j, const char* key);  // null for a missing or null field
bool NonEmptyArray(const Json& j, const char* key);

// Names of the operator expression types ("COMPARE_EQUAL" -> "=").
const std::map<std::string, std::string>& OperatorNames();

// A statement document holding one query node, for json_deserialize_sql.
std::string StatementDocument(const Json& query_node);

// Parse-tree fragments: the empty FROM, `*`, `SELECT * FROM <from>`, count(*).
Json EmptyFrom();
Json StarExpr();
Json BareSelect(const Json& from);
Json CountStar();

// A column reference to `names` (a column, or a struct path below it).
Json ColumnRef(const std::vector<std::string>& names, const std::string& alias = "");

// The name parts of a column reference (empty for anything else).
std::vector<std::string> ColumnNames(const Json& ref);

// The lower-cased last name part of a column reference ("" for anything else).
std::string LastColumnName(const Json& ref);

// `e` without its alias.
Json Unaliased(const Json& e);

// A time window among GROUP BY keys, in the forms the dialect writes: a
// "window" / "session_window" column, or a {'start', 'end'} struct for a
// tumbling window().
bool IsWindowKey(const Json& k);

// Replaces every column reference named `placeholder` in `j` by `with`.
void ReplaceColumn(Json* j, const std::string& placeholder, const Json& with);

}  // namespace thund::sql::plan_json
