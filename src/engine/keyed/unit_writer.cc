#include "engine/keyed/unit_writer.h"

#include <arrow/util/key_value_metadata.h>
#include <parquet/metadata.h>
#include <parquet/schema.h>

namespace thund::engine::keyed {

UnitWriter::UnitWriter(std::shared_ptr<arrow::fs::FileSystem> fs, const Source* source,
                       std::shared_ptr<arrow::Schema> written_schema, KeyedWriteFilter* filter,
                       OutputFileWriter* writer, bool target_checked, bool passthrough,
                       int64_t batch_size, std::string where)
    : fs_(std::move(fs)),
      source_(source),
      written_schema_(std::move(written_schema)),
      filter_(filter),
      writer_(writer),
      target_checked_(target_checked),
      passthrough_(passthrough && source != nullptr),
      batch_size_(batch_size),
      where_(std::move(where)) {}

bool UnitWriter::DeferAllNew(int file) const {
  if (!passthrough_ || !target_checked_) return false;
  const auto& schema = source_->file_schemas[file];
  return schema != nullptr && source_->files[file].format == FileFormat::kParquet &&
         schema->Equals(*written_schema_, /*check_metadata=*/false);
}

arrow::Status UnitWriter::WriteRows(const std::shared_ptr<arrow::RecordBatch>& batch,
                                    const std::vector<int64_t>* source_rows) {
  if (batch->num_rows() == 0) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto split,
                        filter_->FilterForWrite(*batch, target_checked_, where_, source_rows));
  if (split.now->num_rows() > 0) ARROW_RETURN_NOT_OK(writer_->Write(split.now));
  if (split.deferred) deferred_.push_back(split.deferred);
  return arrow::Status::OK();
}

// Reads unit `index` whole and writes its rows: those with writable[i] as
// they are (already claimed), or all of them through WriteRows when null.
arrow::Status UnitWriter::ReadAndWriteUnit(int64_t index, const std::vector<uint8_t>* writable) {
  ARROW_ASSIGN_OR_RAISE(UnitRows rows, ReadSourceUnit(fs_, *source_, source_->units[index],
                                                      UnitFilter{}, /*batch_size=*/1 << 30,
                                                      /*keys_only=*/false));
  for (const auto& b : rows.batches) {
    if (writable == nullptr) {
      ARROW_RETURN_NOT_OK(WriteRows(b));
      continue;
    }
    int64_t n = 0;
    for (uint8_t w : *writable) n += w;
    ARROW_ASSIGN_OR_RAISE(auto kept, KeepRows(*b, *writable, n));
    for (int64_t off = 0; off < kept->num_rows(); off += batch_size_) {
      ARROW_RETURN_NOT_OK(writer_->Write(kept->Slice(off, batch_size_)));
    }
  }
  return arrow::Status::OK();
}

// The file stopped qualifying: its eligible units are written row by row.
arrow::Status UnitWriter::FlushPending() {
  for (int64_t index : pending_) {
    ARROW_ASSIGN_OR_RAISE(UnitRows rows, ReadSourceUnit(fs_, *source_, source_->units[index],
                                                        UnitFilter{}, batch_size_, false));
    for (const auto& b : rows.batches) ARROW_RETURN_NOT_OK(writer_->Write(b));
  }
  pending_.clear();
  pending_rows_ = 0;
  file_qualifies_ = false;
  return arrow::Status::OK();
}

arrow::Status UnitWriter::ConsumeUnit(int64_t index, UnitRows rows) {
  const SourceUnit& unit = source_ ? source_->units[index] : SourceUnit{};
  if (source_ != nullptr && unit.file != current_file_) {
    current_file_ = unit.file;
    file_qualifies_ = DeferAllNew(unit.file);
    pending_.clear();
    pending_rows_ = 0;
  }
  if (rows.all_new_keys) {
    std::vector<uint8_t> writable;
    ARROW_ASSIGN_OR_RAISE(
        int64_t n,
        rows.all_new_encoded
            ? filter_->ClaimRowsEncoded(*rows.all_new_encoded, where_, &writable, unit.first_row)
            : filter_->ClaimRows(*rows.all_new_keys, where_, &writable, unit.first_row));
    if (n == rows.all_new_keys->num_rows() && file_qualifies_) {
      pending_.push_back(index);
      pending_rows_ += n;
    } else {
      ARROW_RETURN_NOT_OK(FlushPending());
      const bool all_mode = filter_->options().duplicates == Duplicates::kAll;
      // duplicates=all: rows of repeated keys go through FilterForWrite (deferred).
      ARROW_RETURN_NOT_OK(ReadAndWriteUnit(index, all_mode ? nullptr : &writable));
    }
  } else {
    if (file_qualifies_) ARROW_RETURN_NOT_OK(FlushPending());
    for (size_t b = 0; b < rows.batches.size(); ++b) {
      ARROW_RETURN_NOT_OK(
          WriteRows(rows.batches[b], b < rows.batch_rows.size() ? &rows.batch_rows[b] : nullptr));
    }
  }
  // The file's last unit: commit it whole if every unit qualified.
  const bool last_of_file =
      source_ != nullptr && (index + 1 == static_cast<int64_t>(source_->units.size()) ||
                             source_->units[index + 1].file != unit.file);
  if (last_of_file && file_qualifies_ && !pending_.empty()) {
    ARROW_RETURN_NOT_OK(PassThrough(unit.file, pending_rows_));
    pending_.clear();
    pending_rows_ = 0;
  }
  return arrow::Status::OK();
}

namespace {

// Whether Parquet files with these footers can be joined (parquet_join.h):
// the same schema, key/value metadata and writer.
bool Joinable(const parquet::FileMetaData& a, const parquet::FileMetaData& b) {
  const auto& ka = a.key_value_metadata();
  const auto& kb = b.key_value_metadata();
  return a.schema()->Equals(*b.schema()) && a.created_by() == b.created_by() &&
         (ka == nullptr ? kb == nullptr : kb != nullptr && ka->Equals(*kb));
}

}  // namespace

arrow::Status UnitWriter::PassThrough(int file, int64_t rows) {
  ++files_passed_through_;
  const auto& footer = source_->footers[static_cast<size_t>(file)];
  const auto& first =
      joining_.empty() ? footer : source_->footers[static_cast<size_t>(joining_[0])];
  const bool fits = writer_->joins() && !joining_.empty() && footer != nullptr && first != nullptr &&
                    joining_rows_ + rows <= writer_->rows_per_file() && Joinable(*first, *footer);
  if (!fits) ARROW_RETURN_NOT_OK(FlushJoining());
  joining_.push_back(file);
  joining_rows_ += rows;
  return arrow::Status::OK();
}

arrow::Status UnitWriter::FlushJoining() {
  if (joining_.empty()) return arrow::Status::OK();
  std::vector<std::string> paths;
  for (int f : joining_) paths.push_back(source_->files[static_cast<size_t>(f)].path);
  const int64_t rows = joining_rows_;
  joining_.clear();
  joining_rows_ = 0;
  return writer_->CopyFiles(std::move(paths), rows);
}

arrow::Status UnitWriter::Finish() { return FlushJoining(); }

}  // namespace thund::engine::keyed
