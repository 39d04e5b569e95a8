#include "engine/keyed/data_file_reader.h"

#include <arrow/csv/api.h>
#include <arrow/io/interfaces.h>
#include <arrow/json/api.h>
#include <arrow/table.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/schema.h>
#include <parquet/column_reader.h>
#include <parquet/exception.h>
#include <parquet/file_reader.h>

#include "engine/keyed/memory_pool.h"

namespace thund::engine::keyed {
namespace {

std::string ColumnList(const arrow::Schema& schema) {
  std::string out;
  for (int i = 0; i < schema.num_fields(); ++i) {
    out += (i > 0 ? ", " : "") + schema.field(i)->name();
  }
  return out;
}

arrow::Status Annotate(const arrow::Status& st, const DataFile& f) {
  return st.WithMessage("reading ", Name(f.format), " file '", f.path, "': ", st.message());
}

void CollectLeaves(const parquet::arrow::SchemaField& field, std::vector<int>* out) {
  if (field.is_leaf()) {
    out->push_back(field.column_index);
    return;
  }
  for (const auto& child : field.children) CollectLeaves(child, out);
}

class ParquetFileReader final : public DataFileReader {
 public:
  ParquetFileReader(DataFile file, std::unique_ptr<parquet::arrow::FileReader> reader,
                    std::shared_ptr<arrow::Schema> schema)
      : DataFileReader(std::move(file)), reader_(std::move(reader)), schema_(std::move(schema)) {}

  const std::shared_ptr<arrow::Schema>& schema() const override { return schema_; }
  int num_units() const override { return reader_->num_row_groups(); }
  int64_t unit_rows(int unit) const override {
    return reader_->parquet_reader()->metadata()->RowGroup(unit)->num_rows();
  }
  int64_t num_rows() const override { return reader_->parquet_reader()->metadata()->num_rows(); }

  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ReadUnit(
      int unit, const std::vector<int>* columns) override {
    std::vector<int> fields;
    if (columns != nullptr) {
      fields = *columns;
    } else {
      for (int i = 0; i < schema_->num_fields(); ++i) fields.push_back(i);
    }
    std::vector<int> leaves;
    for (int f : fields) CollectLeaves(reader_->manifest().schema_fields[f], &leaves);
    auto table = reader_->ReadRowGroup(unit, leaves);
    if (!table.ok()) {
      const arrow::Status& st = table.status();
      return Annotate(st.WithMessage(st.message(), " (row group ", unit, ")"), file_);
    }
    ARROW_ASSIGN_OR_RAISE(auto batch, (*table)->CombineChunksToBatch());
    // The Parquet reader returns columns in file order; put them in request order.
    arrow::FieldVector out_fields;
    arrow::ArrayVector out_columns;
    for (int f : fields) {
      const std::string& name = schema_->field(f)->name();
      int at = -1;
      for (int i = 0; i < batch->num_columns(); ++i) {
        if (batch->schema()->field(i)->name() == name) at = i;
      }
      if (at < 0) return arrow::Status::UnknownError("column '", name, "' not returned");
      out_fields.push_back(batch->schema()->field(at));
      out_columns.push_back(batch->column(at));
    }
    return arrow::RecordBatch::Make(arrow::schema(out_fields), batch->num_rows(), out_columns);
  }

  std::shared_ptr<parquet::FileMetaData> parquet_footer() const override {
    return reader_->parquet_reader()->metadata();
  }

  bool ScansStrings(int field) const override {
    if (field < 0 || field >= schema_->num_fields()) return false;
    const auto& sf = reader_->manifest().schema_fields[field];
    if (!sf.is_leaf() || !IsByteArrayStringType(*schema_->field(field)->type())) return false;
    const parquet::ColumnDescriptor* descr =
        reader_->parquet_reader()->metadata()->schema()->Column(sf.column_index);
    return descr->physical_type() == parquet::Type::BYTE_ARRAY &&
           descr->max_repetition_level() == 0;
  }

