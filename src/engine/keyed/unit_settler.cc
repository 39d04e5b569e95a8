#include "engine/keyed/unit_settler.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/key_encoder.h"
#include "engine/keyed/ordered_parallel.h"
#include "engine/keyed/stored_chunk.h"

namespace thund::engine::keyed {
bool UnitSettler::Applies(const Source& source, const KeySpec& spec) {
  if (!IsSingleVariableKey(spec) || spec.storage != KeyStorage::kBytes) return false;
  if (source.units.empty()) return false;
  for (size_t f = 0; f < source.files.size(); ++f) {
    const auto& schema = source.file_schemas[f];
    if (schema == nullptr || source.files[f].format != FileFormat::kParquet) return false;
    const int field = FindColumn(*schema, spec.names[0]);
    if (field < 0) return false;
    if (!ScansKeyFromPages(*schema->field(field)->type())) return false;
  }
  for (const SourceUnit& u : source.units) {
    if (u.rows < 0) return false;
  }
  return true;
}

UnitSettler::UnitSettler(std::shared_ptr<arrow::fs::FileSystem> fs, const Source* source,
                         KeySpec spec, int64_t threads, int64_t round_rows, int64_t step_rows,
                         bool compare_stored)
    : fs_(std::move(fs)),
      source_(source),
      spec_(std::move(spec)),
      threads_(std::max<int64_t>(1, threads)),
      round_rows_(std::max<int64_t>(1, round_rows)),
      step_rows_(std::max<int64_t>(1, step_rows)),
      compare_stored_(compare_stored),
      settled_(source->units.size(), 0) {
  for (const auto& schema : source_->file_schemas) {
    key_fields_.push_back(FindColumn(*schema, spec_.names[0]));
  }
}

RowKeyIndexRounds UnitSettler::Rounds() {
  RowKeyIndexRounds rounds;
  rounds.round_rows = round_rows_;
  rounds.after_round = [this](const RowKeyIndex& index) { return AfterRound(index); };
  rounds.keep_round = [this](int64_t rows_loaded_after) { return WantsRound(rows_loaded_after); };
  if (compare_stored_) {
    rounds.before_rounds =
        [this](const std::vector<DataFile>& files,
               const std::vector<std::unique_ptr<DataFileReader>>& readers) -> arrow::Result<bool> {
      ARROW_RETURN_NOT_OK(SettleTwins(files, readers));
      // Every row group written already: no key of the target is needed.
      return settled_units_ < static_cast<int64_t>(source_->units.size());
    };
  }
  return rounds;
}

arrow::Status UnitSettler::SettleTwins(
    const std::vector<DataFile>& target_files,
    const std::vector<std::unique_ptr<DataFileReader>>& target_readers) {
  struct TargetChunk {
    size_t file;
    StoredChunk chunk;
  };
  std::unordered_multimap<std::string, TargetChunk> by_form;
  target_rows_ = 0;
  for (const auto& reader : target_readers) target_rows_ += reader ? reader->num_rows() : 0;
  for (size_t f = 0; f < target_files.size() && f < target_readers.size(); ++f) {
    const DataFileReader* reader = target_readers[f].get();
    const auto footer = reader != nullptr ? reader->parquet_footer() : nullptr;
    if (footer == nullptr) continue;
    const int field = FindColumn(*reader->schema(), spec_.names[0]);
    if (field < 0) continue;
    const std::string& column = reader->schema()->field(field)->name();
    for (int g = 0; g < reader->num_units(); ++g) {
      auto chunk = StoredNonNullChunk(*footer, g, column);
      if (!chunk) continue;
      std::string form = chunk->form;  // (not moved from below)
      by_form.emplace(std::move(form), TargetChunk{f, std::move(*chunk)});
    }
  }
  if (by_form.empty()) return arrow::Status::OK();
  std::vector<uint8_t> twin(source_->units.size(), 0);
  ARROW_RETURN_NOT_OK(ParallelFor("comparing source row groups with the target's stored key columns", static_cast<int64_t>(twin.size()), threads_, [&](int64_t i) {
    const SourceUnit& u = source_->units[static_cast<size_t>(i)];
    const auto& footer = source_->footers[static_cast<size_t>(u.file)];
    if (footer == nullptr || settled(i)) return arrow::Status::OK();
    const auto& column = source_->file_schemas[u.file]->field(key_fields_[u.file])->name();
    const auto chunk = StoredNonNullChunk(*footer, u.unit, column);
    if (!chunk) return arrow::Status::OK();
    const auto [begin, end] = by_form.equal_range(chunk->form);
    for (auto it = begin; it != end && !twin[static_cast<size_t>(i)]; ++it) {
      auto same = SameStoredBytes(*fs_, source_->files[u.file].path, *chunk,
                                  target_files[it->second.file].path, it->second.chunk);
      twin[static_cast<size_t>(i)] = same.ok() && *same;
    }
    return arrow::Status::OK();
  }));
  for (size_t i = 0; i < twin.size(); ++i) {
    if (!twin[i]) continue;
    Settle(static_cast<int64_t>(i));
    ++twin_units_;
  }
  SkipSettled();
  return arrow::Status::OK();
}

void UnitSettler::SkipSettled() {
  const int64_t units = static_cast<int64_t>(source_->units.size());
  while (next_ < units && settled(next_)) {
    read_rows_ += source_->units[static_cast<size_t>(next_++)].rows;
  }
}

arrow::Status UnitSettler::LookUpBatch(const RowKeyIndex& index, const std::string_view* values,
                                       int64_t n, Kept* kept, UnitKeys* missing, Walk* walk) const {
  const std::vector<uint8_t> no_nulls(static_cast<size_t>(n), 0);
  EncodedKeys keys;
  ARROW_RETURN_NOT_OK(EncodeViews(spec_, values, no_nulls.data(), n, &keys));
  std::vector<uint8_t> found(static_cast<size_t>(n));
  std::vector<int64_t> rows(static_cast<size_t>(n));
  ARROW_RETURN_NOT_OK(index.LookupRows(keys, found.data(), rows.data()));
  const int64_t before = missing->rows();
  for (int64_t i = 0; i < n; ++i) {
    if (!found[static_cast<size_t>(i)]) missing->Add(values[i]);
  }
  kept->gained += n - (missing->rows() - before);
  walk->next_row =
      n > 0 && found[static_cast<size_t>(n - 1)] ? rows[static_cast<size_t>(n - 1)] + 1 : -1;
  return arrow::Status::OK();
}

arrow::Status UnitSettler::LookUp(const RowKeyIndex& index, const std::string_view* values,
                                  int64_t n, Kept* kept, UnitKeys* missing, Walk* walk) const {
  int64_t i = 0;
  while (i < n) {
    // On a walk: the key is the next row's, compared in place.
    if (walk->next_row >= 0) {
      ARROW_ASSIGN_OR_RAISE(bool same, index.RowHolds(walk->next_row, values[i], &walk->at));
      if (same) {
        ++kept->gained;
        ++walk->next_row;
        ++i;
        continue;
      }
    }
    // Off the walk: this key alone, to find where a walk goes on...
    const int64_t before = kept->gained;
    ARROW_RETURN_NOT_OK(LookUpBatch(index, values + i, 1, kept, missing, walk));
    ++i;
    if (kept->gained > before) continue;
    // ...and when it is not there either, the rest in one batch.
    return LookUpBatch(index, values + i, n - i, kept, missing, walk);
  }
  return arrow::Status::OK();
}

arrow::Status UnitSettler::FirstLookUp(const RowKeyIndex& index, Kept* kept) const {
  const SourceUnit& u = source_->units[static_cast<size_t>(kept->unit)];
  ARROW_ASSIGN_OR_RAISE(auto reader, DataFileReader::Open(fs_, source_->files[u.file]));
  int64_t rows = 0;
  Walk walk;
  // Looked up as the pages are scanned, while their keys are in the caches;
  // only the keys not found are copied.
  ARROW_RETURN_NOT_OK(reader->ScanStringColumn(
      u.unit, key_fields_[u.file], kKeyScanRows,
      [&](const std::string_view* values, const uint8_t* is_null, int64_t n) {
        rows += n;
        for (int64_t i = 0; i < n && !kept->has_null; ++i) kept->has_null = is_null[i] != 0;
        if (kept->has_null) return arrow::Status::OK();  // left to the streaming write
        return LookUp(index, values, n, kept, &kept->missing, &walk);
      }));
  if (rows != u.rows) {
    return arrow::Status::IOError("source file '", source_->files[u.file].path, "' row group ",
                                  u.unit, ": read ", rows, " keys, its footer says ", u.rows);
  }
  return arrow::Status::OK();
}

arrow::Status UnitSettler::LookUpAgain(const RowKeyIndex& index, Kept* kept) const {
  UnitKeys still;
  std::vector<std::string_view> views;
  Walk walk;
  kept->gained = 0;
  for (int64_t at = 0; at < kept->missing.rows(); at += kKeyScanRows) {
    const int64_t n = std::min(kept->missing.rows() - at, kKeyScanRows);
    views.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) views[static_cast<size_t>(i)] = kept->missing.At(at + i);
    ARROW_RETURN_NOT_OK(LookUp(index, views.data(), n, kept, &still, &walk));
  }
  kept->missing = std::move(still);
  return arrow::Status::OK();
}

