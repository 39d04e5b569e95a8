#include "engine/batch/merge_rows.h"

#include <algorithm>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/type.h>

#include "engine/batch/compute_init.h"
#include "engine/batch/schema_conform.h"
#include "engine/duckdb/duckdb_session.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/keyed/key_spec.h"
#include "thund/type_names.h"

namespace thund::engine::batch::merge {
namespace {

constexpr const char* kRow = "__thund_row";
constexpr const char* kCurrent = "__thund_merge_current";
constexpr const char* kRows = "__thund_merge_rows";
constexpr const char* kDeleted = "__thund_merge_deleted";

std::string Prefix(const std::string& where) { return "merge table '" + where + "': "; }

arrow::Result<std::shared_ptr<arrow::ChunkedArray>> CastColumn(
    const std::shared_ptr<arrow::ChunkedArray>& column,
    const std::shared_ptr<arrow::DataType>& type) {
  ARROW_ASSIGN_OR_RAISE(arrow::Datum cast,
                        arrow::compute::Cast(arrow::Datum(column), type,
                                             arrow::compute::CastOptions::Safe()));
  return cast.chunked_array();
}

// A key column as DuckDB is to compare it: types DuckDB reads with less
// precision (nanosecond timestamps, times and durations) or not at all (half
// floats, 256-bit decimals) become a type with the same equality.
arrow::Result<std::shared_ptr<arrow::ChunkedArray>> ComparableKey(
    const std::shared_ptr<arrow::ChunkedArray>& column) {
  std::shared_ptr<arrow::DataType> to;
  switch (column->type()->id()) {
    case arrow::Type::TIMESTAMP:
    case arrow::Type::TIME64:
    case arrow::Type::DURATION:
    case arrow::Type::DATE64:
      to = arrow::int64();
      break;
    case arrow::Type::TIME32:
      to = arrow::int32();
      break;
    case arrow::Type::HALF_FLOAT:
      to = arrow::float32();
      break;
    case arrow::Type::DECIMAL256:
      to = arrow::utf8();  // a fixed scale: equal values print the same
      break;
    default:
      return column;
  }
  if (!arrow::compute::CanCast(*column->type(), *to)) return column;
  return CastColumn(column, to);
}

// The key columns of `t` (comparable for DuckDB) and a row number.
arrow::Result<std::shared_ptr<arrow::Table>> KeyTable(const arrow::Table& t,
                                                      const std::vector<std::string>& keys,
                                                      bool with_row) {
  arrow::FieldVector fields;
  arrow::ChunkedArrayVector columns;
  for (const auto& key : keys) {
    ARROW_ASSIGN_OR_RAISE(auto column, ComparableKey(t.GetColumnByName(key)));
    fields.push_back(arrow::field(key, column->type()));
    columns.push_back(std::move(column));
  }
  if (with_row) {
    arrow::Int64Builder rows;
    ARROW_RETURN_NOT_OK(rows.Reserve(t.num_rows()));
    for (int64_t i = 0; i < t.num_rows(); ++i) rows.UnsafeAppend(i);
    ARROW_ASSIGN_OR_RAISE(auto array, rows.Finish());
    fields.push_back(arrow::field(kRow, arrow::int64(), /*nullable=*/false));
    columns.push_back(std::make_shared<arrow::ChunkedArray>(std::move(array)));
  }
  auto table = arrow::Table::Make(arrow::schema(fields), std::move(columns), t.num_rows());
  return table->CombineChunks();
}

// "a.k1 IS NOT DISTINCT FROM b.k1 AND ...".
std::string KeysEqual(const std::vector<std::string>& keys, const std::string& a,
                      const std::string& b) {
  std::string out;
  for (const auto& key : keys) {
    const std::string q = QuoteIdentifier(key);
    out += (out.empty() ? "" : " AND ") + a + "." + q + " IS NOT DISTINCT FROM " + b + "." + q;
  }
  return out;
}

// Unregisters the names it registered when it goes out of scope.
class Registrations {
 public:
  explicit Registrations(DuckDbSession& session) : session_(session) {}
  ~Registrations() {
    for (const auto& name : names_) (void)session_.Unregister(name);
  }
  arrow::Status Add(const std::string& name, const std::shared_ptr<arrow::Table>& table) {
    ARROW_RETURN_NOT_OK(session_.RegisterArrow(name, table));
    names_.push_back(name);
    return arrow::Status::OK();
  }