  arrow::Status ScanStringColumn(int unit, int field, int64_t max_rows,
                                 const StringChunkFn& fn) override {
    if (!ScansStrings(field)) {
      return arrow::Status::NotImplemented("not a flat string column stored as BYTE_ARRAY");
    }
    const auto& sf = reader_->manifest().schema_fields[field];
    const parquet::ColumnDescriptor* descr =
        reader_->parquet_reader()->metadata()->schema()->Column(sf.column_index);
    const int16_t max_def = descr->max_definition_level();
    const int64_t kChunk = std::max<int64_t>(1, max_rows);
    std::vector<parquet::ByteArray> values(kChunk);
    std::vector<int16_t> def(kChunk);
    std::vector<std::string_view> views(kChunk);
    std::vector<uint8_t> is_null(kChunk);
    try {
      auto row_group = reader_->parquet_reader()->RowGroup(unit);
      auto column = row_group->Column(sf.column_index);
      auto* typed = static_cast<parquet::ByteArrayReader*>(column.get());
      while (typed->HasNext()) {
        int64_t values_read = 0;
        const int64_t levels = typed->ReadBatch(kChunk, max_def > 0 ? def.data() : nullptr, nullptr,
                                                values.data(), &values_read);
        if (levels == 0) break;
        int64_t v = 0;
        for (int64_t i = 0; i < levels; ++i) {
          const bool null = max_def > 0 && def[i] < max_def;
          is_null[i] = null ? 1 : 0;
          if (null) {
            views[i] = std::string_view();
          } else {
            views[i] =
                std::string_view(reinterpret_cast<const char*>(values[v].ptr), values[v].len);
            ++v;
          }
        }
        ARROW_RETURN_NOT_OK(fn(views.data(), is_null.data(), levels));
      }
    } catch (const parquet::ParquetException& e) {
      return Annotate(arrow::Status::IOError(e.what(), " (row group ", unit, ")"), file_);
    }
    return arrow::Status::OK();
  }

 private:
  std::unique_ptr<parquet::arrow::FileReader> reader_;
  std::shared_ptr<arrow::Schema> schema_;
};

// CSV and JSON: the file is parsed once into memory.
class WholeFileReader final : public DataFileReader {
 public:
  WholeFileReader(DataFile file, std::shared_ptr<arrow::RecordBatch> batch)
      : DataFileReader(std::move(file)), batch_(std::move(batch)), schema_(batch_->schema()) {}

  const std::shared_ptr<arrow::Schema>& schema() const override { return schema_; }
  int num_units() const override { return 1; }
  int64_t unit_rows(int) const override { return batch_->num_rows(); }
  int64_t num_rows() const override { return batch_->num_rows(); }

  arrow::Result<std::shared_ptr<arrow::RecordBatch>> ReadUnit(
      int, const std::vector<int>* columns) override {
    if (columns == nullptr) return batch_;
    return batch_->SelectColumns(*columns);
  }

