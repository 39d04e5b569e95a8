#include "backend/native/stream_state.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "backend/native/incremental_flow.h"
#include "backend/native/runner_util.h"
#include "engine/batch/parquet_part_writer.h"
#include "engine/batch/schema_conform.h"
#include "engine/batch/sink_writer.h"
#include "engine/fs/atomic_write.h"
#include "engine/fs/link_or_copy.h"
#include "engine/io/parquet_io.h"

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

constexpr const char* kStateFile = "_stream.json";

std::string StatePath(RunContext& ctx, const std::string& dataset, int64_t version) {
  return ctx.store->layout().VersionDir(dataset, version) + "/" + kStateFile;
}

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

// Writes the incremental state tables of flow `i` into the pending version
// dir and records their files in the flow's state. They are not rows of the
// dataset: the manifest does not list them.
arrow::Status WriteStateTables(RunContext& ctx, const std::string& dir, int64_t version, size_t i,
                               FlowStream& f, Json* flow_state) {
  if (!f.incremental) return arrow::Status::OK();
  // A subdirectory: readers of the version glob "<dir>/*.parquet".
  const std::string state_dir = dir + "/_state";
  ARROW_RETURN_NOT_OK(ctx.store->fs().CreateDir(state_dir, /*recursive=*/true));
  Json files = Json::object();
  for (const auto& [name, table] : f.incremental->Tables()) {
    if (!*table) continue;
    ARROW_ASSIGN_OR_RAISE(auto writer, engine::batch::ParquetPartWriter::Open(
                                           ctx.store->shared_fs(), state_dir,
                                           "state-v" + std::to_string(version) + "-f" + Pad(i) +
                                               "-" + name,
                                           (*table)->schema()));
    ARROW_RETURN_NOT_OK(WriteAll(**table, *writer));
    ARROW_ASSIGN_OR_RAISE(auto written, writer->Finish(f.flow->name));
    Json names = Json::array();
    for (const auto& part : written) names.push_back("_state/" + part.file);
    files[name] = names;
  }
  (*flow_state)["incremental_tables"] = files;
  return arrow::Status::OK();
}

arrow::Status ApplyFlowState(const Json& j, FlowStream* f, const std::string& where) {
  try {
    if (j.contains("position")) f->position = j.at("position").get<std::string>();
    if (j.contains("watermark_us")) f->watermark_us = j.at("watermark_us").get<int64_t>();
    if (j.contains("consumed"))
      f->consumed = j.at("consumed").get<std::map<std::string, int64_t>>();
    if (j.contains("once_done")) f->once_done = j.at("once_done").get<bool>();
    if (j.contains("incremental")) f->saved_incremental = j.at("incremental").dump();
    if (j.contains("incremental_tables")) {
      for (const auto& [name, files] : j.at("incremental_tables").items()) {
        f->saved_tables[name] = files.get<std::vector<std::string>>();
      }
    }
  } catch (const std::exception& e) {
    return arrow::Status::IOError(where, ": stream state of flow '", f->flow->name,
                                  "' is damaged (", e.what(), "); run with --full-refresh ",
                                  f->flow->target, " to rebuild the dataset from its sources");
  }
  return arrow::Status::OK();
}

}  // namespace

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

std::string SinkStatePath(RunContext& ctx, const std::string& sink) {
  return ctx.store->layout().MetaDir() + "/streams/" + sink + ".json";
}

arrow::Status LoadSinkState(RunContext& ctx, DatasetStream* ds) {
  const std::string path = SinkStatePath(ctx, ds->dataset->name);
  auto text = engine::ReadWholeFile(ctx.store->fs(), path);
  if (!text.ok()) return arrow::Status::OK();  // never published
  try {
    Json state = Json::parse(*text);
    ds->epoch = state.value("epoch", int64_t{0});
    auto it = state.find("flows");
    for (auto& f : ds->flows) {
      if (it != state.end() && it->contains(f.flow->name)) {
        ARROW_RETURN_NOT_OK(ApplyFlowState(it->at(f.flow->name), &f, path));
      }
    }
  } catch (const std::exception& e) {
    return arrow::Status::IOError(path, ": stream state is not valid JSON (", e.what(),
                                  "); run with --full-refresh ", ds->dataset->name,
                                  " to start the sink's stream again");
  }
  return arrow::Status::OK();
}

