#include "backend/native/stream_checkpoint.h"

#include <arrow/util/byte_size.h>

#include <arrow/filesystem/localfs.h>

#include <chrono>
#include <regex>

#include "backend/native/incremental_flow.h"
#include "engine/batch/sink_writer.h"
#include "engine/fs/durable.h"
#include "engine/fs/filesystem_uri.h"
#include "common/clock.h"

namespace thund::native {
namespace {

using engine::checkpoint::EpochManifest;
using Json = nlohmann::json;


std::string Config(const Pipeline& p, const std::string& key) {
  auto it = p.configuration.find(key);
  return it == p.configuration.end() ? "" : it->second;
}

arrow::Result<int64_t> PositiveConfig(const Pipeline& p, const std::string& key, int64_t dflt) {
  const std::string v = Config(p, key);
  if (v.empty()) return dflt;
  try {
    size_t used = 0;
    const long long n = std::stoll(v, &used);
    if (used == v.size() && n >= 1) return static_cast<int64_t>(n);
  } catch (const std::exception&) {
  }
  return arrow::Status::Invalid("configuration ", key, " = '", v,
                                "' is not a whole number of at least 1");
}

void Recovery(RunContext& ctx, int64_t epoch, std::string message) {
  RunEvent e;
  e.kind = RunEvent::Kind::kRecovery;
  e.epoch = epoch;
  e.message = std::move(message);
  ctx.Emit(e);
}

// The epoch tag of a file sink's stream file ("part-stream-e000007.parquet").
std::optional<int64_t> SinkFileEpoch(const std::string& base) {
  static const std::regex re("^part-stream-e([0-9]{6,})\\.");
  std::smatch m;
  if (!std::regex_search(base, m, re)) return std::nullopt;
  return std::stoll(m[1].str());
}

}  // namespace

arrow::Result<CheckpointSettings> ReadCheckpointSettings(
    const Pipeline& p, const engine::batch::StorageLayout& layout) {
  CheckpointSettings s;
  std::string root = Config(p, "thund.state_root");
  if (root.empty()) root = layout.Uri(layout.MetaDir() + "/checkpoints");
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  s.state_root = root + "/" + (p.name.empty() ? std::string("pipeline") : p.name);
  ARROW_ASSIGN_OR_RAISE(int64_t retain, PositiveConfig(p, "thund.checkpoint.retain", 3));
  s.retain = static_cast<size_t>(retain);
  ARROW_ASSIGN_OR_RAISE(s.interval, PositiveConfig(p, "thund.checkpoint.interval", 1));
  const std::string inc = Config(p, "thund.checkpoint.incremental");
  if (!inc.empty() && inc != "true" && inc != "false") {
    return arrow::Status::Invalid("configuration thund.checkpoint.incremental = '", inc,
                                  "' is not true or false");
  }
  s.image.incremental = inc != "false";
  const std::string back_off = Config(p, "thund.checkpoint.back_off_by_time");
  if (!back_off.empty() && back_off != "true" && back_off != "false") {
    return arrow::Status::Invalid("configuration thund.checkpoint.back_off_by_time = '",
                                  back_off, "' is not true or false");
  }
  s.image.back_off_by_time = back_off != "false";
  const std::string positional = Config(p, "thund.checkpoint.positional");
  if (!positional.empty() && positional != "true" && positional != "false") {
    return arrow::Status::Invalid("configuration thund.checkpoint.positional = '", positional,
                                  "' is not true or false");
  }
  s.image.positional = positional != "false";
  return s;
}

arrow::Result<std::optional<EpochManifest>> NewestEpoch(
    const Pipeline& p, const engine::batch::StorageLayout& layout) {
  ARROW_ASSIGN_OR_RAISE(CheckpointSettings s, ReadCheckpointSettings(p, layout));
  ARROW_ASSIGN_OR_RAISE(auto loc, engine::ResolveLocation(s.state_root));
  engine::checkpoint::EpochStore store(loc.fs, loc.path);
  ARROW_ASSIGN_OR_RAISE(auto epochs, store.ListEpochs());
  for (int64_t e : epochs) {
    auto m = store.ReadManifest(e);
    if (m.ok()) return std::optional<EpochManifest>(std::move(*m));
  }
  return std::optional<EpochManifest>();
}

Json FlowDefinition(const Flow& f) {
  Json j = Json::object();
  if (f.source) {
    j["source"] = ToString(*f.source);
    return j;
  }
  j["query"] = f.sql;
  j["once"] = f.once;
  const StreamingSpec s = f.streaming.value_or(StreamingSpec{});
  j["output mode"] = Name(s.output_mode);
  j["window"] = s.window ? s.window->ToString() : "";
  j["watermark column"] = s.watermark ? s.watermark->event_time_column : "";
  j["keys"] = f.cdc ? f.cdc->ToString() : "";
  return j;
}

arrow::Result<std::unique_ptr<StreamCheckpoint>> StreamCheckpoint::Open(RunContext& ctx) {
  ARROW_ASSIGN_OR_RAISE(CheckpointSettings s,
                        ReadCheckpointSettings(*ctx.pipeline, ctx.store->layout()));
  std::shared_ptr<arrow::fs::FileSystem> fs;
  std::string dir;
  bool remote = engine::IsObjectStoreUri(s.state_root);
  if (remote) {
    ARROW_ASSIGN_OR_RAISE(auto loc, engine::ResolveLocation(s.state_root));
    fs = loc.fs;
    dir = loc.path;
  } else {
    // Local: through the run's filesystem (the fault-injection seam).
    ARROW_ASSIGN_OR_RAISE(auto loc, engine::ResolveLocation(s.state_root));
    fs = ctx.store->shared_fs();
    dir = loc.path;
  }
  const std::string shown = s.state_root;
  s.state_root = dir;
  std::unique_ptr<StreamCheckpoint> c(new StreamCheckpoint(fs, s));
  arrow::Status made = fs->CreateDir(dir, /*recursive=*/true);
  if (!made.ok()) {
    return arrow::Status::IOError("cannot create the checkpoint root ", shown, ": ",
                                  made.message());
  }
  if (remote) {
    std::string took_over;
    ARROW_ASSIGN_OR_RAISE(c->lock_, engine::checkpoint::StorageLock::Acquire(
                                        fs, dir + "/_lock", ctx.run_id, &took_over));
    if (!took_over.empty()) {
      Recovery(ctx, 0, "took over the checkpoint lock of " + took_over + ", which is gone");
    }
  }
  return c;
}

arrow::Status StreamCheckpoint::Check(RunContext& ctx, const EpochManifest& m,
                                      const std::set<std::string>& fresh) {
  for (const auto& f : m.files) ARROW_RETURN_NOT_OK(store_.Prefetch(f));
  const Json& datasets = m.body.at("datasets");
  for (const auto& [name, entry] : datasets.items()) {
    if (fresh.count(name) > 0) continue;
    const int64_t v = entry.value("version", int64_t{0});
    if (v <= 0) continue;
    const std::string manifest = ctx.store->layout().ManifestPath(name, v);
    auto info = ctx.store->fs().GetFileInfo(manifest);
    if (!info.ok() || info->type() == arrow::fs::FileType::NotFound) {
      return arrow::Status::IOError("dataset '", name, "': version ",
                                    engine::batch::VersionName(v), " it names is gone (",
                                    manifest, ")");
    }
  }
  return arrow::Status::OK();
}

arrow::Status StreamCheckpoint::Recover(RunContext& ctx, std::vector<DatasetStream>& streams,
                                        const std::set<std::string>& fresh) {
  const int64_t t0 = SteadyMs();
  ARROW_ASSIGN_OR_RAISE(auto epochs, store_.ListEpochs());
  std::vector<std::string> problems;
  std::optional<EpochManifest> resumed;
  for (int64_t e : epochs) {
    auto m = store_.ReadManifest(e);
    if (resumed) {
      // Older epochs are kept for retention and as fallbacks of a later
      // run; only the resumed one is read whole now.
      if (m.ok()) retained_.push_back(std::move(*m));
      if (retained_.size() >= settings_.retain) break;
      continue;
    }
    arrow::Status st = m.status();
    if (st.ok()) {
      try {
        st = Check(ctx, *m, fresh);
      } catch (const std::exception& ex) {
        st = arrow::Status::IOError("epoch ", e, ": its manifest body is damaged (", ex.what(),
                                    ")");
      }
    }
    if (st.ok()) {
      resumed = *m;
      retained_.push_back(std::move(*m));
      if (retained_.size() >= settings_.retain) break;
      continue;
    }
    store_.DropPrefetched();
    const bool uncommitted = !m.ok() && st.message().find("never committed") != std::string::npos;
    if (uncommitted) {
      (void)store_.Discard(e);
      continue;
    }
    problems.push_back(engine::checkpoint::EpochDirName(e) + ": " + st.message());
    Recovery(ctx, e,
             "epoch " + std::to_string(e) + " is damaged (" + st.message() +
                 "); it is set aside and the epoch before it is used");
    (void)store_.SetAside(e);
  }
  if (!resumed) {
    if (!problems.empty()) {
      std::string list;
      for (const auto& p : problems) list += "\n  " + p;
      return arrow::Status::IOError(
          "no committed checkpoint in ", settings_.state_root, " is readable:", list,
          "\nrun with --full-refresh-all to rebuild every streaming dataset from its sources");
    }
    return arrow::Status::OK();
  }
  committed_ = resumed->epoch;
  const Json& datasets = resumed->body.at("datasets");
  for (auto& ds : streams) {
    const std::string& name = ds.dataset->name;
    if (fresh.count(name) > 0 || ds.dataset->kind == DatasetKind::kView ||
        ds.dataset->kind == DatasetKind::kTemporaryView) {
      continue;
    }
    if (ds.sink) {
      if (ds.dataset->storage.mode != WriteMode::kMerge) {
        ARROW_RETURN_NOT_OK(DeleteLaterSinkFiles(ctx, ds));
      }
      continue;
    }
    const int64_t want = datasets.contains(name) ? datasets.at(name).value("version", int64_t{0})
                                                 : 0;
    ARROW_ASSIGN_OR_RAISE(auto current, ctx.store->Current(name));
    const int64_t have = current ? current->version : 0;
    if (want == have) {
      if (have > 0) ctx.store->RepairLink(name, have);  // a kill between the two renames
      continue;
    }
    if (want > 0) {
      ARROW_RETURN_NOT_OK(ctx.store->SetCurrent(name, want));
      Recovery(ctx, committed_,
               "dataset '" + name + "' re-pointed from " +
                   (have ? engine::batch::VersionName(have) : std::string("nothing")) + " to " +
                   engine::batch::VersionName(want) + " (the version epoch " +
                   std::to_string(committed_) + " committed)");
    } else if (current && current->epoch && *current->epoch > committed_) {
      // First written by an epoch that did not commit: it had no rows yet.
      ARROW_RETURN_NOT_OK(ctx.store->ClearCurrent(name));
      Recovery(ctx, committed_, "dataset '" + name + "': " +
                                    engine::batch::VersionName(have) +
                                    " of an uncommitted epoch is no longer current");
    }
  }
  int64_t bytes = 0;
  for (const auto& f : resumed->files) bytes += f.bytes;
  state_bytes_ = bytes;
  recover_ms_ = SteadyMs() - t0;
  RunEvent e;
  e.kind = RunEvent::Kind::kRecovery;
  e.epoch = committed_;
  e.count = bytes;
  e.elapsed_ms = SteadyMs() - t0;
  e.message = "resumed from epoch " + std::to_string(committed_) + " of " +
              settings_.state_root + " (read and checked " + std::to_string(bytes) +
              " bytes of state in " + std::to_string(e.elapsed_ms) + " ms)";
  ctx.Emit(e);
  return arrow::Status::OK();
}

arrow::Status StreamCheckpoint::DeleteLaterSinkFiles(RunContext& ctx, const DatasetStream& ds) {
  ARROW_ASSIGN_OR_RAISE(auto target, engine::batch::ResolveSink(*ds.dataset, ctx.store->layout()));
  if (target.single_file || target.noop()) return arrow::Status::OK();
  arrow::fs::FileSelector sel;
  sel.base_dir = target.path;
  sel.allow_not_found = true;
  auto& fs = *target.FileSystemOr(ctx.store->shared_fs());
  ARROW_ASSIGN_OR_RAISE(auto entries, fs.GetFileInfo(sel));
  for (const auto& e : entries) {
    auto epoch = SinkFileEpoch(e.base_name());
    if (!epoch || *epoch <= committed_) continue;
    ARROW_RETURN_NOT_OK(fs.DeleteFile(e.path()));
    Recovery(ctx, committed_, "sink '" + ds.dataset->name + "': deleted " + e.base_name() +
                                  " of uncommitted epoch " + std::to_string(*epoch) +
                                  " (its rows are written again)");
  }
  return arrow::Status::OK();
}

const Json* StreamCheckpoint::SavedFlow(const std::string& flow) const {
  if (retained_.empty()) return nullptr;
  const Json& flows = retained_.front().body.at("flows");
  auto it = flows.find(flow);
  return it == flows.end() ? nullptr : &*it;
}

const Json* StreamCheckpoint::SavedDataset(const std::string& dataset) const {
  if (retained_.empty()) return nullptr;
  const Json& datasets = retained_.front().body.at("datasets");
  auto it = datasets.find(dataset);
  return it == datasets.end() ? nullptr : &*it;
}

arrow::Status StreamCheckpoint::RestoreTables(FlowStream* f) {
  const Json* saved = SavedFlow(f->flow->name);
  if (!f->incremental || !saved || !saved->contains("tables")) return arrow::Status::OK();
  const int64_t t0 = SteadyMs();
  auto tables = f->incremental->Tables();
  auto& images = images_[f->flow->name];
  for (const auto& [name, ref] : saved->at("tables").items()) {
    auto it = tables.find(name);
    if (it == tables.end()) return arrow::Status::IOError("unknown state table ", name);
    ARROW_ASSIGN_OR_RAISE(*it->second, images[name].Restore(store_, retained_.front(), ref));
    if (!*it->second) continue;
    restored_rows_ += (*it->second)->num_rows();
    restored_bytes_ += arrow::util::TotalBufferSize(**it->second);
  }
  restore_ms_ += SteadyMs() - t0;
  return arrow::Status::OK();
}

void StreamCheckpoint::ReportRestored(RunContext& ctx) const {
  if (committed_ == 0) return;
  RunEvent e;
  e.kind = RunEvent::Kind::kRecovery;
  e.epoch = committed_;
  e.count = state_bytes_;
  e.rows_out = restored_rows_;
  e.elapsed_ms = recover_ms_ + restore_ms_;
  e.message = "state restored: " + std::to_string(restored_rows_) + " rows from " +
              std::to_string(state_bytes_) + " bytes (" + std::to_string(restored_bytes_) +
              " bytes in memory) in " + std::to_string(e.elapsed_ms) +
              " ms (" + std::to_string(recover_ms_) + " ms reading and checking, " +
              std::to_string(restore_ms_) + " ms decoding)";
  ctx.Emit(e);
}

std::set<int64_t> StreamCheckpoint::KeptVersions(const std::string& dataset) const {
  std::set<int64_t> out;
  for (const auto& m : retained_) {
    const Json& datasets = m.body.at("datasets");
    auto it = datasets.find(dataset);
    if (it != datasets.end()) out.insert(it->value("version", int64_t{0}));
  }
  return out;
}

arrow::Status StreamCheckpoint::Commit(RunContext& ctx, std::vector<DatasetStream>& streams,
                                       std::vector<StagedVersion>* staged) {
  const int64_t t0 = SteadyMs();
  EpochManifest m;
  m.epoch = committed_ + 1;
  m.run_id = ctx.run_id;
  ARROW_RETURN_NOT_OK(store_.Begin(m.epoch));
  Json datasets = Json::object();
  Json flows = Json::object();
  engine::checkpoint::ImageWrite written;
  int64_t state_rows = 0;
  for (auto& ds : streams) {
    const Dataset& d = *ds.dataset;
    if (ds.IsQueryView()) continue;
    Json entry = Json::object();
    if (ds.sink) {
      entry["sink_epoch"] = ds.epoch;
      if (d.storage.mode == WriteMode::kMerge) entry["merge_offset"] = ds.merge_offset;
    } else {
      entry["version"] = ds.version_number;
    }
    if (!ds.transient) datasets[d.name] = entry;  // a stream view has only flow state
    for (size_t i = 0; i < ds.flows.size(); ++i) {
      FlowStream& f = ds.flows[i];
      Json state = FlowStateJson(f);
      state["definition"] = FlowDefinition(*f.flow);
      state["counters"] = {{"rows_in", f.counters.rows_in},
                           {"rows_out", f.counters.rows_out},
                           {"late_rows", f.counters.late_rows},
                           {"triggers", f.counters.triggers}};
      if (f.incremental) {
        Json tables = Json::object();
        auto& images = images_[f.flow->name];
        IncrementalFlow& inc = *f.incremental;
        for (const auto& [name, table] : inc.Tables()) {
          if (!*table) continue;
          const std::string file = "s" + std::to_string(flows.size()) + "-" + name;
          // The partials' change place by place, when the merges kept it.
          engine::checkpoint::PlaceHint hint;
          const bool hinted = table == &inc.partials && inc.partials_in_place &&
                              inc.partials_since;
          if (hinted) {
            hint.since = inc.partials_since;
            const int64_t rows = inc.partials_since->num_rows();
            for (int64_t i = 0; i < rows && i < static_cast<int64_t>(
                                                    inc.partials_changed.size());
                 ++i) {
              if (inc.partials_changed[static_cast<size_t>(i)]) hint.changed.push_back(i);
            }
          }
          ARROW_ASSIGN_OR_RAISE(tables[name],
                                images[name].Checkpoint(store_, m.epoch, file, *table,
                                                        settings_.image, &m.files, &written,
                                                        hinted ? &hint : nullptr));
          if (table == &inc.partials) {
            inc.partials_since = inc.partials;
            inc.partials_changed.assign(static_cast<size_t>(inc.partials->num_rows()), 0);
            inc.partials_in_place = true;
          }
        }
        state["tables"] = tables;
        state_rows += f.incremental->StateRows();
      }
      flows[f.flow->name] = state;
    }
  }
  m.body["datasets"] = datasets;
  m.body["flows"] = flows;
  // Files of one image appear once per table: keep one entry per path.
  std::sort(m.files.begin(), m.files.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  m.files.erase(std::unique(m.files.begin(), m.files.end(),
                            [](const auto& a, const auto& b) { return a.path == b.path; }),
                m.files.end());
  // The prepared dataset versions reach the disk before the commit point
  // (one flush; the epoch store flushes its own filesystem).
  ARROW_RETURN_NOT_OK(engine::SyncFilesystem(ctx.store->layout().root()));
  ARROW_RETURN_NOT_OK(store_.Commit(&m));
  committed_ = m.epoch;
  retained_.push_front(m);
  while (retained_.size() > settings_.retain) retained_.pop_back();
  // Step 3: publish. The epoch is committed; a failure here is finished by
  // the next run's recovery, so it is reported, not undone.
  for (auto& s : *staged) {
    // Not synced: after a power cut, recovery re-points it from the epoch.
    ARROW_RETURN_NOT_OK(ctx.store->Publish(s.pending, KeptVersions(s.pending.dataset),
                                           &ctx.notes, /*sync=*/false));
  }
  staged->clear();
  store_.Retain({retained_.begin(), retained_.end()}, settings_.retain, &ctx.notes);
  if (lock_) ARROW_RETURN_NOT_OK(lock_->Refresh());
  RunEvent e;
  e.kind = RunEvent::Kind::kCheckpoint;
  e.epoch = m.epoch;
  e.elapsed_ms = SteadyMs() - t0;
  e.count = written.bytes_written;
  e.message = std::to_string(state_rows) + " state rows, wrote " +
              std::to_string(written.rows_written) + " rows / " +
              std::to_string(written.bytes_written) + " bytes" +
              (written.bases > 0 ? " (" + std::to_string(written.bases) + " full images)" : "");
  ctx.Emit(e);
  return arrow::Status::OK();
}

}  // namespace thund::native
