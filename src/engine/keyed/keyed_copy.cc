#include "engine/keyed/keyed_copy.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "engine/exec/catch_all.h"
#include "engine/fs/atomic_write.h"
#include "engine/keyed/filter_placement.h"
#include "engine/keyed/memory_pool.h"
#include "engine/keyed/keyed_write_filter.h"
#include "engine/keyed/ordered_parallel.h"
#include "engine/keyed/source_scan.h"
#include "engine/keyed/target_guard.h"
#include "engine/keyed/transform_runner.h"
#include "engine/keyed/unit_settler.h"
#include "engine/keyed/unit_writer.h"

namespace thund::engine::keyed {
namespace {

using Batches = std::vector<std::shared_ptr<arrow::RecordBatch>>;

// State shared by the execution shapes.
struct Run {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  const KeyedCopyOptions* options = nullptr;
  KeyedEventSink on_event;
  std::vector<Source> sources;
  std::unique_ptr<TransformRunner> transform;
  std::unique_ptr<KeyedWriteFilter> filter;
  std::unique_ptr<OutputFileWriter> writer;
  std::unique_ptr<UnitWriter> unit_writer;
  std::unique_ptr<UnitSettler> settler;  // row groups found written while the target loaded
  FilterPlacement placement;
  int64_t rows_read = 0;
  int64_t threads = 1;
  int64_t batch_size = 1;

  void Emit(KeyedEvent::Kind kind, std::string message) const {
    if (on_event) on_event(KeyedEvent{kind, std::move(message)});
  }

  UnitFilter SourceFilter(const Source& s, bool use_filter) const {
    UnitFilter uf;
    auto it = placement.at_source.find(s.name);
    if (it != placement.at_source.end()) {
      uf.key_columns = it->second;
      if (use_filter) uf.filter = filter.get();
    }
    return uf;
  }

  bool settled(int64_t unit) const { return settler != nullptr && settler->settled(unit); }

  // Units of the single source, read + filtered (+ transformed) in parallel,
  // consumed in order.
  arrow::Status StreamUnits(bool keys_only, bool use_filter,
                            const std::function<arrow::Status(int64_t, UnitRows)>& consume) {
    const Source& s = sources[0];
    const UnitFilter uf = SourceFilter(s, use_filter);
    const bool apply_transform = transform != nullptr && !keys_only;
    return RunOrdered<UnitRows>(
        keys_only ? "reading the source's keys" : "reading, filtering and writing the source",
        static_cast<int64_t>(s.units.size()), threads, 2 * threads,
        [&](int64_t i) -> arrow::Result<UnitRows> {
          if (use_filter && settled(i)) {  // every row already written: not read again
            UnitRows rows;
            rows.rows_read = s.units[i].rows;
            return rows;
          }
          const bool defer = use_filter && !keys_only && unit_writer->DeferAllNew(s.units[i].file);
          ARROW_ASSIGN_OR_RAISE(
              UnitRows rows, ReadSourceUnit(fs, s, s.units[i], uf, batch_size, keys_only, defer));
          if (apply_transform) {
            for (auto& b : rows.batches) {
              ARROW_ASSIGN_OR_RAISE(b, transform->ApplyToBatch(s.name, b));
            }
          }
          return rows;
        },
        [&](int64_t i, UnitRows rows) -> arrow::Status {
          if (!keys_only) rows_read += rows.rows_read;
          return consume(i, std::move(rows));
        });
  }

  arrow::Status Streaming() {
    if (options->keyed.duplicates == Duplicates::kAll) {
      // Pre-pass: which keys occur more than once among the rows to write.
      const bool keys_only = transform == nullptr;
      ARROW_RETURN_NOT_OK(StreamUnits(keys_only, /*use_filter=*/false, [&](int64_t, UnitRows u) {
        for (const auto& b : u.batches) {
          ARROW_RETURN_NOT_OK(filter->NoteForAll(*b, "keyed write (duplicates=all pre-pass)"));
        }
        return arrow::Status::OK();
      }));
    }
    return StreamUnits(/*keys_only=*/false, /*use_filter=*/true, [&](int64_t i, UnitRows u) {
      return unit_writer->ConsumeUnit(i, std::move(u));
    });
  }

