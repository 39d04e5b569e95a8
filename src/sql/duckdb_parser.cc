#include "sql/duckdb_parser.h"

#include "sql/duckdb_functions.h"

#include "sql/duckdb_types.h"
#include "sql/verdict_cache.h"

#include <duckdb.h>

#include <arrow/c/abi.h>
#include <arrow/c/bridge.h>
#include <arrow/type.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <unordered_map>
#include <vector>

namespace thund::internal {
namespace {

// DuckDB's C API turns most of its exceptions into error results, but not
// every entry point catches (duckdb_fetch_chunk, for one, allocates without a
// guard): whatever a call throws becomes a Status here, so no caller of the
// parser or binder ever sees an exception (issue 21: exceptions from
// libraries never reach std::terminate).
template <typename F>
auto GuardDuckDb(const char* step, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return arrow::Status::OutOfMemory("DuckDB ran out of memory while ", step,
                                      "; simplify the query or free memory");
  } catch (const std::exception& e) {
    return arrow::Status::UnknownError("DuckDB failed while ", step, ": ", e.what());
  } catch (...) {
    return arrow::Status::UnknownError("DuckDB failed while ", step, " (an unknown exception)");
  }
}

}  // namespace

namespace {

// Spark SQL aggregates that DuckDB does not define under the same name.
constexpr const char* kSparkOnlyAggregates[] = {
    "collect_list",
    "collect_set",
    "percentile",
    "percentile_approx",
    "approx_percentile",
    "std",
    "every",
    "some",
    "max_by",
    "min_by",
};

// One in-memory database and connection, created on first use. DuckDB
// connections are not thread-safe, so every statement runs under `mu`.
class ParserDb {
 public:
  static ParserDb& Get() {
    static ParserDb instance(/*external_access=*/false);
    return instance;
  }
  // The binder's database: like the parser's, but it may read files, so a
  // query over read_parquet(...) / read_csv(...) binds to the files' schemas.
  static ParserDb& Binder() {
    static ParserDb instance(/*external_access=*/true);
    return instance;
  }

  // Runs `sql` with the optional single VARCHAR parameter and returns the
  // first column of every row as text (NULL -> empty), or the error.
  arrow::Result<std::vector<std::string>> QueryStrings(const char* sql,
                                                       std::optional<std::string_view> param) {
    std::lock_guard<std::mutex> lock(mu_);
    return GuardDuckDb("parsing SQL", [&] { return QueryStringsLocked(sql, param); });
  }

