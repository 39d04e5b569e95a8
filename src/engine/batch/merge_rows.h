// Internal to merge_table.cc: the steps of one merge, each on Arrow tables.
//
//  * ConformRows / ConformKeys make input match the table's schema (the
//    rules are in merge_table.h); CheckNoNullKeys refuses NULL keys.
//  * MatchKeys decides, with DuckDB, which rows of the current table stay
//    and which rows of the input go in. DuckDB sees the key columns and a row
//    number only; the caller copies whole rows with Arrow's Take, so non-key
//    columns keep their exact Arrow types and values.
//
// Errors are Invalid and start with "merge table '<where>': ".
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/result.h>
#include <arrow/table.h>

namespace thund::engine {
class DuckDbSession;
}  // namespace thund::engine

namespace thund::engine::batch::merge {

// `rows` with the columns of `schema`, in its order and types. `what` names
// the input in errors ("the new rows").
arrow::Result<std::shared_ptr<arrow::Table>> ConformRows(
    const std::string& where, const arrow::Table& rows,
    const std::shared_ptr<arrow::Schema>& schema, const std::string& what);

// The key columns of `table`, in `keys` order, cast to their types in `schema`.
// REQUIRES: every key is a field of `schema`.
arrow::Result<std::shared_ptr<arrow::Table>> ConformKeys(
    const std::string& where, const arrow::Table& table, const arrow::Schema& schema,
    const std::vector<std::string>& keys, const std::string& what);

// Invalid naming the first row (1-based) with a NULL in a key column.
arrow::Status CheckNoNullKeys(const std::string& where, const arrow::Table& table,
                              const std::vector<std::string>& keys, const std::string& what);

struct MergePlan {
  std::vector<int64_t> kept;     // rows of the current table that stay, ascending
  std::vector<int64_t> written;  // rows of the input that go in, ascending
  int64_t inserted = 0, updated = 0, deleted = 0;
};

// `current` and `rows` conform to one schema holding every key; `deleted`
// (may be null) holds the key columns (ConformKeys). `replace`: no current
// row stays (each counts as updated when `rows` has its key, else as deleted).
arrow::Result<MergePlan> MatchKeys(DuckDbSession& session, const std::string& where,
                                   const arrow::Table& current, const arrow::Table& rows,
                                   const arrow::Table* deleted,
                                   const std::vector<std::string>& keys, bool replace);

}  // namespace thund::engine::batch::merge
