#include "engine/keyed/target_keys.h"

#include <algorithm>
#include <atomic>
#include <chrono>

#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/file_format.h"
#include "engine/keyed/key_encoder.h"
#include "engine/keyed/key_set.h"
#include "engine/keyed/ordered_parallel.h"
#include "engine/keyed/row_key_index.h"

namespace thund::engine::keyed {
namespace {

DataReadOptions KeyReadOptions(const KeySpec& spec) {
  DataReadOptions o;
  for (size_t k = 0; k < spec.names.size(); ++k) o.column_types[spec.names[k]] = spec.types[k];
  o.only_columns = spec.names;
  return o;
}

}  // namespace

arrow::Result<TargetKeys> LoadTargetKeys(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                         const std::string& dir, const KeySpec& spec,
                                         const KeyedWriteOptions& options) {
  return LoadTargetKeys(fs, std::vector<std::string>{dir}, spec, options);
}

arrow::Result<TargetKeys> LoadTargetKeys(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                         const std::vector<std::string>& dirs, const KeySpec& spec,
                                         const KeyedWriteOptions& options,
                                         const RowKeyIndexRounds* rounds) {
  const auto start = std::chrono::steady_clock::now();
  TargetKeys out;
  std::vector<DataFile> files;
  for (const auto& dir : dirs) {
    ARROW_ASSIGN_OR_RAISE(auto info, fs->GetFileInfo(dir));
    if (info.type() != arrow::fs::FileType::NotFound) out.target_exists = true;
    ARROW_ASSIGN_OR_RAISE(std::vector<DataFile> these, ListTargetFiles(*fs, dir));
    files.insert(files.end(), these.begin(), these.end());
  }
  out.files = static_cast<int64_t>(files.size());
  const int64_t threads = options.EffectiveThreads();
  const DataReadOptions read_options = KeyReadOptions(spec);

  // Phase 1: open every file (Parquet: footer only) to size the key set.
  std::vector<std::unique_ptr<DataFileReader>> readers(files.size());
  std::vector<std::vector<int>> key_indices(files.size());
  ARROW_RETURN_NOT_OK(ParallelFor("opening the target's files", static_cast<int64_t>(files.size()), threads, [&](int64_t i) {
    const std::string where = "target file '" + files[i].path + "'";
    auto opened = DataFileReader::Open(fs, files[i], read_options);
    if (!opened.ok()) {
      return opened.status().WithMessage(opened.status().message(),
                                         "; every file of the target must hold the key columns");
    }
    ARROW_ASSIGN_OR_RAISE(key_indices[i], spec.Resolve(*(*opened)->schema(), where));
    readers[i] = std::move(opened).ValueUnsafe();
    return arrow::Status::OK();
  }));
  int64_t expected = 0;
  for (const auto& r : readers) expected += r->num_rows();

  // Phase 2, exact single string key in Parquet files: a RowKeyIndex.
  bool indexable = options.key_index == KeyIndex::kRows && !files.empty() &&
                   IsSingleVariableKey(spec) && spec.storage == KeyStorage::kBytes;
  for (size_t i = 0; indexable && i < files.size(); ++i) {
    indexable =
        files[i].format == FileFormat::kParquet && readers[i]->ScansStrings(key_indices[i][0]);
  }
  if (indexable && expected <= RowKeyIndex::kMaxRows) {
    std::vector<int> key_fields;
    for (const auto& k : key_indices) key_fields.push_back(k[0]);
    RowKeyIndex::BuildStats stats;
    RowKeyIndex::Tuning tuning = RowKeyIndex::Tuning::ForThreads(threads);
    tuning.huge_pages = options.huge_pages;
    auto built = RowKeyIndex::Build(fs, spec, files, std::move(key_fields), std::move(readers),
                                    options.EffectiveBuckets(), threads, &stats, tuning, rounds);
    if (!built.ok()) {
      return built.status().WithMessage(
          "loading the target's keys: ", built.status().message(),
          "; every file of the target must be readable: repair that file or move it away");
    }
    auto index = std::move(built).ValueUnsafe();
    out.load_skipped = stats.skipped;
    out.rows = stats.skipped ? expected : stats.rows;
    out.null_rows = stats.null_rows;
    out.set = std::move(index);
    out.indexed = true;
  } else {
    // Phase 2, otherwise: read the key columns into a KeySet, one file per task.
    std::unique_ptr<KeySet> set = KeySet::Make(spec.storage, options.EffectiveBuckets());
    set->Reserve(expected);
    std::atomic<int64_t> rows{0}, nulls{0};
    ARROW_RETURN_NOT_OK(ParallelFor("loading the target's keys into the key set", static_cast<int64_t>(files.size()), threads, [&](int64_t i) {
      const std::string where = "target file '" + files[i].path + "'";
      DataFileReader& reader = *readers[i];
      EncodedKeys keys;
      for (int u = 0; u < reader.num_units(); ++u) {
        if (IsSingleVariableKey(spec)) {
          // Zero-copy: hash and insert straight from the Parquet pages.
          arrow::Status st = reader.ScanStringColumn(
              u, key_indices[i][0], std::min(options.EffectiveBatchSize(), kKeyScanRows),
              [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
                ARROW_RETURN_NOT_OK(EncodeViews(spec, values, is_null, n, &keys));
                set->Insert(keys);
                rows += n;
                nulls += keys.null_count;
                return arrow::Status::OK();
              });
          if (st.ok()) continue;
          if (!st.IsNotImplemented()) return st.WithMessage(where, ": ", st.message());
        }
        ARROW_ASSIGN_OR_RAISE(auto batch, reader.ReadUnit(u, &key_indices[i]));
        std::vector<int> all(static_cast<size_t>(batch->num_columns()));
        for (int c = 0; c < batch->num_columns(); ++c) all[c] = c;
        ARROW_ASSIGN_OR_RAISE(auto columns, CastKeyColumns(spec, *batch, all, where));
        auto st = EncodeKeys(spec, columns, &keys);
        if (!st.ok()) return st.WithMessage(where, ": ", st.message());
        set->Insert(keys);
        rows += keys.length;
        nulls += keys.null_count;
      }
      readers[i].reset();  // free the footer and buffers early
      return arrow::Status::OK();
    }));
    out.rows = rows.load();
    out.null_rows = nulls.load();
    out.set = std::move(set);
  }
  out.keys = out.set->size();
  out.memory_bytes = out.set->MemoryBytes();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace thund::engine::keyed
