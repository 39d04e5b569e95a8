#include "backend/native/join_index.h"

#include <algorithm>
#include <limits>

#include <arrow/compute/api.h>
#include <arrow/compute/exec.h>
#include <arrow/compute/row/grouper.h>

#include "backend/native/field_named.h"
#include "engine/batch/compute_init.h"

namespace thund::native {

JoinKeyIndex::JoinKeyIndex(std::string key_column) : key_column_(std::move(key_column)) {}
JoinKeyIndex::~JoinKeyIndex() = default;

std::shared_ptr<arrow::ChunkedArray> JoinKeyIndex::KeyColumn(const arrow::Table& t) const {
  const int i = FieldIndexNamed(*t.schema(), key_column_);
  return i < 0 ? nullptr : t.column(i);
}

arrow::Status JoinKeyIndex::Extend(const std::shared_ptr<arrow::Table>& t, int64_t from) {
  ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
  auto fail = [&](const arrow::Status& st) {
    indexed_ = nullptr;  // describes no table now
    return st;
  };
  if (t->num_rows() >= std::numeric_limits<uint32_t>::max()) {
    return fail(arrow::Status::NotImplemented("more kept rows than the index numbers"));
  }
  const auto keys = KeyColumn(*t);
  if (!keys) return fail(arrow::Status::NotImplemented("no key column ", key_column_));
  if (from == 0 || !indexed_ || !grouper_ || !keys->type()->Equals(*key_type_)) {
    from = 0;
    key_type_ = keys->type();
    auto made = arrow::compute::Grouper::Make({key_type_});
    if (!made.ok()) return fail(arrow::Status::NotImplemented(made.status().message()));
    grouper_ = std::move(*made);
    last_.clear();
    prev_.clear();
  }
  prev_.resize(t->num_rows());
  int64_t row = 0;  // the first row of the chunk
  for (const auto& chunk : keys->chunks()) {
    const int64_t len = chunk->length();
    if (row + len > from) {
      const int64_t skip = std::max<int64_t>(0, from - row);
      arrow::compute::ExecBatch batch({chunk->Slice(skip)}, len - skip);
      auto ids = grouper_->Consume(arrow::compute::ExecSpan(batch));
      if (!ids.ok()) return fail(ids.status());
      const uint32_t* id = ids->array()->GetValues<uint32_t>(1);
      last_.resize(grouper_->num_groups(), 0);
      for (int64_t k = 0; k < len - skip; ++k) {
        const auto r = static_cast<uint32_t>(row + skip + k);
        prev_[r] = last_[id[k]];
        last_[id[k]] = r + 1;
      }
    }
    row += len;
  }
  indexed_ = t;
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Table>> JoinKeyIndex::Matching(
    const arrow::ChunkedArray& keys) const {
  if (!indexed_ || !grouper_) return arrow::Status::Invalid("the join index describes no rows");
  if (!keys.type()->Equals(*key_type_)) {
    return arrow::Status::NotImplemented("join keys of two types");
  }
  // The groups of the new rows' keys, each once (few: a trigger's keys).
  std::vector<uint32_t> groups;
  for (const auto& chunk : keys.chunks()) {
    arrow::compute::ExecBatch batch({chunk}, chunk->length());
    ARROW_ASSIGN_OR_RAISE(auto ids, grouper_->Lookup(arrow::compute::ExecSpan(batch)));
    const arrow::ArrayData& a = *ids.array();
    const uint32_t* id = a.GetValues<uint32_t>(1);
    for (int64_t k = 0; k < a.length; ++k) {
      if (a.IsValid(k)) groups.push_back(id[k]);
    }
  }
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  // Their chains of kept rows, in row order.
  std::vector<uint32_t> rows;
  for (const uint32_t g : groups) {
    for (uint32_t r = last_[g]; r != 0; r = prev_[r - 1]) rows.push_back(r - 1);
  }
  std::sort(rows.begin(), rows.end());
  // Taken batch by batch: a Take over the whole chunked table would first
  // concatenate every kept row (a copy of the state per trigger).
  arrow::TableBatchReader reader(*indexed_);
  std::vector<std::shared_ptr<arrow::RecordBatch>> picked;
  size_t next = 0;
  int64_t start = 0;  // the first row of the batch
  std::shared_ptr<arrow::RecordBatch> batch;
  while (next < rows.size()) {
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) return arrow::Status::Invalid("the join index names rows past its table");
    const int64_t end = start + batch->num_rows();
    arrow::UInt32Builder take;
    for (; next < rows.size() && rows[next] < end; ++next) {
      ARROW_RETURN_NOT_OK(take.Append(static_cast<uint32_t>(rows[next] - start)));
    }
    if (take.length() > 0) {
      ARROW_ASSIGN_OR_RAISE(auto indices, take.Finish());
      ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(batch, indices));
      picked.push_back(taken.record_batch());
    }
    start = end;
  }
  return arrow::Table::FromRecordBatches(indexed_->schema(), picked);
}

}  // namespace thund::native
