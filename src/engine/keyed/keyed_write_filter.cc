#include "engine/keyed/keyed_write_filter.h"

#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api_vector.h>
#include <arrow/datum.h>

#include <cstdio>

#include "engine/keyed/memory_pool.h"

namespace thund::engine::keyed {
namespace {

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

std::vector<std::shared_ptr<arrow::Array>> Columns(const arrow::RecordBatch& batch,
                                                   const std::vector<int>& indices) {
  std::vector<std::shared_ptr<arrow::Array>> out;
  for (int i : indices) out.push_back(batch.column(i));
  return out;
}

// Whether `keys` has the shape EncodeKeys gives under `spec`.
arrow::Status CheckEncoded(const KeySpec& spec, const EncodedKeys& keys, const std::string& where) {
  const size_t n = static_cast<size_t>(keys.length);
  const bool bytes_ok = keys.storage == KeyStorage::kBytes ? keys.bytes.size() == n : true;
  if (keys.storage != spec.storage || keys.length < 0 || keys.is_null.size() != n ||
      keys.hash.size() != n || keys.w0.size() != n || keys.w1.size() != n || !bytes_ok) {
    return arrow::Status::Invalid(where, ": encoded keys do not match the key spec (",
                                  spec.ToString(), ")");
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Result<std::shared_ptr<arrow::RecordBatch>> KeepRows(const arrow::RecordBatch& batch,
                                                            const std::vector<uint8_t>& keep,
                                                            int64_t kept) {
  if (kept == batch.num_rows()) {
    return arrow::RecordBatch::Make(batch.schema(), batch.num_rows(), batch.columns());
  }
  if (kept == 0) return batch.Slice(0, 0);
  arrow::BooleanBuilder builder(KeyedMemoryPool());
  ARROW_RETURN_NOT_OK(builder.Reserve(batch.num_rows()));
  for (int64_t i = 0; i < batch.num_rows(); ++i) builder.UnsafeAppend(keep[i] != 0);
  ARROW_ASSIGN_OR_RAISE(auto mask, builder.Finish());
  auto shared = arrow::RecordBatch::Make(batch.schema(), batch.num_rows(), batch.columns());
  ARROW_ASSIGN_OR_RAISE(
      auto filtered,
      arrow::compute::Filter(arrow::Datum(shared), arrow::Datum(mask),
                             arrow::compute::FilterOptions::Defaults(), KeyedExecContext()));
  return filtered.record_batch();
}

KeyedWriteFilter::KeyedWriteFilter(KeyedWriteOptions options, KeySpec spec, TargetKeys target)
    : options_(std::move(options)), spec_(std::move(spec)), target_(std::move(target)) {
  const int64_t buckets = options_.EffectiveBuckets();
  if (options_.duplicates == Duplicates::kFirst) {
    written_ = KeySet::Make(spec_.storage, buckets);
  } else {
    seen_ = KeySet::Make(spec_.storage, buckets);
    repeated_ = KeySet::Make(spec_.storage, buckets);
  }
}

arrow::Result<std::unique_ptr<KeyedWriteFilter>> KeyedWriteFilter::Make(
    const KeyedWriteOptions& options, const arrow::Schema& written_schema,
    std::shared_ptr<arrow::fs::FileSystem> fs, const std::string& target_dir,
    const KeyedEventSink& on_event) {
  return Make(options, written_schema, std::move(fs), std::vector<std::string>{target_dir},
              on_event);
}

arrow::Result<std::unique_ptr<KeyedWriteFilter>> KeyedWriteFilter::Make(
    const KeyedWriteOptions& options, const arrow::Schema& written_schema,
    std::shared_ptr<arrow::fs::FileSystem> fs, const std::vector<std::string>& target_dirs,
    const KeyedEventSink& on_event, const RowKeyIndexRounds* rounds) {
  std::string target_dir;
  for (const auto& d : target_dirs) target_dir += (target_dir.empty() ? "" : " + ") + d;
  ARROW_RETURN_NOT_OK(options.Validate());
  // The memory pool this write uses, from before its keys load until the
  // filter goes (released then when no other keyed write is running).
  auto memory_scope = std::make_unique<KeyedMemoryScope>(options.memory_pool);
  ARROW_ASSIGN_OR_RAISE(KeySpec spec, KeySpec::Make(written_schema, options.keys, options.match,
                                                    "keyed write to '" + target_dir + "'"));
  ARROW_ASSIGN_OR_RAISE(TargetKeys target, LoadTargetKeys(fs, target_dirs, spec, options, rounds));
  auto emit = [&](KeyedEvent::Kind kind, std::string message) {
    if (on_event) on_event(KeyedEvent{kind, std::move(message)});
  };
  if (!target.target_exists) {
    emit(KeyedEvent::Kind::kTargetMissing,
         "target '" + target_dir + "' does not exist yet: no row is skipped");
  } else if (target.rows == 0) {
    emit(KeyedEvent::Kind::kTargetEmpty, "target '" + target_dir + "' holds no rows (" +
                                             std::to_string(target.files) +
                                             " data files): no row is skipped");
  } else if (target.load_skipped) {
    emit(KeyedEvent::Kind::kTargetLoaded,
         "target '" + target_dir + "' holds " + std::to_string(target.rows) + " rows in " +
             std::to_string(target.files) +
             " files; its keys were not loaded: every row group of the source is stored in it "
             "already");
  } else {
    const double per_key = target.keys > 0 ? static_cast<double>(target.memory_bytes) /
                                                 static_cast<double>(target.keys)
                                           : 0.0;
    std::string msg =
        "loaded " + std::to_string(target.keys) + " keys [" + spec.ToString() + "] from " +
        std::to_string(target.files) + " files of '" + target_dir + "' in " +
        Fixed(target.seconds, 2) + " s; " +
        (target.indexed ? "row index (keys confirmed from the target's files) " : "key set ") +
        std::to_string(target.memory_bytes) + " bytes (" + Fixed(per_key, 1) + " bytes/key, " +
        std::to_string(options.EffectiveBuckets()) + " buckets)";
    if (target.null_rows > 0) {
      msg += "; " + std::to_string(target.null_rows) + " target rows with a NULL key ignored";
    }
    emit(KeyedEvent::Kind::kTargetLoaded, std::move(msg));
  }
  std::unique_ptr<KeyedWriteFilter> filter(
      new KeyedWriteFilter(options, std::move(spec), std::move(target)));
  filter->memory_scope_ = std::move(memory_scope);
  return filter;
}

arrow::Status KeyedWriteFilter::Encode(const std::vector<std::shared_ptr<arrow::Array>>& key_arrays,
                                       const std::string& where, EncodedKeys* keys) const {
  if (key_arrays.size() != spec_.names.size()) {
    return arrow::Status::Invalid(where, ": expected ", spec_.names.size(), " key columns, got ",
                                  key_arrays.size());
  }
  arrow::FieldVector fields;
  for (size_t k = 0; k < key_arrays.size(); ++k) {
    fields.push_back(arrow::field(spec_.names[k], key_arrays[k]->type()));
  }
  const int64_t n = key_arrays.empty() ? 0 : key_arrays[0]->length();
  auto batch = arrow::RecordBatch::Make(arrow::schema(fields), n, key_arrays);
  std::vector<int> all(key_arrays.size());
  for (size_t k = 0; k < all.size(); ++k) all[k] = static_cast<int>(k);
  ARROW_ASSIGN_OR_RAISE(auto cast, CastKeyColumns(spec_, *batch, all, where));
  arrow::Status st = EncodeKeys(spec_, cast, keys);
  return st.ok() ? st : st.WithMessage(where, ": ", st.message());
}

arrow::Status KeyedWriteFilter::CheckNulls(const EncodedKeys& keys, const std::string& where,
                                           int64_t first_row) const {
  if (keys.null_count == 0 || options_.null_keys == NullKeys::kDrop) return arrow::Status::OK();
  int64_t row = 0;
  while (!keys.is_null[row]) ++row;
  std::string names;
  for (size_t k = 0; k < spec_.names.size(); ++k) names += (k > 0 ? ", " : "") + spec_.names[k];
  return arrow::Status::Invalid(
      where, " row ", first_row + row + 1, ": a key column (", names, ") is NULL (",
      keys.null_count,
      " such rows in this batch); a checkpoint key must identify its row. Fix or filter these "
      "rows (WHERE key IS NOT NULL), or drop them with --null-keys drop (thund copy) / "
      "keyed_write null_keys: drop (a pipeline)");
}

arrow::Result<int64_t> KeyedWriteFilter::SelectNew(
    const std::vector<std::shared_ptr<arrow::Array>>& key_arrays, const std::string& where,
    int64_t first_row, std::vector<uint8_t>* keep) const {
  EncodedKeys keys;
  ARROW_RETURN_NOT_OK(Encode(key_arrays, where, &keys));
  keep->assign(static_cast<size_t>(keys.length), 0);
  return SelectNewEncoded(keys, where, first_row, keep->data());
}

arrow::Result<int64_t> KeyedWriteFilter::SelectNewEncoded(const EncodedKeys& keys,
                                                          const std::string& where,
                                                          int64_t first_row, uint8_t* keep) const {
  ARROW_RETURN_NOT_OK(CheckNulls(keys, where, first_row));
  ARROW_RETURN_NOT_OK(target_.set->Lookup(keys, keep));
  int64_t kept = 0, existing = 0;
  for (int64_t i = 0; i < keys.length; ++i) {
    existing += keep[i];
    keep[i] = !keep[i] && !keys.is_null[i];
    kept += keep[i];
  }
  skipped_existing_ += existing;
  null_keys_ += keys.null_count;
  return kept;
}

arrow::Result<std::shared_ptr<arrow::RecordBatch>> KeyedWriteFilter::DropExisting(
    const arrow::RecordBatch& batch, const std::vector<int>& key_columns, const std::string& where,
    int64_t first_row) const {
  std::vector<uint8_t> keep;
  ARROW_ASSIGN_OR_RAISE(int64_t kept,
                        SelectNew(Columns(batch, key_columns), where, first_row, &keep));
  return KeepRows(batch, keep, kept);
}

void KeyedWriteFilter::ExpectNewKeys(int64_t new_keys) {
  if (new_keys <= 0) return;
  // Keys written as source rows go to written_rows_ (sized by UseSourceRows):
  // then the byte set of the rest stays small and unreserved.
  for (auto* s : {written_rows_ ? nullptr : written_.get(), seen_.get()}) {
    if (s != nullptr) s->Reserve(new_keys);
  }
}

arrow::Status KeyedWriteFilter::UseSourceRows(std::shared_ptr<arrow::fs::FileSystem> fs,
                                              std::vector<DataFile> files,
                                              std::vector<int> key_fields,
                                              std::vector<RowKeyIndex::Unit> units,
                                              int64_t expected_new_keys) {
  if (options_.key_index != KeyIndex::kRows || options_.duplicates != Duplicates::kFirst ||
      !IsSingleVariableKey(spec_) || spec_.storage != KeyStorage::kBytes || files.empty()) {
    return arrow::Status::OK();
  }
  for (const DataFile& f : files) {
    if (f.format != FileFormat::kParquet) return arrow::Status::OK();
  }
  const int64_t rows = units.empty() ? 0 : units.back().first_row + units.back().rows;
  if (rows > RowKeyIndex::kMaxRows) return arrow::Status::OK();  // cannot number: keep the KeySet
  RowKeyIndex::Tuning tuning = RowKeyIndex::Tuning::ForThreads(options_.EffectiveThreads());
  tuning.huge_pages = options_.huge_pages;
  auto index = RowKeyIndex::Make(std::move(fs), std::move(files), std::move(key_fields),
                                 std::move(units), options_.EffectiveBuckets(), expected_new_keys,
                                 tuning);
  if (!index.ok()) {
    return index.status().WithMessage("keyed write: building the index of the keys this run "
                                      "writes: ",
                                      index.status().message());
  }
  written_rows_ = std::move(index).ValueUnsafe();
  // Its table now, its memory faulted in by every thread, rather than by the
  // one thread that claims keys (~1 GiB at 189M rows, half of them new).
  return written_rows_->Reserve(options_.EffectiveThreads());
}

arrow::Result<int64_t> KeyedWriteFilter::ClaimFirst(const EncodedKeys& keys, int64_t first_row,
                                                    const int64_t* rows, uint8_t* mask,
                                                    uint8_t* first) {
  const int64_t n = keys.length;
  int64_t considered = 0;
  for (int64_t i = 0; i < n; ++i) considered += mask[i] && !keys.is_null[i];
  const bool numbered = first_row >= 0 || rows != nullptr;
  // A key counts as written when either set holds it: drop from `mask` the
  // keys of the set this batch does not go into.
  std::vector<uint8_t> in_other(static_cast<size_t>(n), 0);
  if (written_rows_ != nullptr && numbered) {
    if (written_->size() > 0) written_->Contains(keys, in_other.data());
  } else if (written_rows_ != nullptr && written_rows_->size() > 0) {
    ARROW_RETURN_NOT_OK(written_rows_->Lookup(keys, in_other.data()));
  }
  for (int64_t i = 0; i < n; ++i) mask[i] = mask[i] && !in_other[i];
  if (written_rows_ != nullptr && numbered) {
    ARROW_RETURN_NOT_OK(rows != nullptr
                            ? written_rows_->InsertIfAbsent(keys, rows, mask, first)
                            : written_rows_->InsertIfAbsent(keys, first_row, mask, first));
  } else {
    written_->InsertIfAbsent(keys, mask, first);
  }
  int64_t claimed = 0;
  for (int64_t i = 0; i < n; ++i) claimed += first[i];
  return considered - claimed;
}

arrow::Status KeyedWriteFilter::NoteForAll(const arrow::RecordBatch& batch,
                                           const std::string& where) {
  if (options_.duplicates != Duplicates::kAll) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto indices, spec_.Resolve(*batch.schema(), where));
  EncodedKeys keys;
  ARROW_RETURN_NOT_OK(Encode(Columns(batch, indices), where, &keys));
  std::vector<uint8_t> in_target(static_cast<size_t>(keys.length), 0);
  ARROW_RETURN_NOT_OK(target_.set->Lookup(keys, in_target.data()));
  std::vector<uint8_t> candidate(in_target.size()), first(in_target.size());
  for (size_t i = 0; i < in_target.size(); ++i) candidate[i] = !in_target[i];
  seen_->InsertIfAbsent(keys, candidate.data(), first.data());
  for (size_t i = 0; i < in_target.size(); ++i) candidate[i] = candidate[i] && !first[i];
  repeated_->Insert(keys, candidate.data());
  return arrow::Status::OK();
}

arrow::Result<KeyedWriteFilter::WriteSplit> KeyedWriteFilter::FilterForWrite(
    const arrow::RecordBatch& batch, bool target_checked, const std::string& where,
    const std::vector<int64_t>* source_rows) {
  ARROW_ASSIGN_OR_RAISE(auto indices, spec_.Resolve(*batch.schema(), where));
  EncodedKeys keys;
  ARROW_RETURN_NOT_OK(Encode(Columns(batch, indices), where, &keys));
  ARROW_RETURN_NOT_OK(CheckNulls(keys, where + " (output)", write_rows_));
  write_rows_ += keys.length;
  const size_t n = static_cast<size_t>(keys.length);
  std::vector<uint8_t> keep(n, 1);
  if (!target_checked) {
    std::vector<uint8_t> in_target(n, 0);
    ARROW_RETURN_NOT_OK(target_.set->Lookup(keys, in_target.data()));
    int64_t existing = 0;
    for (size_t i = 0; i < n; ++i) {
      existing += in_target[i];
      keep[i] = !in_target[i];
    }
    skipped_existing_ += existing;
  }
  // NULL keys here (null_keys=drop) were not dropped at a source: count them now.
  for (size_t i = 0; i < n; ++i) keep[i] = keep[i] && !keys.is_null[i];
  null_keys_ += keys.null_count;
  WriteSplit split;
  std::vector<uint8_t> later(n, 0);
  int64_t now = 0, deferred = 0;
  if (options_.duplicates == Duplicates::kFirst) {
    const bool numbered = source_rows != nullptr && source_rows->size() == n;
    std::vector<uint8_t> first(n, 0);
    ARROW_ASSIGN_OR_RAISE(
        int64_t dups,
        ClaimFirst(keys, -1, numbered ? source_rows->data() : nullptr, keep.data(), first.data()));
    skipped_duplicate_ += dups;
    for (size_t i = 0; i < n; ++i) {
      keep[i] = first[i];
      now += keep[i];
    }
  } else {
    std::vector<uint8_t> repeated(n, 0);
    repeated_->Contains(keys, repeated.data());
    for (size_t i = 0; i < n; ++i) {
      later[i] = keep[i] && repeated[i];
      keep[i] = keep[i] && !repeated[i];
      now += keep[i];
      deferred += later[i];
    }
  }
  ARROW_ASSIGN_OR_RAISE(split.now, KeepRows(batch, keep, now));
  if (deferred > 0) {
    ARROW_ASSIGN_OR_RAISE(split.deferred, KeepRows(batch, later, deferred));
  }
  return split;
}

arrow::Result<int64_t> KeyedWriteFilter::ClaimRows(const arrow::RecordBatch& keys_batch,
                                                   const std::string& where,
                                                   std::vector<uint8_t>* writable,
                                                   int64_t first_row) {
  ARROW_ASSIGN_OR_RAISE(auto indices, spec_.Resolve(*keys_batch.schema(), where));
  EncodedKeys keys;
  ARROW_RETURN_NOT_OK(Encode(Columns(keys_batch, indices), where, &keys));
  return ClaimRowsEncoded(keys, where, writable, first_row);
}

arrow::Result<int64_t> KeyedWriteFilter::ClaimRowsEncoded(const EncodedKeys& keys,
                                                          const std::string& where,
                                                          std::vector<uint8_t>* writable,
                                                          int64_t first_row) {
  ARROW_RETURN_NOT_OK(CheckEncoded(spec_, keys, where));
  ARROW_RETURN_NOT_OK(CheckNulls(keys, where, write_rows_));
  write_rows_ += keys.length;
  const size_t n = static_cast<size_t>(keys.length);
  writable->assign(n, 0);
  int64_t count = 0;
  if (options_.duplicates == Duplicates::kFirst) {
    std::vector<uint8_t> all(n, 1);
    ARROW_ASSIGN_OR_RAISE(int64_t dups,
                          ClaimFirst(keys, first_row, nullptr, all.data(), writable->data()));
    skipped_duplicate_ += dups;
    for (size_t i = 0; i < n; ++i) count += (*writable)[i];
  } else {
    repeated_->Contains(keys, writable->data());
    for (size_t i = 0; i < n; ++i) {
      (*writable)[i] = !(*writable)[i] && !keys.is_null[i];
      count += (*writable)[i];
    }
  }
  return count;
}

KeyedCounts KeyedWriteFilter::counts() const {
  KeyedCounts c;
  c.rows_skipped_existing = skipped_existing_.load();
  c.rows_skipped_duplicate = skipped_duplicate_.load();
  c.rows_null_key = null_keys_.load();
  return c;
}

int64_t KeyedWriteFilter::MemoryBytes() const {
  int64_t n = target_.set->MemoryBytes();
  for (const auto* s : {written_.get(), seen_.get(), repeated_.get()}) {
    if (s != nullptr) n += s->MemoryBytes();
  }
  if (written_rows_ != nullptr) n += written_rows_->MemoryBytes();
  return n;
}

}  // namespace thund::engine::keyed