// Publishes this trigger's rows of a sink, then its state.
arrow::Status CommitSink(RunContext& ctx, DatasetStream* ds) {
  const Dataset& d = *ds->dataset;
  ARROW_ASSIGN_OR_RAISE(auto target, engine::batch::ResolveSink(d, ctx.store->layout()));
  std::vector<std::shared_ptr<arrow::Table>> parts;
  bool complete = false;
  for (auto& f : ds->flows) {
    complete |= !AppendOnly(f.shape);
    const auto& t = AppendOnly(f.shape) ? f.added : f.rows;
    if (t) parts.push_back(t);
  }
  if (!parts.empty() && ds->schema) {
    ARROW_ASSIGN_OR_RAISE(auto rows, arrow::ConcatenateTables(parts));
    const int64_t epoch = ds->epoch + 1;
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
                                             ctx.store->shared_fs(), target, rows->schema(),
                                             "stream-" + std::string(tag)));
      ARROW_RETURN_NOT_OK(WriteAll(*rows, *writer));
      ARROW_RETURN_NOT_OK(writer->Commit().status());
      ds->epoch = epoch;
      ds->rows += rows->num_rows();
    }
  }
  Json state = Json::object();
  state["epoch"] = ds->epoch;
  state["flows"] = Json::object();
  for (auto& f : ds->flows) state["flows"][f.flow->name] = FlowStateJson(f);
  ARROW_RETURN_NOT_OK(ctx.store->fs().CreateDir(ctx.store->layout().MetaDir() + "/streams", true));
  ARROW_RETURN_NOT_OK(
      engine::WriteFileAtomically(ctx.store->fs(), SinkStatePath(ctx, d.name), state.dump(1)));
  for (auto& f : ds->flows) f.added.reset();
  ds->dirty = false;
  return arrow::Status::OK();
}