 private:
  std::shared_ptr<arrow::RecordBatch> batch_;
  std::shared_ptr<arrow::Schema> schema_;
};

arrow::Result<std::shared_ptr<arrow::Table>> ReadCsv(
    const std::shared_ptr<arrow::io::InputStream>& input, const DataReadOptions& options,
    bool project) {
  auto read = arrow::csv::ReadOptions::Defaults();
  read.use_threads = false;
  auto convert = arrow::csv::ConvertOptions::Defaults();
  for (const auto& [name, type] : options.column_types) convert.column_types[name] = type;
  if (project && options.only_columns) convert.include_columns = *options.only_columns;
  ARROW_ASSIGN_OR_RAISE(
      auto reader, arrow::csv::TableReader::Make(KeyedIoContext(), input, read,
                                                 arrow::csv::ParseOptions::Defaults(), convert));
  return reader->Read();
}

arrow::Result<std::shared_ptr<arrow::Table>> ReadJson(
    const std::shared_ptr<arrow::io::InputStream>& input, const DataReadOptions& options) {
  auto read = arrow::json::ReadOptions::Defaults();
  read.use_threads = false;
  auto parse = arrow::json::ParseOptions::Defaults();
  arrow::FieldVector typed;
  for (const auto& [name, type] : options.column_types) typed.push_back(arrow::field(name, type));
  if (!typed.empty()) {
    parse.explicit_schema = arrow::schema(typed);
    parse.unexpected_field_behavior = arrow::json::UnexpectedFieldBehavior::InferType;
  }
  ARROW_ASSIGN_OR_RAISE(auto reader,
                        arrow::json::TableReader::Make(KeyedMemoryPool(), input, read, parse));
  return reader->Read();
}

arrow::Result<std::unique_ptr<DataFileReader>> OpenWhole(
    const std::shared_ptr<arrow::fs::FileSystem>& fs, const DataFile& file,
    const DataReadOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto input, fs->OpenInputStream(file.path));
  std::shared_ptr<arrow::Table> table;
  if (file.format == FileFormat::kCsv) {
    auto projected = ReadCsv(input, options, /*project=*/true);
    if (!projected.ok() && options.only_columns) {
      // Say which column is missing, with the file's columns.
      ARROW_ASSIGN_OR_RAISE(auto again, fs->OpenInputStream(file.path));
      ARROW_ASSIGN_OR_RAISE(auto full, ReadCsv(again, options, /*project=*/false));
      for (const auto& name : *options.only_columns) {
        if (full->schema()->GetFieldIndex(name) < 0) {
          return arrow::Status::Invalid(
              "column '", name, "' is missing (columns: ", ColumnList(*full->schema()), ")");
        }
      }
      return projected.status();
    }
    ARROW_ASSIGN_OR_RAISE(table, std::move(projected));
  } else {
    ARROW_ASSIGN_OR_RAISE(table, ReadJson(input, options));
    if (options.only_columns) {
      std::vector<int> indices;
      for (const auto& name : *options.only_columns) {
        int i = table->schema()->GetFieldIndex(name);
        if (i < 0) {
          return arrow::Status::Invalid(
              "column '", name, "' is missing (columns: ", ColumnList(*table->schema()), ")");
        }
        indices.push_back(i);
      }
      ARROW_ASSIGN_OR_RAISE(table, table->SelectColumns(indices));
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto batch, table->CombineChunksToBatch());
  return std::make_unique<WholeFileReader>(file, std::move(batch));
}

arrow::Result<std::unique_ptr<DataFileReader>> OpenParquet(
    const std::shared_ptr<arrow::fs::FileSystem>& fs, const DataFile& file) {
  ARROW_ASSIGN_OR_RAISE(auto input, fs->OpenInputFile(file.path));
  parquet::arrow::FileReaderBuilder builder;
  ARROW_RETURN_NOT_OK(builder.Open(input, parquet::ReaderProperties(KeyedMemoryPool())));
  builder.memory_pool(KeyedMemoryPool());
  parquet::ArrowReaderProperties props;
  props.set_use_threads(false);
  props.set_pre_buffer(true);
  builder.properties(props);
  ARROW_ASSIGN_OR_RAISE(auto reader, builder.Build());
  std::shared_ptr<arrow::Schema> schema;
  ARROW_RETURN_NOT_OK(reader->GetSchema(&schema));
  return std::make_unique<ParquetFileReader>(file, std::move(reader), std::move(schema));
}

}  // namespace

bool IsByteArrayStringType(const arrow::DataType& type) {
  switch (type.id()) {
    case arrow::Type::STRING:
    case arrow::Type::BINARY:
    case arrow::Type::LARGE_STRING:
    case arrow::Type::LARGE_BINARY:
    case arrow::Type::STRING_VIEW:
    case arrow::Type::BINARY_VIEW:
      return true;
    default:
      return false;
  }
}

arrow::Result<std::unique_ptr<DataFileReader>> DataFileReader::Open(
    std::shared_ptr<arrow::fs::FileSystem> fs, const DataFile& file,
    const DataReadOptions& options) {
  auto opened =
      file.format == FileFormat::kParquet ? OpenParquet(fs, file) : OpenWhole(fs, file, options);
  if (!opened.ok()) return Annotate(opened.status(), file);
  return opened;
}

}  // namespace thund::engine::keyed