  arrow::Status Materialized() {
    for (const Source& s : sources) {
      const UnitFilter uf = SourceFilter(s, /*use_filter=*/true);
      Batches all;
      ARROW_RETURN_NOT_OK(RunOrdered<UnitRows>(
          "reading source '" + s.name + "'", static_cast<int64_t>(s.units.size()), threads, 2 * threads,
          [&](int64_t i) { return ReadSourceUnit(fs, s, s.units[i], uf, batch_size, false); },
          [&](int64_t, UnitRows rows) {
            rows_read += rows.rows_read;
            all.insert(all.end(), rows.batches.begin(), rows.batches.end());
            return arrow::Status::OK();
          }));
      ARROW_RETURN_NOT_OK(transform->Register(s.name, s.schema, std::move(all)));
    }
    auto drain =
        [&](const std::function<arrow::Status(const std::shared_ptr<arrow::RecordBatch>&)>& fn)
        -> arrow::Status {
      ARROW_ASSIGN_OR_RAISE(auto reader, transform->Stream());
      while (true) {
        ARROW_ASSIGN_OR_RAISE(auto batch, reader->Next());
        if (!batch) return arrow::Status::OK();
        ARROW_RETURN_NOT_OK(fn(batch));
      }
    };
    if (options->keyed.duplicates == Duplicates::kAll) {
      ARROW_RETURN_NOT_OK(drain([&](const std::shared_ptr<arrow::RecordBatch>& b) {
        return filter->NoteForAll(*b, "keyed write (duplicates=all pre-pass)");
      }));
    }
    return drain(
        [&](const std::shared_ptr<arrow::RecordBatch>& b) { return unit_writer->WriteRows(b); });
  }
};

// Keys written from whole new units of a Parquet source are held as that
// source's row numbers (KeyedWriteFilter::UseSourceRows) when every file has
// the key column as a string/binary Parquet column.
arrow::Status UseSourceRowsForWrittenKeys(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                          const Source& source, int64_t new_keys,
                                          KeyedWriteFilter* filter) {
  if (filter->spec().names.size() != 1) return arrow::Status::OK();
  std::vector<int> key_fields;
  for (const auto& schema : source.file_schemas) {
    if (schema == nullptr) return arrow::Status::OK();  // not Parquet
    const int field = FindColumn(*schema, filter->spec().names[0]);
    if (field < 0 || !IsByteArrayStringType(*schema->field(field)->type())) {
      return arrow::Status::OK();
    }
    key_fields.push_back(field);
  }
  std::vector<RowKeyIndex::Unit> units;
  for (const SourceUnit& u : source.units) {
    if (u.first_row < 0) return arrow::Status::OK();
    units.push_back(RowKeyIndex::Unit{u.file, u.unit, u.first_row, u.rows});
  }
  return filter->UseSourceRows(fs, source.files, std::move(key_fields), std::move(units), new_keys);
}

arrow::Status CheckSources(const KeyedCopyOptions& o) {
  if (o.sources.empty()) return arrow::Status::Invalid("copy: no source given");
  if (o.target.empty()) return arrow::Status::Invalid("copy: no target directory given");
  if (o.sources.size() > 1 && o.transform_sql.empty()) {
    return arrow::Status::Invalid(
        "copy: several sources need a transform that combines them (a join or a union)");
  }
  std::set<std::string> names;
  for (const auto& s : o.sources) {
    if (s.name.empty()) return arrow::Status::Invalid("copy: a source has an empty name");
    if (!names.insert(s.name).second) {
      return arrow::Status::Invalid("copy: two sources are named '", s.name, "'");
    }
  }
  return arrow::Status::OK();
}

arrow::Result<KeyedCopyResult> RunKeyedCopyImpl(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                                const KeyedCopyOptions& options,
                                                const KeyedEventSink& on_event);

}  // namespace

arrow::Result<KeyedCopyResult> RunKeyedCopy(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                            const KeyedCopyOptions& options,
                                            const KeyedEventSink& on_event) {
  // Work on this thread (the write side's key sets grow here) may throw too.
  return CatchAll("the keyed write to '" + options.target + "'",
                  [&] { return RunKeyedCopyImpl(fs, options, on_event); });
}

namespace {

arrow::Result<KeyedCopyResult> RunKeyedCopyImpl(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                                const KeyedCopyOptions& options,
                                                const KeyedEventSink& on_event) {
  const auto start = std::chrono::steady_clock::now();
  ARROW_RETURN_NOT_OK(options.keyed.Validate());
  // The whole copy allocates from one pool; its cache is released at the end.
  KeyedMemoryScope memory_scope(options.keyed.memory_pool);
  ARROW_RETURN_NOT_OK(CheckSources(options));
  Run run;
  run.fs = fs;
  run.options = &options;
  run.on_event = on_event;
  run.threads = options.keyed.EffectiveThreads();
  run.batch_size = options.keyed.EffectiveBatchSize();

  std::vector<std::pair<std::string, std::shared_ptr<arrow::Schema>>> schemas;
  std::vector<SourceSchema> source_schemas;
  for (const auto& cs : options.sources) {
    ARROW_ASSIGN_OR_RAISE(Source s, OpenSource(fs, cs.name, cs.path, cs.format, run.threads));
    schemas.emplace_back(s.name, s.schema);
    source_schemas.push_back(SourceSchema{s.name, s.schema});
    run.sources.push_back(std::move(s));
  }
  std::shared_ptr<arrow::Schema> written = run.sources[0].schema;
  if (!options.transform_sql.empty()) {
    ARROW_ASSIGN_OR_RAISE(run.transform, TransformRunner::Make(options.transform_sql, run.threads));
    ARROW_ASSIGN_OR_RAISE(written, run.transform->OutputSchema(schemas));
  }

  ARROW_ASSIGN_OR_RAISE(auto target_info, fs->GetFileInfo(options.target));
  if (target_info.IsFile()) {
    return arrow::Status::Invalid("target '", options.target,
                                  "' is a file; a keyed write needs a directory of files");
  }
  // The target must not change under the write (target_guard.h): its lock
  // first (before temporaries are removed: a live writer's are not leftovers).
  ARROW_ASSIGN_OR_RAISE(auto guard, TargetGuard::Make(fs, options.target, UniqueToken()));
  // The guard made a missing target (for its lock): events still say that
  // the target did not exist.
  KeyedEventSink events = on_event;
  if (guard->created() && on_event) {
    events = [on_event, target = options.target](const KeyedEvent& e) {
      if (e.kind != KeyedEvent::Kind::kTargetEmpty) return on_event(e);
      on_event(KeyedEvent{KeyedEvent::Kind::kTargetMissing,
                          "target '" + target + "' does not exist yet: no row is skipped"});
    };
  }
  ARROW_ASSIGN_OR_RAISE(int removed, CleanupTemporaries(*fs, options.target));
  if (removed > 0) {
    run.Emit(KeyedEvent::Kind::kCleanup, "removed " + std::to_string(removed) +
                                             " partial file(s) left in '" + options.target +
                                             "' by an interrupted write");
  }
  // Without a transform, the source's row groups whose keys are all in the
  // target can be found while its keys load (unit_settler.h).
  RowKeyIndexRounds rounds;
  if (options.tuning.settle && options.keyed.key_index == KeyIndex::kRows &&
      options.transform_sql.empty() && run.sources.size() == 1 &&
      options.keyed.match == KeyMatch::kExact) {
    auto spec = KeySpec::Make(*written, options.keyed.keys, options.keyed.match, "");
    if (spec.ok() && UnitSettler::Applies(run.sources[0], *spec)) {
      run.settler = std::make_unique<UnitSettler>(
          fs, &run.sources[0], std::move(spec).ValueUnsafe(), run.threads,
          options.tuning.settle_round_rows, options.tuning.settle_step_rows,
          options.tuning.settle_by_stored_bytes);
      rounds = run.settler->Rounds();
    }
  }
  ARROW_ASSIGN_OR_RAISE(
      run.filter, KeyedWriteFilter::Make(options.keyed, *written, fs, {options.target}, events,
                                         run.settler ? &rounds : nullptr));
  ARROW_ASSIGN_OR_RAISE(
      run.placement,
      PlanFilterPlacement(options.transform_sql, run.filter->spec().names, source_schemas));
  const bool streaming = options.transform_sql.empty() || run.placement.row_wise;
  run.Emit(KeyedEvent::Kind::kPlacement,
           run.placement.explanation + (streaming ? " [streaming]" : " [materialized]"));
  // Settled row groups count only where the filter runs right after the
  // source of a streaming write (always so without a transform).
  if (!streaming || run.placement.before_write) {
    if (run.filter->target().load_skipped) {
      return arrow::Status::UnknownError(
          "keyed copy: the target's keys were not loaded, yet the "
          "source is not read right after settling it");
    }
    run.settler.reset();
  }
  // The keys this run may write (sizes its sets): the source's rows less
  // those settled, less the target's other keys.
  int64_t source_rows = 0;
  for (const auto& s : run.sources) source_rows += s.known_rows;
  const int64_t settled = run.settler != nullptr ? run.settler->settled_rows() : 0;
  const int64_t new_keys = std::max<int64_t>(
      0, source_rows - settled - std::max<int64_t>(0, run.filter->target().keys - settled));
  if (run.settler != nullptr && run.settler->settled_units() > 0) {
    run.filter->CountExisting(run.settler->settled_rows());
    run.Emit(
        KeyedEvent::Kind::kSettled,
        std::to_string(run.settler->settled_units()) + " of " +
            std::to_string(run.sources[0].units.size()) + " row groups of source '" +
            run.sources[0].name + "' (" + std::to_string(run.settler->settled_rows()) +
            " rows) found already written" +
            (run.filter->target().load_skipped ? std::string()
                                               : std::string(" while the target's keys loaded")) +
            (run.settler->twin_units() > 0
                 ? " (" + std::to_string(run.settler->twin_units()) +
                       " of them by their key column, stored as a target row group's)"
                 : std::string()) +
            ": not read again");
  }

  OutputOptions out = options.output;
  out.threads = run.threads;
  ARROW_ASSIGN_OR_RAISE(run.writer, OutputFileWriter::Make(fs, options.target, out, written));
  if (on_event) {
    run.writer->set_on_fallback([on_event](const std::string& why) {
      on_event(KeyedEvent{KeyedEvent::Kind::kFallback, why});
    });
    run.writer->set_on_commit([on_event](const std::string& path, int64_t rows) {
      on_event(KeyedEvent{KeyedEvent::Kind::kCommitted,
                          path + " (" + std::to_string(rows) + " rows)", path, rows});
    });
  }
  // Whole files pass through only when rows are written exactly as read.
  const bool passthrough = options.tuning.passthrough && streaming &&
                           options.transform_sql.empty() && out.format == FileFormat::kParquet;
  if (passthrough && !run.placement.before_write) {
    ARROW_RETURN_NOT_OK(
        UseSourceRowsForWrittenKeys(fs, run.sources[0], new_keys, run.filter.get()));
  }
  run.filter->ExpectNewKeys(new_keys);
  run.unit_writer = std::make_unique<UnitWriter>(
      fs, streaming ? &run.sources[0] : nullptr, written, run.filter.get(), run.writer.get(),
      !run.placement.before_write, passthrough, run.batch_size,
      "keyed write to '" + options.target + "'");
  ARROW_RETURN_NOT_OK(streaming ? run.Streaming() : run.Materialized());
  ARROW_RETURN_NOT_OK(run.unit_writer->Finish());
  Batches& deferred = run.unit_writer->deferred();
  if (!deferred.empty()) {
    int64_t rows = 0;
    for (const auto& b : deferred) rows += b->num_rows();
    run.Emit(KeyedEvent::Kind::kDeferred,
             std::to_string(rows) + " rows of keys that repeat are written as one final file");
    ARROW_RETURN_NOT_OK(run.writer->Flush());
    ARROW_RETURN_NOT_OK(run.writer->WriteOneFile(std::move(deferred)));
  }
  ARROW_RETURN_NOT_OK(run.writer->Finish());
  if (arrow::Status st = guard->CheckUnchanged(run.writer->file_name_prefix()); !st.ok()) {
    run.Emit(KeyedEvent::Kind::kTargetChanged, st.message());
    return st;
  }

  KeyedCopyResult result;
  result.counts = run.filter->counts();
  result.counts.rows_read = run.rows_read;
  result.counts.rows_written = run.writer->rows_committed();
  result.files_written = run.writer->files_committed();
  result.key_set_bytes = run.filter->MemoryBytes();
  result.target_keys = run.filter->target().keys;
  result.placement = run.placement.explanation;
  result.shape = streaming ? "streaming" : "materialized";
  result.files_passed_through = run.unit_writer->files_passed_through();
  if (run.settler != nullptr) {
    result.units_settled = run.settler->settled_units();
    result.units_settled_by_stored_bytes = run.settler->twin_units();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace

}  // namespace thund::engine::keyed