bool UnitSettler::WantsRound(int64_t rows_loaded_after) const {
  return !done_ && (!kept_.empty() || read_rows_ < rows_loaded_after);
}

void UnitSettler::Settle(int64_t unit) {
  settled_[static_cast<size_t>(unit)] = 1;
  dropped_rows_ = 0;
  ++settled_units_;
  settled_rows_ += source_->units[static_cast<size_t>(unit)].rows;
}

arrow::Result<bool> UnitSettler::AfterRound(const RowKeyIndex& index) {
  if (done_) return false;
  const int64_t units = static_cast<int64_t>(source_->units.size());
  // The row groups kept from earlier rounds: settled, kept, or the end.
  // A failure leaves the row group to the streaming write, which fails the
  // run on it with its own message (naming the source, not the target).
  ARROW_RETURN_NOT_OK(ParallelFor("settling kept source row groups against the target's keys", static_cast<int64_t>(kept_.size()), threads_, [&](int64_t i) {
    kept_[i].failed = !LookUpAgain(index, &kept_[i]).ok();
    return arrow::Status::OK();
  }));
  std::vector<Kept> still;
  for (Kept& k : kept_) {
    if (k.failed) continue;
    if (k.missing.rows() == 0) {
      Settle(k.unit);
    } else if (k.gained == 0 || ++k.rounds_kept >= kMaxRoundsKept) {
      // A round brought it nothing (its missing keys are likely new), or its
      // matches are spread over the target: left to the streaming write.
      // After a step's worth of such rows with nothing settled in between,
      // the orders are taken to differ.
      dropped_rows_ += source_->units[static_cast<size_t>(k.unit)].rows;
      done_ = done_ || dropped_rows_ >= step_rows_;
    } else {
      still.push_back(std::move(k));
    }
  }
  kept_ = std::move(still);
  // Row groups not read yet, a step at a time, as far as the keys loaded so
  // far could cover: reading further ahead would mostly keep keys whose match
  // is not loaded yet, to look them up again.
  while (!done_ && next_ < units && read_rows_ < index.size()) {
    const int64_t want = std::min(step_rows_, index.size() - read_rows_);
    // Row groups settled already (by SettleTwins) count as read; past `want`
    // rows, a step takes more row groups (up to one per thread) only while
    // they are to be read.
    int64_t end = next_, rows = 0;
    std::vector<Kept> step;
    while (end < units &&
           (rows < want || (static_cast<int64_t>(step.size()) < threads_ && !settled(end)))) {
      rows += source_->units[static_cast<size_t>(end)].rows;
      if (!settled(end)) step.emplace_back().unit = end;
      ++end;
    }
    read_rows_ += rows;
    ARROW_RETURN_NOT_OK(ParallelFor("settling source row groups against the target's keys", static_cast<int64_t>(step.size()), threads_, [&](int64_t i) {
      step[i].failed = !FirstLookUp(index, &step[i]).ok();
      return arrow::Status::OK();
    }));
    for (Kept& k : step) {
      if (k.has_null || k.failed) continue;  // left to the streaming write
      if (k.missing.rows() == 0) {
        Settle(k.unit);
      } else {
        kept_.push_back(std::move(k));
      }
    }
    next_ = end;
  }
  SkipSettled();
  // Nothing kept, and the source read so far already covers every target
  // row: no later round can settle anything (the rest loads in one go).
  const bool covered = target_rows_ >= 0 && read_rows_ >= target_rows_;
  if (done_ || (kept_.empty() && (next_ == units || covered))) {
    done_ = true;
    kept_.clear();
  }
  return !done_;
}

}  // namespace thund::engine::keyed
