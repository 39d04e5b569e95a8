#include "backend/native/direct_partial.h"

#include <algorithm>

#include <arrow/compute/api.h>
#include <arrow/compute/exec.h>
#include <arrow/compute/row/grouper.h>

#include "backend/native/field_named.h"
#include "engine/batch/compute_init.h"

namespace thund::native {
namespace {

// Timestamps of `type` (microseconds) from `us`, NULL where `valid` is 0.
arrow::Result<std::shared_ptr<arrow::Array>> Timestamps(
    const std::vector<int64_t>& us, const std::vector<uint8_t>& valid,
    const std::shared_ptr<arrow::DataType>& type) {
  if (type->id() != arrow::Type::TIMESTAMP ||
      static_cast<const arrow::TimestampType&>(*type).unit() != arrow::TimeUnit::MICRO) {
    return arrow::Status::NotImplemented("a window bound of type ", type->ToString());
  }
  arrow::TimestampBuilder b(type, arrow::default_memory_pool());
  ARROW_RETURN_NOT_OK(b.AppendValues(us.data(), static_cast<int64_t>(us.size()), valid.data()));
  return b.Finish();
}

// Each row's session window among the rows of its key (`key_ids`: one group
// id per row, or empty for a single key). Sorted by time, a row more than
// `gap` after the one before it starts a new session (the dialect's rule: a
// row at the end of a session still joins it); a session spans [its first
// time, its last time + gap). Rows with `valid` 0 have no time and no session.
// NotImplemented when an end leaves the int64 range (the query then fails
// as SQL does).
arrow::Status SessionSpans(const arrow::TimestampArray& t, const std::vector<uint8_t>& valid,
                           const std::vector<uint32_t>& key_ids, int64_t gap,
                           std::vector<int64_t>* start, std::vector<int64_t>* end) {
  std::vector<int64_t> order;
  order.reserve(t.length());
  for (int64_t i = 0; i < t.length(); ++i) {
    if (valid[i]) order.push_back(i);
  }
  auto key = [&](int64_t i) { return key_ids.empty() ? 0u : key_ids[i]; };
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return key(a) != key(b) ? key(a) < key(b) : t.Value(a) < t.Value(b);
  });
  // Whether sorted row k starts a session after row k - 1 (of one key).
  auto apart = [&](size_t k) {
    int64_t d = 0;
    return __builtin_sub_overflow(t.Value(order[k]), t.Value(order[k - 1]), &d) || d > gap;
  };
  size_t first = 0;  // the first row (in `order`) of the current session
  for (size_t k = 1; k <= order.size(); ++k) {
    if (k < order.size() && key(order[k]) == key(order[k - 1]) && !apart(k)) continue;
    const int64_t s = t.Value(order[first]);
    int64_t e = 0;
    if (__builtin_add_overflow(t.Value(order[k - 1]), gap, &e)) {
      return arrow::Status::NotImplemented("a session end beyond the timestamp range");
    }
    for (size_t j = first; j < k; ++j) {
      (*start)[order[j]] = s;
      (*end)[order[j]] = e;
    }
    first = k;
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::Array>> InputColumn(const arrow::Table& rows,
                                                         const std::string& name) {
  const int i = FieldIndexNamed(*rows.schema(), name);
  if (i < 0) return arrow::Status::NotImplemented("the input has no column ", name);
  const auto& c = *rows.column(i);
  if (c.num_chunks() == 1) return c.chunk(0);
  return arrow::Concatenate(c.chunks());
}

arrow::Result<std::shared_ptr<arrow::Array>> CastArray(
    const std::shared_ptr<arrow::Array>& a, const std::shared_ptr<arrow::DataType>& type) {
  if (a->type()->Equals(*type)) return a;
  ARROW_ASSIGN_OR_RAISE(auto d, arrow::compute::Cast(arrow::Datum(a), type));
  return d.make_array();
}

arrow::Result<std::shared_ptr<arrow::Table>> DirectPartial(
    const std::shared_ptr<arrow::Table>& rows, const sql::AggregateDecomposition& agg,
    const plan::WindowInfo& window, const std::shared_ptr<arrow::Schema>& partial_schema,
    PartialMerger* merger) {
  ARROW_RETURN_NOT_OK(engine::batch::EnsureComputeInitialized());
  const auto& d = agg.direct;
  const int columns = agg.num_groups + static_cast<int>(agg.merge.size());
  if (!d.usable || partial_schema->num_fields() != columns ||
      static_cast<int>(d.keys.size()) != agg.num_groups || d.partials.size() != agg.merge.size()) {
    return arrow::Status::NotImplemented("the aggregation is not one C++ computes directly");
  }
  const int64_t n = rows->num_rows();
  // Each row's window start (the newest window that holds it).
  ARROW_ASSIGN_OR_RAISE(auto ts, InputColumn(*rows, window.TimeColumnName()));
  if (ts->type_id() != arrow::Type::TIMESTAMP ||
      static_cast<const arrow::TimestampType&>(*ts->type()).unit() != arrow::TimeUnit::MICRO) {
    return arrow::Status::NotImplemented("an event time of type ", ts->type()->ToString());
  }
  const auto& t = static_cast<const arrow::TimestampArray&>(*ts);
  std::vector<int64_t> start(n), end(n);
  std::vector<uint8_t> valid(n);
  int64_t dropped = 0;
  for (int64_t i = 0; i < n; ++i) {
    valid[i] = t.IsValid(i);
    dropped += !valid[i];
  }
  // The grouping keys that are input columns, in the partial's types.
  std::vector<std::shared_ptr<arrow::Array>> key_cols(agg.num_groups);
  for (int k = 0; k < agg.num_groups; ++k) {
    if (d.keys[k].empty()) continue;
    ARROW_ASSIGN_OR_RAISE(auto in, InputColumn(*rows, d.keys[k]));
    ARROW_ASSIGN_OR_RAISE(key_cols[k], CastArray(in, partial_schema->field(k)->type()));
  }
  if (window.shape == plan::WindowShape::kSession) {
    // Sessions form per key (the planner allows only sessions partitioned by
    // exactly the other grouping keys). The keys group as the merge groups
    // them: bytewise, which the merger checked their types allow.
    std::vector<uint32_t> key_ids;
    std::vector<arrow::Datum> datums;
    std::vector<arrow::TypeHolder> types;
    for (const auto& c : key_cols) {
      if (!c) continue;
      datums.emplace_back(c);
      types.push_back(c->type());
    }
    if (!datums.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto grouper, arrow::compute::Grouper::Make(types));
      arrow::compute::ExecBatch exec(std::move(datums), n);
      ARROW_ASSIGN_OR_RAISE(arrow::Datum ids, grouper->Consume(arrow::compute::ExecSpan(exec)));
      const uint32_t* id = ids.array()->GetValues<uint32_t>(1);
      key_ids.assign(id, id + n);
    }
    if (window.gap_us <= 0) return arrow::Status::NotImplemented("a session without a gap");
    ARROW_RETURN_NOT_OK(SessionSpans(t, valid, key_ids, window.gap_us, &start, &end));
  } else {
    const int64_t slide = window.shape == plan::WindowShape::kTumbling ? window.size_us
                                                                         : window.slide_us;
    if (slide <= 0) return arrow::Status::NotImplemented("a window without a size");
    for (int64_t i = 0; i < n; ++i) {
      if (!valid[i]) continue;
      const int64_t v = t.Value(i);
      start[i] = v - ((((v - window.offset_us) % slide) + slide) % slide);
      end[i] = start[i] + window.size_us;
    }
  }
  std::vector<std::shared_ptr<arrow::Array>> cols;
  for (int k = 0; k < agg.num_groups; ++k) {
    const auto& type = partial_schema->field(k)->type();
    std::shared_ptr<arrow::Array> col;
    if (!d.keys[k].empty()) {
      col = key_cols[k];
    } else if (k == agg.window_struct_key) {
      if (type->id() != arrow::Type::STRUCT || type->num_fields() != 2) {
        return arrow::Status::NotImplemented("a window of type ", type->ToString());
      }
      ARROW_ASSIGN_OR_RAISE(auto s, Timestamps(start, valid, type->field(0)->type()));
      ARROW_ASSIGN_OR_RAISE(auto e, Timestamps(end, valid, type->field(1)->type()));
      ARROW_ASSIGN_OR_RAISE(col, arrow::StructArray::Make({s, e}, type->fields()));
    } else if (k == agg.window_start_key) {
      ARROW_ASSIGN_OR_RAISE(col, Timestamps(start, valid, type));
    } else if (k == agg.window_end_key) {
      ARROW_ASSIGN_OR_RAISE(col, Timestamps(end, valid, type));
    } else {
      return arrow::Status::NotImplemented("a grouping key thund cannot compute");
    }
    cols.push_back(col);
  }
  for (size_t j = 0; j < d.partials.size(); ++j) {
    const auto& [fn, column] = d.partials[j];
    const auto& type = partial_schema->field(agg.num_groups + static_cast<int>(j))->type();
    std::shared_ptr<arrow::Array> col;
    if (fn == "count_star" || fn == "count") {
      // Each row counts 1 (count(x): when x is not NULL); the merge sums.
      std::shared_ptr<arrow::Array> in;
      if (fn == "count") {
        ARROW_ASSIGN_OR_RAISE(in, InputColumn(*rows, column));
      }
      arrow::Int64Builder b;
      ARROW_RETURN_NOT_OK(b.Reserve(n));
      for (int64_t i = 0; i < n; ++i) b.UnsafeAppend(!in || in->IsValid(i) ? 1 : 0);
      ARROW_ASSIGN_OR_RAISE(col, b.Finish());
      ARROW_ASSIGN_OR_RAISE(col, CastArray(col, type));
    } else {
      // sum / min / max of one row is its value, in the partial's type.
      ARROW_ASSIGN_OR_RAISE(auto in, InputColumn(*rows, column));
      ARROW_ASSIGN_OR_RAISE(col, CastArray(in, type));
    }
    cols.push_back(col);
  }
  auto raw = arrow::Table::Make(partial_schema, cols, n);
  if (dropped > 0) {
    // Rows without an event time are in no window.
    ARROW_ASSIGN_OR_RAISE(auto keep, arrow::compute::IsValid(ts));
    ARROW_ASSIGN_OR_RAISE(auto kept, arrow::compute::Filter(raw, keep));
    raw = kept.table();
  }
  ARROW_ASSIGN_OR_RAISE(auto folded, merger->Merge(nullptr, raw));
  // Without the merge's __touched column, in the partial query's fields.
  std::vector<std::shared_ptr<arrow::ChunkedArray>> out(folded->columns().begin(),
                                                        folded->columns().end() - 1);
  return arrow::Table::Make(partial_schema, out, folded->num_rows());
}

}  // namespace thund::native