  // Runs `fn(connection)` under the connection's lock; what it throws is an error.
  template <typename Fn>
  auto WithConnection(Fn&& fn) -> decltype(fn(duckdb_connection{})) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_error_.empty()) return arrow::Status::IOError("DuckDB parser: ", open_error_);
    return GuardDuckDb("binding SQL", [&] { return fn(con_); });
  }

 private:
  arrow::Result<std::vector<std::string>> QueryStringsLocked(
      const char* sql, std::optional<std::string_view> param) {
    if (!open_error_.empty()) return arrow::Status::IOError("DuckDB parser: ", open_error_);
    duckdb_prepared_statement stmt = nullptr;
    if (duckdb_prepare(con_, sql, &stmt) != DuckDBSuccess) {
      std::string msg = duckdb_prepare_error(stmt) ? duckdb_prepare_error(stmt) : "prepare failed";
      duckdb_destroy_prepare(&stmt);
      return arrow::Status::UnknownError("DuckDB parser: ", msg);
    }
    std::unique_ptr<duckdb_prepared_statement, void (*)(duckdb_prepared_statement*)> stmt_guard(
        &stmt, duckdb_destroy_prepare);
    if (param &&
        duckdb_bind_varchar_length(stmt, 1, param->data(), param->size()) != DuckDBSuccess) {
      return arrow::Status::UnknownError("DuckDB parser: cannot bind the SQL text");
    }
    duckdb_result result;
    if (duckdb_execute_prepared(stmt, &result) != DuckDBSuccess) {
      std::string msg = duckdb_result_error(&result) ? duckdb_result_error(&result) : "failed";
      duckdb_destroy_result(&result);
      return arrow::Status::UnknownError("DuckDB parser: ", msg);
    }
    std::unique_ptr<duckdb_result, void (*)(duckdb_result*)> result_guard(&result,
                                                                          duckdb_destroy_result);
    std::vector<std::string> out;
    while (true) {
      duckdb_data_chunk chunk = duckdb_fetch_chunk(result);
      if (!chunk) break;
      std::unique_ptr<duckdb_data_chunk, void (*)(duckdb_data_chunk*)> chunk_guard(
          &chunk, duckdb_destroy_data_chunk);
      idx_t rows = duckdb_data_chunk_get_size(chunk);
      if (rows == 0) break;
      duckdb_vector vec = duckdb_data_chunk_get_vector(chunk, 0);
      auto* data = static_cast<duckdb_string_t*>(duckdb_vector_get_data(vec));
      uint64_t* validity = duckdb_vector_get_validity(vec);
      for (idx_t r = 0; r < rows; ++r) {
        if (validity && !duckdb_validity_row_is_valid(validity, r)) {
          out.emplace_back();
          continue;
        }
        out.emplace_back(duckdb_string_t_data(&data[r]), duckdb_string_t_length(data[r]));
      }
    }
    return out;
  }


  explicit ParserDb(bool external_access) {
    duckdb_config config = nullptr;
    if (duckdb_create_config(&config) != DuckDBSuccess) {
      open_error_ = "cannot create a configuration";
      return;
    }
    duckdb_set_config(config, "threads", "1");
    duckdb_set_config(config, "enable_external_access", external_access ? "true" : "false");
    duckdb_set_config(config, "autoinstall_known_extensions", "false");
    duckdb_set_config(config, "autoload_known_extensions", "false");
    char* err = nullptr;
    if (duckdb_open_ext(nullptr, &db_, config, &err) != DuckDBSuccess) {
      open_error_ = err ? err : "cannot open an in-memory database";
      if (err) duckdb_free(err);
      db_ = nullptr;
    } else if (duckdb_connect(db_, &con_) != DuckDBSuccess) {
      open_error_ = "cannot connect to the in-memory database";
      con_ = nullptr;
    }
    if (con_) {
      // The engine's sessions run in UTC (DuckDbSessionOptions::time_zone);
      // bound TIMESTAMPTZ types carry the same zone.
      duckdb_result r;
      (void)duckdb_query(con_, "SET TimeZone = 'UTC'", &r);
      duckdb_destroy_result(&r);
      // The dialect's SQL calls thund's functions: they bind here too.
      arrow::Status st = sql::RegisterThundFunctions(con_);
      if (!st.ok()) open_error_ = st.message();
    }
    duckdb_destroy_config(&config);
  }
  ~ParserDb() {
    if (con_) duckdb_disconnect(&con_);
    if (db_) duckdb_close(&db_);
  }
  ParserDb(const ParserDb&) = delete;
  ParserDb& operator=(const ParserDb&) = delete;

  std::mutex mu_;
  duckdb_database db_ = nullptr;
  duckdb_connection con_ = nullptr;
  std::string open_error_;
};

}  // namespace

