#include "engine/duckdb/arrow_precision_check.h"

#include <arrow/array.h>
#include <arrow/type.h>

namespace thund::engine::duckdb_internal {
namespace {

enum class Kind { kExact, kInt64Nanos, kMonthDayNano };

Kind KindOf(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::TIMESTAMP: {
      const auto& ts = static_cast<const arrow::TimestampType&>(type);
      return ts.unit() == arrow::TimeUnit::NANO && !ts.timezone().empty() ? Kind::kInt64Nanos
                                                                          : Kind::kExact;
    }
    case arrow::Type::TIME64:
      return static_cast<const arrow::Time64Type&>(type).unit() == arrow::TimeUnit::NANO
                 ? Kind::kInt64Nanos
                 : Kind::kExact;
    case arrow::Type::DURATION:
      return static_cast<const arrow::DurationType&>(type).unit() == arrow::TimeUnit::NANO
                 ? Kind::kInt64Nanos
                 : Kind::kExact;
    case arrow::Type::INTERVAL_MONTH_DAY_NANO:
      return Kind::kMonthDayNano;
    default:
      return Kind::kExact;
  }
}

// Index of the first valid value with a sub-microsecond part, or -1.
int64_t FirstSubMicro(const arrow::Array& array, Kind kind) {
  for (int64_t i = 0; i < array.length(); ++i) {
    if (array.IsNull(i)) continue;
    int64_t nanos = 0;
    if (kind == Kind::kInt64Nanos) {
      nanos = array.data()->GetValues<int64_t>(1)[i];
    } else {
      nanos = static_cast<const arrow::MonthDayNanoIntervalArray&>(array).Value(i).nanoseconds;
    }
    if (nanos % 1000 != 0) return i;
  }
  return -1;
}

}  // namespace

arrow::Status CheckMicrosecondPrecision(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
  int64_t row_base = 0;
  for (const auto& batch : batches) {
    for (int c = 0; c < batch->num_columns(); ++c) {
      const auto& field = batch->schema()->field(c);
      const Kind kind = KindOf(*field->type());
      if (kind == Kind::kExact) continue;
      const int64_t bad = FirstSubMicro(*batch->column(c), kind);
      if (bad >= 0) {
        return arrow::Status::Invalid(
            "column '", field->name(), "' (", field->type()->ToString(),
            ") has a value with a sub-microsecond part at row ", row_base + bad,
            "; DuckDB keeps microseconds for this type and would truncate it silently. "
            "Truncate the column to microseconds explicitly first (arrow::compute::Cast with "
            "allow_time_truncate) if that is intended");
      }
    }
    row_base += batch->num_rows();
  }
  return arrow::Status::OK();
}

}  // namespace thund::engine::duckdb_internal