 private:
  DuckDbSession& session_;
  std::vector<std::string> names_;
};

}  // namespace

arrow::Result<std::shared_ptr<arrow::Table>> ConformRows(
    const std::string& where, const arrow::Table& rows,
    const std::shared_ptr<arrow::Schema>& schema, const std::string& what) {
  ARROW_RETURN_NOT_OK(EnsureComputeInitialized());
  const arrow::Schema& given = *rows.schema();
  std::vector<bool> used(static_cast<size_t>(given.num_fields()), false);
  arrow::ChunkedArrayVector columns;
  for (const auto& field : schema->fields()) {
    const int i = keyed::FindColumn(given, field->name());
    std::shared_ptr<arrow::ChunkedArray> column;
    if (i < 0) {
      if (!field->nullable()) {
        return arrow::Status::Invalid(Prefix(where), what, " have no column '", field->name(),
                                      "', which is NOT NULL in the table ",
                                      DescribeSchema(*schema), "; add it to the rows");
      }
      ARROW_ASSIGN_OR_RAISE(auto nulls, arrow::MakeArrayOfNull(field->type(), rows.num_rows()));
      column = std::make_shared<arrow::ChunkedArray>(std::move(nulls));
    } else {
      used[static_cast<size_t>(i)] = true;
      column = rows.column(i);
      if (!column->type()->Equals(*field->type())) {
        auto cast = CastColumn(column, field->type());
        if (!cast.ok()) {
          return arrow::Status::Invalid(
              Prefix(where), "column '", field->name(), "' is ", FormatTypeName(*field->type()),
              " in the table but ", FormatTypeName(*column->type()), " in ", what,
              ", and the values do not convert: ", cast.status().message(),
              ". CAST the column to the table's type, or merge into a new location");
        }
        column = *cast;
      }
      if (!field->nullable() && column->null_count() > 0) {
        return arrow::Status::Invalid(Prefix(where), "column '", field->name(),
                                      "' is NOT NULL in the table but ", what, " have ",
                                      column->null_count(), " NULL value(s) in it");
      }
    }
    columns.push_back(std::move(column));
  }
  for (int i = 0; i < given.num_fields(); ++i) {
    if (used[static_cast<size_t>(i)]) continue;
    return arrow::Status::Invalid(
        Prefix(where), what, " have column '", given.field(i)->name(), "' (",
        FormatTypeName(*given.field(i)->type()), "), which the table ", DescribeSchema(*schema),
        " does not have. The first write fixed the schema: drop the column, or merge into a new "
        "location");
  }
  return arrow::Table::Make(schema, std::move(columns), rows.num_rows());
}

arrow::Result<std::shared_ptr<arrow::Table>> ConformKeys(
    const std::string& where, const arrow::Table& table, const arrow::Schema& schema,
    const std::vector<std::string>& keys, const std::string& what) {
  ARROW_RETURN_NOT_OK(EnsureComputeInitialized());
  arrow::FieldVector fields;
  arrow::ChunkedArrayVector columns;
  for (const auto& key : keys) {
    const auto field = schema.GetFieldByName(key);
    const int i = keyed::FindColumn(*table.schema(), key);
    if (i < 0) {
      return arrow::Status::Invalid(Prefix(where), what, " have no key column '", key,
                                    "' (they have ", DescribeSchema(*table.schema()), ")");
    }
    auto column = table.column(i);
    if (!column->type()->Equals(*field->type())) {
      auto cast = CastColumn(column, field->type());
      if (!cast.ok()) {
        return arrow::Status::Invalid(Prefix(where), "key column '", key, "' is ",
                                      FormatTypeName(*field->type()), " in the table but ",
                                      FormatTypeName(*column->type()), " in ", what,
                                      ", and the values do not convert: ",
                                      cast.status().message());
      }
      column = *cast;
    }
    fields.push_back(field);
    columns.push_back(std::move(column));
  }
  return arrow::Table::Make(arrow::schema(fields), std::move(columns), table.num_rows());
}

arrow::Status CheckNoNullKeys(const std::string& where, const arrow::Table& table,
                              const std::vector<std::string>& keys, const std::string& what) {
  for (const auto& key : keys) {
    const auto column = table.GetColumnByName(key);
    if (!column || column->null_count() == 0) continue;
    int64_t row = 0;
    for (const auto& chunk : column->chunks()) {
      for (int64_t i = 0; i < chunk->length(); ++i, ++row) {
        if (!chunk->IsNull(i)) continue;
        return arrow::Status::Invalid(Prefix(where), "row ", row + 1, " of ", what,
                                      " (counting from 1) has a NULL in key column '", key,
                                      "'; merge keys must not be NULL. Filter such rows out (",
                                      QuoteIdentifier(key), " IS NOT NULL) or fill the key");
      }
    }
  }
  return arrow::Status::OK();
}

arrow::Result<MergePlan> MatchKeys(DuckDbSession& session, const std::string& where,
                                   const arrow::Table& current, const arrow::Table& rows,
                                   const arrow::Table* deleted,
                                   const std::vector<std::string>& keys, bool replace) {
  ARROW_RETURN_NOT_OK(EnsureComputeInitialized());
  Registrations registered(session);
  ARROW_ASSIGN_OR_RAISE(auto current_keys, KeyTable(current, keys, /*with_row=*/true));
  ARROW_ASSIGN_OR_RAISE(auto row_keys, KeyTable(rows, keys, /*with_row=*/true));
  auto registration = [&](const char* name, const std::shared_ptr<arrow::Table>& t) {
    arrow::Status st = registered.Add(name, t);
    if (st.ok()) return st;
    return arrow::Status::Invalid(Prefix(where), "the key columns cannot be compared: ",
                                  st.message());
  };
  ARROW_RETURN_NOT_OK(registration(kCurrent, current_keys));
  ARROW_RETURN_NOT_OK(registration(kRows, row_keys));
  std::string removed = "false";
  if (deleted && !replace) {
    ARROW_ASSIGN_OR_RAISE(auto deleted_keys, KeyTable(*deleted, keys, /*with_row=*/false));
    ARROW_RETURN_NOT_OK(registration(kDeleted, deleted_keys));
    removed = std::string("EXISTS (SELECT 1 FROM ") + QuoteIdentifier(kDeleted) + " d WHERE " +
              KeysEqual(keys, "d", "c") + ")";
  }
  std::string partition;
  for (const auto& key : keys) partition += (partition.empty() ? "" : ", ") + QuoteIdentifier(key);
  const std::string row = QuoteIdentifier(kRow);
  // side 0: a current row; hit = the rows replace its key; removed = deleted.
  // side 1: a row going in (the last of its key); hit = the table held its key.
  const std::string sql =
      "WITH w AS (SELECT * FROM " + QuoteIdentifier(kRows) + " QUALIFY row_number() OVER " +
      "(PARTITION BY " + partition + " ORDER BY " + row + " DESC) = 1)\n" +
      "SELECT 0::INTEGER AS side, c." + row + " AS r, EXISTS (SELECT 1 FROM w WHERE " +
      KeysEqual(keys, "w", "c") + ") AS hit, " + removed + " AS removed FROM " +
      QuoteIdentifier(kCurrent) + " c\nUNION ALL\nSELECT 1, w." + row + ", EXISTS (SELECT 1 FROM " +
      QuoteIdentifier(kCurrent) + " c WHERE " + KeysEqual(keys, "c", "w") + "), false FROM w";
  ARROW_ASSIGN_OR_RAISE(auto result, session.Query(sql));
  ARROW_ASSIGN_OR_RAISE(result, result->CombineChunks());
  MergePlan plan;
  if (result->num_rows() == 0) return plan;
  const arrow::Type::type want[] = {arrow::Type::INT32, arrow::Type::INT64, arrow::Type::BOOL,
                                    arrow::Type::BOOL};
  for (int i = 0; i < 4; ++i) {
    if (result->num_columns() != 4 || result->column(i)->type()->id() != want[i]) {
      return arrow::Status::Invalid(Prefix(where), "unexpected key match result ",
                                    result->schema()->ToString());
    }
  }
  const auto& side = static_cast<const arrow::Int32Array&>(*result->column(0)->chunk(0));
  const auto& r = static_cast<const arrow::Int64Array&>(*result->column(1)->chunk(0));
  const auto& hit = static_cast<const arrow::BooleanArray&>(*result->column(2)->chunk(0));
  const auto& gone = static_cast<const arrow::BooleanArray&>(*result->column(3)->chunk(0));
  for (int64_t i = 0; i < result->num_rows(); ++i) {
    if (side.Value(i) == 1) {
      plan.written.push_back(r.Value(i));
      ++(hit.Value(i) ? plan.updated : plan.inserted);
    } else if (!hit.Value(i)) {
      // A current row whose key the rows do not replace.
      if (replace || gone.Value(i)) {
        ++plan.deleted;
      } else {
        plan.kept.push_back(r.Value(i));
      }
    }
  }
  std::sort(plan.kept.begin(), plan.kept.end());
  std::sort(plan.written.begin(), plan.written.end());
  return plan;
}

}  // namespace thund::engine::batch::merge
