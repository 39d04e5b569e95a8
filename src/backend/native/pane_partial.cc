#include "backend/native/pane_partial.h"

#include <arrow/compute/api.h>

#include "backend/native/direct_partial.h"
#include "backend/native/partial_merge.h"
#include "engine/batch/compute_init.h"

namespace thund::native {
namespace {

using engine::stream::PaneBlock;

bool IsCount(const std::string& f) { return f == "count_star" || f == "count"; }

// The start of the pane of length `len` (aligned at `offset`) holding `v`, as
// PaneFloor's SQL computes it.
int64_t PaneStart(int64_t v, int64_t len, int64_t offset) {
  return v - ((((v - offset) % len) + len) % len);
}

}  // namespace

std::vector<std::string> PaneMergeFunctions(const PaneBlock& b) {
  std::vector<std::string> out;
  for (const auto& a : b.aggregates) out.push_back(IsCount(a.function) ? "sum" : a.function);
  return out;
}

arrow::Result<std::shared_ptr<arrow::Table>> PaneRows(
    const std::shared_ptr<arrow::Table>& rows, const PaneBlock& b,
    const std::shared_ptr<arrow::Schema>& partial_schema) {
  ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
  const size_t keys = b.key_columns.size();
  if (b.pane_us <= 0 || static_cast<size_t>(partial_schema->num_fields()) !=
                            keys + 1 + b.aggregates.size()) {
    return arrow::Status::NotImplemented("pane partials of another shape");
  }
  const int64_t n = rows->num_rows();
  ARROW_ASSIGN_OR_RAISE(auto ts, InputColumn(*rows, b.time_column));
  if (ts->type_id() != arrow::Type::TIMESTAMP) {
    return arrow::Status::NotImplemented("an event time of type ", ts->type()->ToString());
  }
  const auto& t = static_cast<const arrow::TimestampArray&>(*ts);
  const auto unit = static_cast<const arrow::TimestampType&>(*ts->type()).unit();
  arrow::Int64Builder pane;
  ARROW_RETURN_NOT_OK(pane.Reserve(n));
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (t.IsNull(i)) {
      pane.UnsafeAppendNull();
      ++dropped;
      continue;
    }
    pane.UnsafeAppend(PaneStart(FloorMicros(t.Value(i), unit), b.pane_us, b.offset_us));
  }
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (size_t k = 0; k < keys; ++k) {
    ARROW_ASSIGN_OR_RAISE(auto in, InputColumn(*rows, b.key_columns[k]));
    ARROW_ASSIGN_OR_RAISE(auto col, CastArray(in, partial_schema->field(k)->type()));
    cols.push_back(col);
  }
  ARROW_ASSIGN_OR_RAISE(auto panes, pane.Finish());
  cols.push_back(panes);
  for (size_t j = 0; j < b.aggregates.size(); ++j) {
    const auto& a = b.aggregates[j];
    const auto& type = partial_schema->field(static_cast<int>(keys + 1 + j))->type();
    std::shared_ptr<arrow::Array> col;
    if (IsCount(a.function)) {
      // Each row counts 1 (count(x): when x is not NULL); the merge adds.
      std::shared_ptr<arrow::Array> in;
      if (a.function == "count") {
        ARROW_ASSIGN_OR_RAISE(in, InputColumn(*rows, a.column));
      }
      arrow::Int64Builder ones;
      ARROW_RETURN_NOT_OK(ones.Reserve(n));
      for (int64_t i = 0; i < n; ++i) ones.UnsafeAppend(!in || in->IsValid(i) ? 1 : 0);
      ARROW_ASSIGN_OR_RAISE(col, ones.Finish());
    } else {
      if (a.function == "sum" && arrow::is_floating(type->id())) {
        return arrow::Status::NotImplemented("a floating-point sum");
      }
      ARROW_ASSIGN_OR_RAISE(col, InputColumn(*rows, a.column));
    }
    ARROW_ASSIGN_OR_RAISE(col, CastArray(col, type));
    cols.push_back(col);
  }
  auto raw = arrow::Table::Make(partial_schema, cols, n);
  if (dropped == 0) return raw;
  // Rows without an event time are in no window.
  ARROW_ASSIGN_OR_RAISE(auto keep, arrow::compute::IsValid(panes));
  ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(raw, keep));
  return kept.table();
}

