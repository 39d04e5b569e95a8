// A small in-memory DuckDB for tests: run statements, read results as text.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <duckdb.h>
#include <gtest/gtest.h>

#include "sql/duckdb_functions.h"

namespace thund::testing {

class DuckDbRunner {
 public:
  DuckDbRunner() {
    if (duckdb_open(nullptr, &db_) != DuckDBSuccess ||
        duckdb_connect(db_, &con_) != DuckDBSuccess) {
      ADD_FAILURE() << "cannot open an in-memory DuckDB";
    }
    Exec("SET TimeZone = 'UTC'");
    // The dialect's SQL calls thund's own functions, as every thund session has.
    if (con_ && !sql::RegisterThundFunctions(con_).ok()) ADD_FAILURE() << "thund functions";
  }
  ~DuckDbRunner() {
    if (con_) duckdb_disconnect(&con_);
    if (db_) duckdb_close(&db_);
  }
  DuckDbRunner(const DuckDbRunner&) = delete;
  DuckDbRunner& operator=(const DuckDbRunner&) = delete;

  // Runs `sql`; on error returns false and puts DuckDB's message in *error.
  bool Exec(const std::string& sql, std::string* error = nullptr) {
    duckdb_result r;
    bool ok = duckdb_query(con_, sql.c_str(), &r) == DuckDBSuccess;
    if (!ok && error) *error = duckdb_result_error(&r) ? duckdb_result_error(&r) : "error";
    duckdb_destroy_result(&r);
    return ok;
  }

  // Every value of `sql`'s result as text ("NULL" for nulls), row by row.
  std::vector<std::vector<std::string>> Rows(const std::string& sql, std::string* error = nullptr) {
    std::vector<std::vector<std::string>> out;
    const std::string q = "SELECT COLUMNS(*)::VARCHAR FROM (" + sql + ")";
    duckdb_result r;
    if (duckdb_query(con_, q.c_str(), &r) != DuckDBSuccess) {
      std::string msg = duckdb_result_error(&r) ? duckdb_result_error(&r) : "error";
      if (error)
        *error = msg;
      else
        ADD_FAILURE() << "DuckDB: " << msg << "\nquery: " << sql;
      duckdb_destroy_result(&r);
      return out;
    }
    const idx_t rows = duckdb_row_count(&r), cols = duckdb_column_count(&r);
    for (idx_t i = 0; i < rows; ++i) {
      std::vector<std::string> row;
      for (idx_t c = 0; c < cols; ++c) {
        char* v = duckdb_value_varchar(&r, c, i);
        row.push_back(v ? v : "NULL");
        if (v) duckdb_free(v);
      }
      out.push_back(std::move(row));
    }
    duckdb_destroy_result(&r);
    return out;
  }

  std::vector<std::string> ColumnNames(const std::string& sql) {
    std::vector<std::string> out;
    duckdb_result r;
    if (duckdb_query(con_, ("SELECT * FROM (" + sql + ") LIMIT 0").c_str(), &r) == DuckDBSuccess) {
      for (idx_t c = 0; c < duckdb_column_count(&r); ++c) out.push_back(duckdb_column_name(&r, c));
    } else {
      ADD_FAILURE() << "DuckDB: " << duckdb_result_error(&r) << "\nquery: " << sql;
    }
    duckdb_destroy_result(&r);
    return out;
  }

 private:
  duckdb_database db_ = nullptr;
  duckdb_connection con_ = nullptr;
};

}  // namespace thund::testing
