// Internal: the kept rows of one side of a stream join, hashed by its key.
//
// A fast path of the stream join (incremental_flow.cc, switch
// NativeRunOptions::join_index, `thund run --no-join-index`). Without it a
// trigger binds every kept row of a side to the join query, so each trigger
// costs in proportion to everything kept so far. With it, only the kept rows
// whose key some new row of the other side holds are bound (a semi-join
// reduction): the join's result is the same, since its condition requires
// the keys to be equal and the query still applies the whole condition.
// Differential tests: tests/backend/stream_join_test.cc and the incremental
// property test.
//
// Contract:
//  * The index describes one table (`indexed()`): its rows' keys in an Arrow
//    grouper (groups as SQL's GROUP BY: NULL equal to NULL, which only adds
//    rows the condition then drops), and per key the rows holding it.
//  * Extend(t, from): `t` holds the indexed table's rows first (from rows),
//    then new ones; they are added. Any other table: Rebuild.
//  * Matching(keys): the rows of the indexed table whose key is among `keys`
//    (the other side's new rows' key column, of the same type), in row order.
//  * Not state: after a restore, or when the kept rows change otherwise
//    (eviction), the caller rebuilds it from the kept table.
//  * NotImplemented for a key type the grouper does not take, more than
//    2^32 - 1 kept rows, or `keys` of another type: the caller binds every
//    kept row instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <arrow/api.h>

namespace arrow::compute {
class Grouper;
}

namespace thund::native {

class JoinKeyIndex {
 public:
  explicit JoinKeyIndex(std::string key_column);
  ~JoinKeyIndex();

  const std::shared_ptr<arrow::Table>& indexed() const { return indexed_; }
  // Indexes `t`, whose first `from` rows are indexed() (from = 0: all of it).
  arrow::Status Extend(const std::shared_ptr<arrow::Table>& t, int64_t from);
  arrow::Status Rebuild(const std::shared_ptr<arrow::Table>& t) { return Extend(t, 0); }
  arrow::Result<std::shared_ptr<arrow::Table>> Matching(const arrow::ChunkedArray& keys) const;
  // `t`'s key column (case-insensitive), or null.
  std::shared_ptr<arrow::ChunkedArray> KeyColumn(const arrow::Table& t) const;

 private:
  std::string key_column_;
  std::unique_ptr<arrow::compute::Grouper> grouper_;
  std::shared_ptr<arrow::DataType> key_type_;
  std::shared_ptr<arrow::Table> indexed_;
  // Per group: its newest row + 1 (0: none); per row: the row before it of
  // the same group + 1. A chain per key, newest first.
  std::vector<uint32_t> last_;
  std::vector<uint32_t> prev_;
};

}  // namespace thund::native