arrow::Result<std::shared_ptr<arrow::Table>> TumblingWindowRows(
    const std::shared_ptr<arrow::Table>& panes, const PaneBlock& b, std::optional<int64_t> lo,
    std::optional<int64_t> hi, const std::optional<std::string>& time_zone) {
  ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
  if (b.slide_us != b.size_us || b.pane_us != b.size_us) {
    return arrow::Status::NotImplemented("a hopping window");
  }
  const int keys = static_cast<int>(b.key_columns.size());
  const auto pane_col = panes->GetColumnByName("__pane");
  if (!pane_col || pane_col->type()->id() != arrow::Type::INT64 ||
      panes->num_columns() < keys + 1 + static_cast<int>(b.aggregates.size())) {
    return arrow::Status::Invalid("window-pane partials without a BIGINT __pane column");
  }
  // The rows of the closing windows: lo < pane + size <= hi, in overflow-free
  // forms; the window bounds as microseconds.
  arrow::BooleanBuilder mask;
  ARROW_RETURN_NOT_OK(mask.Reserve(panes->num_rows()));
  arrow::Int64Builder starts, ends;
  for (const auto& chunk : pane_col->chunks()) {
    const auto& a = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t k = 0; k < a.length(); ++k) {
      int64_t end = 0;
      const bool in = a.IsValid(k) && !__builtin_add_overflow(a.Value(k), b.size_us, &end) &&
                      (!lo || end > *lo) && (!hi || end <= *hi);
      mask.UnsafeAppend(in);
      if (in) {
        ARROW_RETURN_NOT_OK(starts.Append(a.Value(k)));
        ARROW_RETURN_NOT_OK(ends.Append(end));
      }
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto bits, mask.Finish());
  ARROW_ASSIGN_OR_RAISE(auto picked, arrow::compute::Filter(panes, bits));
  const std::shared_ptr<arrow::Table> rows = picked.table();
  const auto bound_type = time_zone ? arrow::timestamp(arrow::TimeUnit::MICRO, *time_zone)
                                    : arrow::timestamp(arrow::TimeUnit::MICRO);
  auto bound = [&](arrow::Int64Builder& us) -> arrow::Result<std::shared_ptr<arrow::Array>> {
    ARROW_ASSIGN_OR_RAISE(auto v, us.Finish());
    return v->View(bound_type);
  };
  ARROW_ASSIGN_OR_RAISE(auto start_col, bound(starts));
  ARROW_ASSIGN_OR_RAISE(auto end_col, bound(ends));
  arrow::FieldVector fields;
  std::vector<std::shared_ptr<arrow::ChunkedArray>> cols;
  for (const PaneBlock::Column& c : b.columns) {
    std::shared_ptr<arrow::ChunkedArray> col;
    switch (c.kind) {
      case PaneBlock::Column::kKey:
        col = rows->column(c.index);
        break;
      case PaneBlock::Column::kStart:
        col = std::make_shared<arrow::ChunkedArray>(start_col);
        break;
      case PaneBlock::Column::kEnd:
        col = std::make_shared<arrow::ChunkedArray>(end_col);
        break;
      case PaneBlock::Column::kAggregate: {
        col = rows->column(keys + 1 + c.index);
        if (IsCount(b.aggregates[c.index].function)) {
          // The counts' partials are doubles (exact); the window's count is BIGINT.
          ARROW_ASSIGN_OR_RAISE(auto as_int, arrow::compute::Cast(col, arrow::int64()));
          col = as_int.chunked_array();
        } else if (b.aggregates[c.index].function == "sum" &&
                   arrow::is_floating(col->type()->id())) {
          return arrow::Status::NotImplemented("a floating-point sum");
        }
        break;
      }
    }
    fields.push_back(arrow::field(c.name, col->type()));
    cols.push_back(std::move(col));
  }
  return arrow::Table::Make(arrow::schema(fields), cols, rows->num_rows());
}

arrow::Result<std::shared_ptr<arrow::ChunkedArray>> PanesLeaving(
    const std::shared_ptr<arrow::Table>& panes, int64_t size_us, int64_t hi) {
  const auto col = panes->GetColumnByName("__pane");
  if (!col || col->type()->id() != arrow::Type::INT64) {
    return arrow::Status::Invalid("window-pane partials without a BIGINT __pane column");
  }
  // Overflow-free form of pane + size <= hi.
  int64_t bound = 0;
  const bool low = __builtin_sub_overflow(hi, size_us, &bound);
  arrow::BooleanBuilder leaves;
  ARROW_RETURN_NOT_OK(leaves.Reserve(panes->num_rows()));
  for (const auto& chunk : col->chunks()) {
    const auto& a = static_cast<const arrow::Int64Array&>(*chunk);
    for (int64_t k = 0; k < a.length(); ++k) {
      leaves.UnsafeAppend(!a.IsValid(k) || (!low && a.Value(k) <= bound));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto out, leaves.Finish());
  return std::make_shared<arrow::ChunkedArray>(out);
}

}  // namespace thund::native
