#include "engine/keyed/source_scan.h"

#include <arrow/array/builder_binary.h>
#include <arrow/builder.h>
#include <arrow/compute/cast.h>
#include <arrow/util/utf8.h>

#include <algorithm>

#include "engine/keyed/key_encoder.h"
#include "engine/keyed/key_spec.h"
#include "engine/keyed/memory_pool.h"
#include "engine/keyed/ordered_parallel.h"

namespace thund::engine::keyed {
namespace {

// The columns of `schema`, taken by name from `batch` and cast where types differ.
arrow::Result<std::shared_ptr<arrow::RecordBatch>> Conform(
    const std::shared_ptr<arrow::RecordBatch>& batch, const arrow::Schema& schema,
    const std::string& where) {
  if (batch->schema()->Equals(schema, /*check_metadata=*/false)) return batch;
  arrow::ArrayVector columns;
  for (const auto& field : schema.fields()) {
    int i = FindColumn(*batch->schema(), field->name());
    if (i < 0) {
      return arrow::Status::Invalid(where, ": column '", field->name(),
                                    "' is missing; every file of a source must have the same "
                                    "columns as its first file");
    }
    auto column = batch->column(i);
    if (!column->type()->Equals(*field->type())) {
      auto cast = arrow::compute::Cast(*column, field->type(), arrow::compute::CastOptions::Safe(),
                                       KeyedExecContext());
      if (!cast.ok()) {
        return arrow::Status::Invalid(
            where, ": column '", field->name(), "' is ", column->type()->ToString(), " but ",
            field->type()->ToString(), " in the source's first file, and does not convert");
      }
      column = *cast;
    }
    columns.push_back(std::move(column));
  }
  return arrow::RecordBatch::Make(std::make_shared<arrow::Schema>(schema), batch->num_rows(),
                                  std::move(columns));
}

arrow::Result<std::vector<int>> ColumnsIn(const arrow::Schema& schema,
                                          const std::vector<std::string>& names,
                                          const std::string& where) {
  std::vector<int> out;
  for (const auto& n : names) {
    int i = FindColumn(schema, n);
    if (i < 0) return arrow::Status::Invalid(where, ": key column '", n, "' is missing");
    out.push_back(i);
  }
  return out;
}

// A key kept from a string column must be valid UTF-8: neither the page scan
// nor the Parquet reader checks it. `row`: its number in the unit `where`
// names (from 0). REQUIRES:
// arrow::util::InitializeUTF8() was called (else every key passes).
arrow::Status CheckUtf8(std::string_view key, const std::string& column, int64_t row,
                        const std::string& where) {
  if (arrow::util::ValidateUTF8(key)) return arrow::Status::OK();
  return arrow::Status::Invalid(where, " row ", row + 1, ": key column '", column,
                                "' is a string column but holds a value that is not valid UTF-8");
}

void ReserveRows(int64_t rows, EncodedKeys* keys) {
  const size_t n = static_cast<size_t>(rows);
  keys->is_null.reserve(n);
  keys->hash.reserve(n);
  keys->w0.reserve(n);
  keys->w1.reserve(n);
}

// Zero-copy fast path for a single string key (Parquet): the key column is
// scanned straight from the pages and looked up; only the kept rows' keys are
// copied, and the other columns are read only when some row is kept. Returns
// false (nothing done) when the column does not allow it. A fully new unit
// deferred as all_new_keys also hands over the keys' encodings (all_new_encoded).
arrow::Result<bool> ScanFilteredUnit(DataFileReader& reader, const Source& source,
                                     const SourceUnit& u, const UnitFilter& filter, int key_column,
                                     int64_t batch_size, bool defer_all_new,
                                     const std::string& where, UnitRows* out) {
  const auto& key_field = reader.schema()->field(key_column);
  const auto& key_type = key_field->type();
  if (!ScansKeyFromPages(*key_type)) return false;
  const KeySpec& spec = filter.filter->spec();
  const bool utf8 = key_type->id() == arrow::Type::STRING;
  if (utf8) arrow::util::InitializeUTF8();
  std::unique_ptr<arrow::ArrayBuilder> builder;  // of the column's own type
  ARROW_RETURN_NOT_OK(arrow::MakeBuilder(KeyedMemoryPool(), key_type, &builder));
  auto* keys_kept = static_cast<arrow::BinaryBuilder*>(builder.get());  // STRING or BINARY
  std::vector<uint8_t> keep;
  int64_t kept = 0;
  EncodedKeys encoded;
  // The unit's encoded keys so far, while every row is new (only then used).
  std::optional<EncodedKeys> unit_keys;
  if (defer_all_new && key_type->Equals(*spec.types[0])) unit_keys.emplace();
  arrow::Status st = reader.ScanStringColumn(
      u.unit, key_column, std::min(batch_size, kKeyScanRows),
      [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
        ARROW_RETURN_NOT_OK(EncodeViews(spec, values, is_null, n, &encoded));
        const size_t at = keep.size();
        keep.resize(at + static_cast<size_t>(n));
        uint8_t* k = keep.data() + at;
        const int64_t row = static_cast<int64_t>(at);  // in the unit, for messages
        ARROW_ASSIGN_OR_RAISE(int64_t chunk_kept,
                              filter.filter->SelectNewEncoded(encoded, where, row, k));
        for (int64_t i = 0; i < n && chunk_kept > 0; ++i) {
          if (!k[i]) continue;
          if (utf8) ARROW_RETURN_NOT_OK(CheckUtf8(values[i], key_field->name(), row + i, where));
          ARROW_RETURN_NOT_OK(keys_kept->Append(values[i]));
        }
        kept += chunk_kept;
        if (unit_keys && kept == static_cast<int64_t>(keep.size())) {
          if (unit_keys->length == 0) ReserveRows(reader.unit_rows(u.unit), &*unit_keys);
          AppendEncoded(encoded, &*unit_keys);
        } else {
          unit_keys.reset();
        }
        return arrow::Status::OK();
      });
  if (st.IsNotImplemented()) return false;
  ARROW_RETURN_NOT_OK(st);
  out->rows_read = static_cast<int64_t>(keep.size());
  if (kept == 0) return true;  // nothing new: the other columns are never read
  std::shared_ptr<arrow::Array> key_array;
  ARROW_RETURN_NOT_OK(keys_kept->Finish(&key_array));
  if (defer_all_new && kept == out->rows_read) {
    out->all_new_keys = arrow::RecordBatch::Make(arrow::schema({key_field}), kept, {key_array});
    if (unit_keys) {
      ARROW_RETURN_NOT_OK(AttachKeyBytes(spec, key_array, &*unit_keys));
      out->all_new_encoded = std::move(unit_keys);
    }
    return true;
  }
  std::vector<int> others;
  for (int i = 0; i < reader.schema()->num_fields(); ++i) {
    if (i != key_column) others.push_back(i);
  }
  ARROW_ASSIGN_OR_RAISE(auto rest, reader.ReadUnit(u.unit, &others));
  ARROW_ASSIGN_OR_RAISE(rest, KeepRows(*rest, keep, kept));
  arrow::FieldVector fields;
  arrow::ArrayVector columns;
  for (int i = 0, r = 0; i < reader.schema()->num_fields(); ++i) {
    if (i == key_column) {
      fields.push_back(reader.schema()->field(i));
      columns.push_back(key_array);
    } else {
      fields.push_back(rest->schema()->field(r));
      columns.push_back(rest->column(r++));
    }
  }
  auto rows = arrow::RecordBatch::Make(arrow::schema(fields), kept, std::move(columns));
  ARROW_ASSIGN_OR_RAISE(rows, Conform(rows, *source.schema, where));
  std::vector<int64_t> numbers;  // of the kept rows in the source
  if (u.first_row >= 0) {
    numbers.reserve(static_cast<size_t>(kept));
    for (size_t i = 0; i < keep.size(); ++i) {
      if (keep[i]) numbers.push_back(u.first_row + static_cast<int64_t>(i));
    }
  }
  for (int64_t off = 0; off < rows->num_rows(); off += batch_size) {
    out->batches.push_back(rows->Slice(off, batch_size));
    if (!numbers.empty()) {
      const int64_t end = std::min(off + batch_size, rows->num_rows());
      out->batch_rows.emplace_back(numbers.begin() + off, numbers.begin() + end);
    }
  }
  return true;
}

}  // namespace

arrow::Result<Source> OpenSource(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                 const std::string& name, const std::string& path,
                                 std::optional<FileFormat> format, int64_t threads) {
  Source s;
  s.name = name;
  auto files = ListSourceFiles(*fs, path, format);
  if (!files.ok()) {
    return files.status().WithMessage("source '", name, "': ", files.status().message());
  }
  s.files = std::move(files).ValueUnsafe();
  std::vector<std::vector<int64_t>> unit_rows(s.files.size(), std::vector<int64_t>{-1});
  s.file_schemas.assign(s.files.size(), nullptr);
  s.footers.assign(s.files.size(), nullptr);
  std::vector<std::shared_ptr<arrow::Schema>>& schemas = s.file_schemas;
  ARROW_RETURN_NOT_OK(ParallelFor("opening the source files", static_cast<int64_t>(s.files.size()), threads, [&](int64_t i) {
    if (s.files[i].format != FileFormat::kParquet && i != 0) return arrow::Status::OK();
    // (CSV/JSON: only the first file is opened, for the source's schema.)
    ARROW_ASSIGN_OR_RAISE(auto reader, DataFileReader::Open(fs, s.files[i]));
    schemas[i] = reader->schema();
    if (s.files[i].format == FileFormat::kParquet) {
      s.footers[i] = reader->parquet_footer();
      unit_rows[i].clear();
      for (int u = 0; u < reader->num_units(); ++u) unit_rows[i].push_back(reader->unit_rows(u));
    }
    return arrow::Status::OK();
  }));
  s.schema = schemas[0];
  if (s.files[0].format != FileFormat::kParquet) schemas[0] = nullptr;
  for (size_t f = 0; f < s.files.size(); ++f) {
    for (size_t u = 0; u < unit_rows[f].size(); ++u) {
      const int64_t rows = unit_rows[f][u];
      s.units.push_back(
          SourceUnit{static_cast<int>(f), static_cast<int>(u), rows < 0 ? -1 : s.known_rows, rows});
      if (rows > 0) s.known_rows += rows;
    }
  }
  return s;
}

arrow::Result<UnitRows> ReadSourceUnit(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                       const Source& source, const SourceUnit& u,
                                       const UnitFilter& filter, int64_t batch_size, bool keys_only,
                                       bool defer_all_new) {
  const DataFile& file = source.files[u.file];
  // Messages name the row group and count rows within it (from 1).
  std::string where = "source '" + source.name + "' file '" + file.path + "'";
  if (file.format == FileFormat::kParquet) where += " row group " + std::to_string(u.unit);
  ARROW_ASSIGN_OR_RAISE(auto reader, DataFileReader::Open(fs, file));
  UnitRows out;

  std::vector<int> key_columns;
  if (filter.filter != nullptr || keys_only) {
    ARROW_ASSIGN_OR_RAISE(key_columns, ColumnsIn(*reader->schema(), filter.key_columns, where));
  }
  if (filter.filter == nullptr && !keys_only) {
    ARROW_ASSIGN_OR_RAISE(auto batch, reader->ReadUnit(u.unit, nullptr));
    ARROW_ASSIGN_OR_RAISE(batch, Conform(batch, *source.schema, where));
    out.rows_read = batch->num_rows();
    for (int64_t off = 0; off < batch->num_rows(); off += batch_size) {
      out.batches.push_back(batch->Slice(off, batch_size));
    }
    return out;
  }
  if (filter.filter != nullptr && !keys_only && IsSingleVariableKey(filter.filter->spec())) {
    ARROW_ASSIGN_OR_RAISE(bool done, ScanFilteredUnit(*reader, source, u, filter, key_columns[0],
                                                      batch_size, defer_all_new, where, &out));
    if (done) return out;
  }
  ARROW_ASSIGN_OR_RAISE(auto keys, reader->ReadUnit(u.unit, &key_columns));
  out.rows_read = keys->num_rows();
  std::vector<int> all(key_columns.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);

  struct Slice {
    int64_t offset, length, kept;
    std::vector<uint8_t> keep;
  };
  std::vector<Slice> slices;
  int64_t kept_total = 0;
  for (int64_t off = 0; off < keys->num_rows(); off += batch_size) {
    Slice s{off, std::min(batch_size, keys->num_rows() - off), 0, {}};
    if (filter.filter != nullptr) {
      auto part = keys->Slice(s.offset, s.length);
      ARROW_ASSIGN_OR_RAISE(s.kept, filter.filter->SelectNew(part->columns(), where, off, &s.keep));
    } else {
      s.kept = s.length;
      s.keep.assign(static_cast<size_t>(s.length), 1);
    }
    kept_total += s.kept;
    slices.push_back(std::move(s));
  }
  if (kept_total == 0) return out;  // nothing new: the other columns are never read
  if (defer_all_new && !keys_only && kept_total == keys->num_rows()) {
    out.all_new_keys = keys;
    return out;
  }

  std::shared_ptr<arrow::RecordBatch> rows = keys;
  if (!keys_only) {
    ARROW_ASSIGN_OR_RAISE(rows, reader->ReadUnit(u.unit, nullptr));
    ARROW_ASSIGN_OR_RAISE(rows, Conform(rows, *source.schema, where));
  }
  for (const auto& s : slices) {
    if (s.kept == 0) continue;
    ARROW_ASSIGN_OR_RAISE(auto kept, KeepRows(*rows->Slice(s.offset, s.length), s.keep, s.kept));
    out.batches.push_back(std::move(kept));
    if (u.first_row >= 0 && !keys_only) {  // the kept rows' numbers in the source
      std::vector<int64_t>& numbers = out.batch_rows.emplace_back();
      for (int64_t i = 0; i < s.length; ++i) {
        if (s.keep[i]) numbers.push_back(u.first_row + s.offset + i);
      }
    }
  }
  return out;
}

}  // namespace thund::engine::keyed