arrow::Status LoadStream(RunContext& ctx, DatasetStream* ds, bool fresh) {
  const Dataset& d = *ds->dataset;
  if (d.schema.declared()) ds->schema = d.schema.arrow;
  if (fresh) return arrow::Status::OK();
  if (ds->sink) return LoadSinkState(ctx, ds);
  ARROW_ASSIGN_OR_RAISE(auto current, ctx.store->Current(d.name));
  if (!current) return arrow::Status::OK();
  const auto& m = *current;
  const std::string dir = ctx.store->layout().VersionDir(d.name, m.version);
  auto state_text = engine::ReadWholeFile(ctx.store->fs(), StatePath(ctx, d.name, m.version));
  Json state = Json::object();
  if (state_text.ok()) {
    try {
      state = Json::parse(*state_text);
    } catch (const std::exception& e) {
      return arrow::Status::IOError(
          StatePath(ctx, d.name, m.version), ": stream state is not valid JSON (", e.what(),
          "); run with --full-refresh ", d.name, " to rebuild the dataset from its sources");
    }
  }
  // A version written by a batch run (no _stream.json) is kept as rows of
  // the flows that wrote it; their sources start from the beginning.
  for (auto& f : ds->flows) {
    std::vector<std::shared_ptr<arrow::Table>> tables;
    for (const PartFile& part : m.files) {
      if (part.flow != f.flow->name) continue;
      ARROW_ASSIGN_OR_RAISE(auto t, engine::ReadParquetFile(dir + "/" + part.file));
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
    f.saved_dir = dir;
    if (!tables.empty()) {
      ARROW_ASSIGN_OR_RAISE(f.rows, arrow::ConcatenateTables(tables));
    }
    f.total_rows = f.rows ? f.rows->num_rows() : 0;
    auto it = state.find("flows");
    if (it != state.end() && it->contains(f.flow->name)) {
      ARROW_RETURN_NOT_OK(
          ApplyFlowState(it->at(f.flow->name), &f, StatePath(ctx, d.name, m.version)));
    }
  }
  ds->stamp = m.Stamp();
  ds->version = engine::batch::VersionName(m.version);
  ds->rows = m.rows;
  return arrow::Status::OK();
}

arrow::Status RestoreIncremental(FlowStream* f) {
  if (!f->incremental || f->saved_incremental.empty()) return arrow::Status::OK();
  auto damaged = [&](const arrow::Status& st) {
    return arrow::Status::IOError(f->saved_dir, ": incremental state of flow '", f->flow->name,
                                  "': ", st.message(), "; run with --full-refresh ",
                                  f->flow->target, " to rebuild it from the sources");
  };
  arrow::Status st = RestoreIncrementalState(f->saved_incremental, f->incremental.get());
  if (!st.ok()) return damaged(st);
  auto tables = f->incremental->Tables();
  for (const auto& [name, files] : f->saved_tables) {
    auto it = tables.find(name);
    if (it == tables.end()) return damaged(arrow::Status::Invalid("unknown state table ", name));
    std::vector<std::shared_ptr<arrow::Table>> parts;
    for (const auto& file : files) {
      auto t = engine::ReadParquetFile(f->saved_dir + "/" + file);
      if (!t.ok()) return damaged(t.status());
      parts.push_back(*t);
    }
    if (parts.empty()) continue;
    auto all = arrow::ConcatenateTables(parts);
    if (!all.ok()) return damaged(all.status());
    *it->second = *all;
  }
  return arrow::Status::OK();
}

arrow::Status CommitStream(RunContext& ctx, DatasetStream* ds) {
  if (!ds->dirty) return arrow::Status::OK();
  // A dataset that has never had a row has no schema for a version: an
  // incremental flow's state alone is not committed (the next run takes its
  // inputs from the start again, which the inputs still hold).
  if (!ds->schema && !ds->sink) return arrow::Status::OK();
  if (ds->sink) {
    arrow::Status st = CommitSink(ctx, ds);
    return st.ok() ? st
                   : st.WithMessage("sink '", ds->dataset->name, "': ", st.message(),
                                    " (the next run writes this trigger again)");
  }
  const Dataset& d = *ds->dataset;
  ARROW_ASSIGN_OR_RAISE(auto pending, ctx.store->Begin(d.name));
  engine::batch::VersionManifest manifest;
  auto write = [&]() -> arrow::Status {
    Json state = Json::object();
    state["flows"] = Json::object();
    for (size_t i = 0; i < ds->flows.size(); ++i) {
      FlowStream& f = ds->flows[i];
      state["flows"][f.flow->name] = FlowStateJson(f);
      ARROW_RETURN_NOT_OK(WriteStateTables(ctx, pending.dir, pending.version, i, f,
                                           &state["flows"][f.flow->name]));
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
    ARROW_RETURN_NOT_OK(engine::WriteFileAtomically(ctx.store->fs(), pending.dir + "/" + kStateFile,
                                                    state.dump(1)));
    manifest.run_id = ctx.run_id;
    if (ds->schema) manifest.schema = engine::batch::DescribeSchema(*ds->schema);
    return ctx.store->Commit(pending, manifest, &ctx.notes);
  };
  arrow::Status st = write();
  if (!st.ok()) {
    ctx.store->Abandon(pending);
    return st.WithMessage("dataset '", d.name, "': commit failed, the previous version stays ",
                          "current: ", st.message());
  }
  manifest.dataset = d.name;
  manifest.version = pending.version;
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
  ds->rows = manifest.rows;
  ds->dirty = false;
  return arrow::Status::OK();
}

}  // namespace thund::native