TextPosition PositionOf(std::string_view text, size_t offset) {
  TextPosition pos;
  if (offset > text.size()) offset = text.size();
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

namespace {

arrow::Result<nlohmann::ordered_json> ParseUncached(std::string_view duckdb_sql,
                                                   size_t user_offset) {
  ARROW_ASSIGN_OR_RAISE(
      auto rows, ParserDb::Get().QueryStrings("SELECT json_serialize_sql(?::VARCHAR)", duckdb_sql));
  if (rows.size() != 1) {
    return arrow::Status::UnknownError("DuckDB parser: json_serialize_sql returned ", rows.size(),
                                       " rows");
  }
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(rows[0], nullptr,
                                                             /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return arrow::Status::UnknownError("DuckDB parser: json_serialize_sql returned invalid JSON");
  }
  // Typed look-ups that never throw, whatever the document holds.
  auto text_field = [&doc](const char* key, const char* fallback) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string(fallback);
  };
  auto error_it = doc.find("error");
  if (error_it != doc.end() && error_it->is_boolean() && error_it->get<bool>()) {
    std::string message = text_field("error_message", "the SQL does not parse");
    if (text_field("error_type", "") == "not implemented") {
      // json_serialize_sql serializes SELECT statements only.
      return arrow::Status::Invalid("expected a SELECT query (DuckDB: ", message, ")");
    }
    const auto pos_it = doc.find("position");
    std::optional<size_t> offset;
    if (pos_it != doc.end()) {
      if (pos_it->is_number_unsigned()) {
        offset = pos_it->get<size_t>();
      } else if (pos_it->is_string()) {
        const std::string& s = pos_it->get_ref<const std::string&>();
        if (!s.empty() && s.find_first_not_of("0123456789") == std::string::npos && s.size() < 19) {
          offset = std::stoull(s);
        }
      }
    }
    if (!offset) return arrow::Status::Invalid(message);
    std::string_view user_text = duckdb_sql.substr(std::min(user_offset, duckdb_sql.size()));
    *offset = std::min(*offset > user_offset ? *offset - user_offset : 0, user_text.size());
    TextPosition p = PositionOf(user_text, *offset);
    return arrow::Status::Invalid(message, " (at offset ", *offset, ", line ", p.line, ", column ",
                                  p.column, ")");
  }
  auto st = doc.find("statements");
  if (st == doc.end()) return nlohmann::ordered_json::array();
  if (!st->is_array()) {
    return arrow::Status::UnknownError("DuckDB parser: unexpected json_serialize_sql output");
  }
  return std::move(*st);
}

}  // namespace

arrow::Result<nlohmann::ordered_json> ParseSqlToJson(std::string_view duckdb_sql,
                                                     size_t user_offset) {
  // A run parses each flow's SQL several times (validation, input discovery
  // for the fingerprint, the run); each parse is a DuckDB prepare + execute.
  static sql::VerdictCache<nlohmann::ordered_json> cache(256);
  std::string key(duckdb_sql);
  key.push_back('\0');
  key += std::to_string(user_offset);
  return cache.GetOrCompute(key, [&] { return ParseUncached(duckdb_sql, user_offset); });
}

arrow::Result<const std::unordered_set<std::string>*> FunctionNames() {
  static const arrow::Result<std::unordered_set<std::string>> names =
      []() -> arrow::Result<std::unordered_set<std::string>> {
    ARROW_ASSIGN_OR_RAISE(auto rows,
                          ParserDb::Get().QueryStrings(
                              "SELECT DISTINCT lower(function_name) FROM duckdb_functions()",
                              std::nullopt));
    return std::unordered_set<std::string>(std::make_move_iterator(rows.begin()),
                                           std::make_move_iterator(rows.end()));
  }();
  if (!names.ok()) return names.status();
  return &*names;
}

const std::unordered_set<std::string>& AggregateFunctionNames() {
  static const std::unordered_set<std::string> names = [] {
    std::unordered_set<std::string> out(std::begin(kSparkOnlyAggregates),
                                        std::end(kSparkOnlyAggregates));
    auto rows = ParserDb::Get().QueryStrings(
        "SELECT DISTINCT lower(function_name) FROM duckdb_functions() "
        "WHERE function_type = 'aggregate'",
        std::nullopt);
    if (rows.ok()) {
      for (auto& r : *rows) out.insert(std::move(r));
    } else {
      // Without DuckDB's catalog fall back to the common aggregates.
      for (const char* n : {"count", "count_star", "sum", "min", "max", "avg", "mean", "first",
                            "last", "any_value", "list", "array_agg", "string_agg"}) {
        out.insert(n);
      }
    }
    return out;
  }();
  return names;
}

