#include "backend/native/stream_state.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "backend/native/incremental_flow.h"
#include "backend/native/part_tiers.h"
#include "backend/native/stream_checkpoint.h"
#include "backend/native/runner_util.h"
#include "engine/batch/merge_table.h"
#include "engine/batch/parquet_part_writer.h"
#include "engine/batch/schema_conform.h"
#include "engine/batch/sink_writer.h"
#include "engine/fs/atomic_write.h"
#include "engine/fs/link_or_copy.h"
#include "engine/io/parquet_io.h"
#include "thund/json_text.h"

namespace thund::native {
namespace {

// Writes every row of `table` to `writer` (a sink or part writer), batch by batch.
template <typename Writer>
arrow::Status WriteAll(const arrow::Table& table, Writer& writer) {
  arrow::TableBatchReader reader(table);
  std::shared_ptr<arrow::RecordBatch> batch;
  while (true) {
    ARROW_RETURN_NOT_OK(reader.ReadNext(&batch));
    if (!batch) return arrow::Status::OK();
    ARROW_RETURN_NOT_OK(writer.Write(batch));
  }
}

using engine::batch::PartFile;
using Json = nlohmann::json;

// The file older thunds kept a version's stream state in (now in the
// checkpoint epoch).
constexpr const char* kLegacyStateFile = "_stream.json";

arrow::Status ApplyFlowState(const Json& j, FlowStream* f, const std::string& where) {
  try {
    if (j.contains("position")) f->position = j.at("position").get<std::string>();
    if (j.contains("watermark_us")) f->watermark_us = j.at("watermark_us").get<int64_t>();
    if (j.contains("consumed"))
      f->consumed = j.at("consumed").get<std::map<std::string, int64_t>>();
    if (j.contains("once_done")) f->once_done = j.at("once_done").get<bool>();
    if (j.contains("incremental")) f->saved_incremental = JsonText(j.at("incremental"));
    if (j.contains("counters")) {
      const Json& c = j.at("counters");
      f->counters.rows_in = c.value("rows_in", int64_t{0});
      f->counters.rows_out = c.value("rows_out", int64_t{0});
      f->counters.late_rows = c.value("late_rows", int64_t{0});
      f->counters.triggers = c.value("triggers", int64_t{0});
    }
  } catch (const std::exception& e) {
    return arrow::Status::IOError(where, ": stream state of flow '", f->flow->name,
                                  "' is damaged (", e.what(), "); run with --full-refresh ",
                                  f->flow->target, " to rebuild the dataset from its sources");
  }
  return arrow::Status::OK();
}

// Refuses state committed for another definition of the flow, naming what
// changed.
arrow::Status CheckDefinition(const Json& saved, const FlowStream& f) {
  if (!saved.contains("definition")) return arrow::Status::OK();
  const Json now = FlowDefinition(*f.flow);
  std::string changed;
  for (const auto& [part, value] : now.items()) {
    if (saved.at("definition").value(part, Json()) != value) {
      changed += (changed.empty() ? "" : ", ") + part;
    }
  }
  if (changed.empty()) return arrow::Status::OK();
  return arrow::Status::Invalid(
      "flow '", f.flow->name, "' changed since its state was committed (", changed,
      "), so the committed state does not fit it; run with --full-refresh ", f.flow->target,
      " to rebuild ", f.flow->target, " from its sources");
}

}  // namespace

Json FlowStateJson(const FlowStream& f) {
  Json j = Json::object();
  if (f.source) j["position"] = f.position;
  if (f.watermark_us) j["watermark_us"] = *f.watermark_us;
  if (!f.consumed.empty()) j["consumed"] = f.consumed;
  if (f.once_done) j["once_done"] = true;
  j["shape"] = ShapeName(f.shape);
  if (f.incremental) j["incremental"] = Json::parse(IncrementalStateJson(*f.incremental));
  return j;
}

const char* ShapeName(FlowShape s) {
  switch (s) {
    case FlowShape::kSource:
      return "source";
    case FlowShape::kAppend:
      return "append";
    case FlowShape::kAppendWindowed:
      return "append (windowed)";
    case FlowShape::kUpdate:
      return "update";
    case FlowShape::kComplete:
      return "complete";
    case FlowShape::kCdc:
      return "cdc";
    case FlowShape::kOnce:
      return "once";
  }
  return "?";
}

bool AppendOnly(FlowShape s) {
  return s == FlowShape::kSource || s == FlowShape::kAppend || s == FlowShape::kAppendWindowed ||
         s == FlowShape::kOnce;
}

arrow::Result<std::shared_ptr<arrow::Table>> DatasetStream::Content() const {
  std::vector<std::shared_ptr<arrow::Table>> parts;
  for (const auto& f : flows) {
    if (f.rows && f.rows->num_rows() > 0) parts.push_back(f.rows);
  }
  if (parts.empty()) {
    if (!schema) return arrow::Status::Invalid("dataset '", dataset->name, "' has no schema yet");
    return arrow::Table::MakeEmpty(schema);
  }
  if (parts.size() == 1) return parts[0];
  return arrow::ConcatenateTables(parts);
}

int64_t DatasetStream::NumRows() const {
  int64_t n = 0;
  for (const auto& f : flows) n += f.rows ? f.rows->num_rows() : 0;
  return n;
}

arrow::Status LoadFlowStates(DatasetStream* ds, const StreamCheckpoint& checkpoint,
                             const std::string& where) {
  for (auto& f : ds->flows) {
    const Json* saved = checkpoint.SavedFlow(f.flow->name);
    if (!saved) continue;
    ARROW_RETURN_NOT_OK(CheckDefinition(*saved, f));
    ARROW_RETURN_NOT_OK(ApplyFlowState(*saved, &f, where));
  }
  return arrow::Status::OK();
}

bool IsMergeSink(const Dataset& d) {
  return d.kind == DatasetKind::kSink && d.storage.mode == WriteMode::kMerge;
}

arrow::Result<engine::batch::MergeTable> OpenMergeSink(RunContext& ctx, const Dataset& d) {
  ARROW_ASSIGN_OR_RAISE(auto target, engine::batch::ResolveSink(d, ctx.store->layout()));
  engine::batch::MergeTableOptions options;
  options.threads = ctx.options->native.threads;
  return engine::batch::MergeTable::Open(target.FileSystemOr(ctx.store->shared_fs()),
                                         target.location, d.storage.merge_keys, options);
}

// A merge sink's epoch: the append flows' new rows and the other flows'
// whole results, upserted by key (or replacing the table: a full refresh,
// or one flow whose whole result it is, which also removes deleted keys).
arrow::Status StageMergeSink(RunContext& ctx, DatasetStream* ds, int64_t epoch) {
  const Dataset& d = *ds->dataset;
  std::vector<std::shared_ptr<arrow::Table>> parts;
  bool whole = ds->flows.size() == 1 && !AppendOnly(ds->flows[0].shape);
  for (auto& f : ds->flows) {
    const auto& t = AppendOnly(f.shape) ? f.added : f.rows;
    if (t) parts.push_back(t);
  }
  if (!parts.empty() && ds->schema) {
    ARROW_ASSIGN_OR_RAISE(auto table, OpenMergeSink(ctx, d));
    ARROW_ASSIGN_OR_RAISE(auto rows, arrow::ConcatenateTables(parts));
    const int64_t tag = epoch + ds->merge_offset;
    auto merged = whole || ds->merge_replace ? table.Replace(tag, rows, ctx.run_id)
                                             : table.Apply(tag, rows, nullptr, ctx.run_id);
    if (!merged.ok()) return merged.status();
    for (const auto& note : merged->notes) ctx.notes.push_back(note);
    ds->epoch = epoch;
    ds->rows = merged->rows;
    ds->merge_replace = false;
  }
  for (auto& f : ds->flows) f.added.reset();
  ds->dirty = false;
  return arrow::Status::OK();
}

// Publishes this epoch's rows of a sink (its state goes into the epoch).
arrow::Status StageSink(RunContext& ctx, DatasetStream* ds, int64_t epoch) {
  const Dataset& d = *ds->dataset;
  if (IsMergeSink(d)) return StageMergeSink(ctx, ds, epoch);
  ARROW_ASSIGN_OR_RAISE(auto target, engine::batch::ResolveSink(d, ctx.store->layout()));
  std::vector<std::shared_ptr<arrow::Table>> parts;
  bool complete = false;
  for (auto& f : ds->flows) {
    complete |= !AppendOnly(f.shape);
    const auto& t = AppendOnly(f.shape) ? f.added : f.rows;
    if (t) parts.push_back(t);
  }
  if (target.noop()) {
    // Counted, never written: no concatenation, no file.
    int64_t n = 0;
    for (const auto& t : parts) n += t->num_rows();
    if (n > 0 || (complete && !parts.empty())) {
      ds->epoch = epoch;
      ds->rows += n;
    }
    parts.clear();
  }
  if (!parts.empty() && ds->schema) {
    ARROW_ASSIGN_OR_RAISE(auto rows, arrow::ConcatenateTables(parts));
    char tag[32];
    std::snprintf(tag, sizeof(tag), "e%06lld", static_cast<long long>(epoch));
    target.overwrite = complete;
    if (target.format == "json") {
      ARROW_RETURN_NOT_OK(ctx.session->RegisterArrow("__thund_sink_rows", rows));
      auto json = ctx.session->Query("SELECT " + engine::batch::JsonSelectList() +
                                     " FROM __thund_sink_rows AS \"__thund_q\"");
      (void)ctx.session->Unregister("__thund_sink_rows");
      ARROW_ASSIGN_OR_RAISE(rows, std::move(json));
    }
    if (rows->num_rows() > 0 || complete) {
      ARROW_ASSIGN_OR_RAISE(auto writer, engine::batch::SinkWriter::Open(
                                             target.FileSystemOr(ctx.store->shared_fs()),
                                             target, rows->schema(),
                                             "stream-" + std::string(tag)));
      ARROW_RETURN_NOT_OK(WriteAll(*rows, *writer));
      ARROW_RETURN_NOT_OK(writer->Commit().status());
      ds->epoch = epoch;
      ds->rows += rows->num_rows();
    }
  }
  for (auto& f : ds->flows) f.added.reset();
  ds->dirty = false;
  return arrow::Status::OK();
}

arrow::Status LoadStream(RunContext& ctx, DatasetStream* ds, bool fresh,
                         const StreamCheckpoint& checkpoint) {
  const Dataset& d = *ds->dataset;
  if (d.schema.declared()) ds->schema = d.schema.arrow;
  const Json* saved_ds = fresh ? nullptr : checkpoint.SavedDataset(d.name);
  if (IsMergeSink(d)) {
    ARROW_ASSIGN_OR_RAISE(auto table, OpenMergeSink(ctx, d));
    const int64_t committed = checkpoint.committed_epoch();
    if (saved_ds) {
      ds->merge_offset = saved_ds->value("merge_offset", int64_t{0});
      // One Update / Complete / CDC flow's whole result is the table: its
      // rows come back from it (a sink keeps no rows of its own), so the
      // epoch's Replace does not drop what earlier runs wrote.
      if (ds->flows.size() == 1 && !AppendOnly(ds->flows[0].shape)) {
        ARROW_ASSIGN_OR_RAISE(ds->flows[0].rows, table.Read());
        if (ds->flows[0].rows && !ds->schema) ds->schema = ds->flows[0].rows->schema();
      }
      // At most the lost epoch after the committed one may have been applied.
      if (table.applied_epoch() > committed + 1 + ds->merge_offset) {
        return arrow::Status::Invalid(
            "merge sink '", d.name, "': its table at ", table.path(), " applied write ",
            table.applied_epoch(), ", after anything checkpoint epoch ", committed,
            " knows (another writer, or a checkpoint from elsewhere); run with --full-refresh ",
            d.name, " to rebuild it from its sources");
      }
    } else {
      ds->merge_offset = table.applied_epoch() - committed;
      ds->merge_replace = fresh && table.applied_epoch() > 0;
    }
  }
  if (fresh) return arrow::Status::OK();
  const std::string where = "checkpoint epoch " + std::to_string(checkpoint.committed_epoch());
  if (ds->transient) {
    // No stored rows: the source restarts from its position, and the rows
    // it emitted so far (its readers' offsets count them) are its counter.
    ARROW_RETURN_NOT_OK(LoadFlowStates(ds, checkpoint, where));
    for (auto& f : ds->flows) f.total_rows = f.counters.rows_out;
    return arrow::Status::OK();
  }
  if (ds->sink) {
    if (saved_ds) ds->epoch = saved_ds->value("sink_epoch", int64_t{0});
    return LoadFlowStates(ds, checkpoint, where);
  }
  ARROW_ASSIGN_OR_RAISE(auto current, ctx.store->Current(d.name));
  if (!current) return LoadFlowStates(ds, checkpoint, where);
  const auto& m = *current;
  const std::string dir = ctx.store->layout().VersionDir(d.name, m.version);
  if (!checkpoint.SavedDataset(d.name)) {
    // Not in the checkpoint: a version a batch run wrote is kept as rows of
    // the flows that wrote it (their sources start from the beginning); one
    // an older thund streamed into kept its stream state beside it.
    auto legacy = ctx.store->fs().GetFileInfo(dir + "/" + kLegacyStateFile);
    if (legacy.ok() && legacy->type() == arrow::fs::FileType::File) {
      return arrow::Status::Invalid(
          "dataset '", d.name, "': its committed version ", engine::batch::VersionName(m.version),
          " keeps its stream state in the format of an older thund (", kLegacyStateFile,
          "), which this one does not resume from; run with --full-refresh ", d.name,
          " to rebuild it from its sources");
    }
  }
  for (auto& f : ds->flows) {
    std::vector<std::shared_ptr<arrow::Table>> tables;
    for (const PartFile& part : m.files) {
      if (part.flow != f.flow->name) continue;
      ARROW_ASSIGN_OR_RAISE(auto t,
                            engine::ReadParquetFile(ctx.store->fs(), dir + "/" + part.file));
      if (!ds->schema) ds->schema = t->schema();
      if (!t->schema()->Equals(*ds->schema)) {
        ARROW_ASSIGN_OR_RAISE(auto conformer, engine::batch::SchemaConformer::Make(
                                                  *t->schema(), ds->schema, d.schema.declared(),
                                                  d.name, f.flow->name));
        ARROW_ASSIGN_OR_RAISE(auto batch, t->CombineChunksToBatch());
        ARROW_ASSIGN_OR_RAISE(batch, conformer.Conform(batch));
        ARROW_ASSIGN_OR_RAISE(t, arrow::Table::FromRecordBatches({batch}));
      }
      tables.push_back(t);
      f.committed_parts.push_back(part);
    }
    f.committed_version = m.version;
    if (!tables.empty()) {
      ARROW_ASSIGN_OR_RAISE(f.rows, arrow::ConcatenateTables(tables));
    }
    f.total_rows = f.rows ? f.rows->num_rows() : 0;
  }
  ARROW_RETURN_NOT_OK(LoadFlowStates(ds, checkpoint, where));
  ds->stamp = m.Stamp();
  ds->version = engine::batch::VersionName(m.version);
  ds->version_number = m.version;
  ds->rows = m.rows;
  return arrow::Status::OK();
}

arrow::Status RestoreIncremental(FlowStream* f, StreamCheckpoint& checkpoint) {
  if (!f->incremental || f->saved_incremental.empty()) return arrow::Status::OK();
  auto damaged = [&](const arrow::Status& st) {
    return arrow::Status::IOError("checkpoint epoch ", checkpoint.committed_epoch(),
                                  ": incremental state of flow '", f->flow->name, "': ",
                                  st.message(), "; run with --full-refresh ", f->flow->target,
                                  " to rebuild it from the sources");
  };
  arrow::Status st = RestoreIncrementalState(f->saved_incremental, f->incremental.get());
  if (!st.ok()) return damaged(st);
  st = checkpoint.RestoreTables(f);
  if (!st.ok()) return damaged(st);
  return arrow::Status::OK();
}

arrow::Status StageStream(RunContext& ctx, DatasetStream* ds, int64_t epoch,
                          std::vector<StagedVersion>* staged) {
  if (!ds->dirty) return arrow::Status::OK();
  // A dataset that has never had a row has no schema for a version (its
  // flows' state still goes into the epoch).
  if (!ds->schema && !ds->sink) {
    ds->dirty = false;
    return arrow::Status::OK();
  }
  if (ds->sink) {
    arrow::Status st = StageSink(ctx, ds, epoch);
    return st.ok() ? st
                   : st.WithMessage("sink '", ds->dataset->name, "': ", st.message(),
                                    " (the next run writes this trigger again)");
  }
  const Dataset& d = *ds->dataset;
  ARROW_ASSIGN_OR_RAISE(auto pending, ctx.store->Begin(d.name));
  engine::batch::VersionManifest manifest;
  auto write = [&]() -> arrow::Status {
    for (size_t i = 0; i < ds->flows.size(); ++i) {
      FlowStream& f = ds->flows[i];
      std::shared_ptr<arrow::Table> to_write;
      std::vector<PartFile> parts;
      if (AppendOnly(f.shape)) {
        const std::string from_dir = ctx.store->layout().VersionDir(d.name, f.committed_version);
        for (const PartFile& part : f.committed_parts) {
          ARROW_RETURN_NOT_OK(engine::LinkOrCopy(ctx.store->fs(), from_dir + "/" + part.file,
                                                 pending.dir + "/" + part.file));
          parts.push_back(part);
        }
        to_write = f.added;
      } else {
        to_write = f.rows;
      }
      if (to_write && to_write->num_rows() > 0) {
        ARROW_ASSIGN_OR_RAISE(
            auto writer,
            engine::batch::ParquetPartWriter::Open(
                ctx.store->shared_fs(), pending.dir,
                "v" + std::to_string(pending.version) + "-f" + Pad(i), to_write->schema()));
        ARROW_RETURN_NOT_OK(WriteAll(*to_write, *writer));
        ARROW_ASSIGN_OR_RAISE(auto written, writer->Finish(f.flow->name));
        parts.insert(parts.end(), written.begin(), written.end());
        ARROW_ASSIGN_OR_RAISE(bool merge, MergePartsEnabled(*ctx.pipeline));
        if (AppendOnly(f.shape) && merge) {
          ARROW_RETURN_NOT_OK(MergeNewestParts(
              ctx.store->shared_fs(), pending.dir,
              "v" + std::to_string(pending.version) + "-f" + Pad(i), f.flow->name, &parts));
        }
      }
      for (const auto& p : parts) manifest.rows += p.rows;
      manifest.files.insert(manifest.files.end(), parts.begin(), parts.end());
    }
    if (manifest.files.empty()) {
      // Only state moved: the version still needs a (row-less) file with the
      // schema, which readers of the version glob.
      ARROW_ASSIGN_OR_RAISE(auto writer, engine::batch::ParquetPartWriter::Open(
                                             ctx.store->shared_fs(), pending.dir,
                                             "v" + std::to_string(pending.version) + "-empty",
                                             ds->schema));
      ARROW_ASSIGN_OR_RAISE(auto written, writer->Finish(ds->flows.front().flow->name));
      manifest.files.insert(manifest.files.end(), written.begin(), written.end());
    }
    manifest.run_id = ctx.run_id;
    manifest.epoch = epoch;
    if (ds->schema) manifest.schema = engine::batch::DescribeSchema(*ds->schema);
    return ctx.store->Prepare(pending, &manifest, /*sync=*/false);  // the epoch syncs
  };
  arrow::Status st = write();
  if (!st.ok()) {
    ctx.store->Abandon(pending);
    return st.WithMessage("dataset '", d.name, "': commit failed, the previous version stays ",
                          "current: ", st.message());
  }
  staged->push_back({pending});
  // What the new version holds, for the next commit.
  for (FlowStream& f : ds->flows) {
    f.committed_parts.clear();
    for (const auto& p : manifest.files) {
      if (p.flow == f.flow->name) f.committed_parts.push_back(p);
    }
    f.committed_version = pending.version;
    f.added.reset();
  }
  ds->stamp = manifest.Stamp();
  ds->version = engine::batch::VersionName(pending.version);
  ds->version_number = pending.version;
  ds->rows = manifest.rows;
  ds->dirty = false;
  return arrow::Status::OK();
}

}  // namespace thund::native