namespace {

arrow::Status RunStatement(duckdb_connection con, const std::string& sql) {
  duckdb_result result;
  const bool ok = duckdb_query(con, sql.c_str(), &result) == DuckDBSuccess;
  std::string msg = ok ? "" : (duckdb_result_error(&result) ? duckdb_result_error(&result) : "");
  duckdb_destroy_result(&result);
  if (!ok) return arrow::Status::Invalid(msg);
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Schema>> ResultSchema(duckdb_connection con,
                                                           const std::string& query) {
  const std::string sql = "SELECT * FROM (" + query + "\n) LIMIT 0";
  duckdb_result result;
  if (duckdb_query(con, sql.c_str(), &result) != DuckDBSuccess) {
    std::string msg = duckdb_result_error(&result) ? duckdb_result_error(&result) : "bind failed";
    duckdb_destroy_result(&result);
    // DuckDB appends the rendered query with a caret; the plan node says where.
    if (size_t cut = msg.find("\n\nLINE "); cut != std::string::npos) msg.resize(cut);
    return arrow::Status::Invalid(msg);
  }
  std::unique_ptr<duckdb_result, void (*)(duckdb_result*)> guard(&result, duckdb_destroy_result);
  duckdb_arrow_options options = duckdb_result_get_arrow_options(&result);
  const idx_t n = duckdb_column_count(&result);
  std::vector<duckdb_logical_type> types;
  std::vector<const char*> names;
  for (idx_t i = 0; i < n; ++i) {
    types.push_back(duckdb_column_logical_type(&result, i));
    names.push_back(duckdb_column_name(&result, i));
  }
  struct ArrowSchema c_schema;
  c_schema.release = nullptr;
  duckdb_error_data err = duckdb_to_arrow_schema(options, types.data(), names.data(), n, &c_schema);
  for (auto& t : types) duckdb_destroy_logical_type(&t);
  duckdb_destroy_arrow_options(&options);
  if (err) {
    std::string msg = duckdb_error_data_has_error(err) ? duckdb_error_data_message(err) : "";
    const bool failed = duckdb_error_data_has_error(err);
    duckdb_destroy_error_data(&err);
    if (failed) return arrow::Status::UnknownError("DuckDB -> Arrow schema: ", msg);
  }
  return arrow::ImportSchema(&c_schema);
}

}  // namespace

arrow::Result<std::vector<arrow::Result<std::string>>> RenderSqlJson(
    const std::vector<std::string>& documents) {
  std::vector<arrow::Result<std::string>> out;
  if (documents.empty()) return out;
  std::string array = "[";
  for (size_t i = 0; i < documents.size(); ++i) array += (i ? "," : "") + documents[i];
  array += "]";
  ARROW_ASSIGN_OR_RAISE(
      auto rows,
      ParserDb::Get().QueryStrings(
          "SELECT try(json_deserialize_sql(value)) FROM json_each(?::VARCHAR) ORDER BY key::INT",
          array));
  if (rows.size() != documents.size()) {
    return arrow::Status::UnknownError("DuckDB renderer: ", rows.size(), " results for ",
                                       documents.size(), " documents");
  }
  for (auto& r : rows) {
    if (r.empty()) {
      out.emplace_back(arrow::Status::Invalid("the plan fragment does not render as SQL"));
    } else {
      out.emplace_back(std::move(r));
    }
  }
  return out;
}

arrow::Result<std::vector<arrow::Result<std::shared_ptr<arrow::Schema>>>> BindQuerySchemas(
    const std::vector<std::pair<std::vector<std::string>, std::shared_ptr<arrow::Schema>>>& tables,
    const std::vector<std::string>& queries) {
  using Out = std::vector<arrow::Result<std::shared_ptr<arrow::Schema>>>;
  return ParserDb::Binder().WithConnection([&](duckdb_connection con) -> arrow::Result<Out> {
    ARROW_RETURN_NOT_OK(RunStatement(con, "BEGIN TRANSACTION"));
    Out out;
    for (const auto& [name, schema] : tables) {
      if (!schema || name.empty()) continue;
      std::string cols;
      for (const auto& f : schema->fields()) {
        cols += (cols.empty() ? "" : ", ") + sql::QuoteIdent(f->name()) + " " +
                sql::DuckDbTypeName(*f->type());
      }
      if (cols.empty()) continue;
      std::string qualified;
      for (size_t i = 0; i + 1 < name.size(); ++i) {
        qualified += sql::QuoteIdent(name[i]) + ".";
      }
      if (name.size() == 2) {
        (void)RunStatement(con, "CREATE SCHEMA IF NOT EXISTS " + sql::QuoteIdent(name[0]));
      }
      // A table DuckDB refuses leaves the queries over it unbound, with the
      // binder's message.
      (void)RunStatement(con, "CREATE TABLE " + qualified + sql::QuoteIdent(name.back()) + " (" +
                                  cols + ")");
    }
    for (const auto& q : queries) out.push_back(ResultSchema(con, q));
    (void)RunStatement(con, "ROLLBACK");
    return out;
  });
}

}  // namespace thund::internal
