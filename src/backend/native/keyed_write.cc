#include "backend/native/keyed_write.h"

#include <algorithm>
#include <optional>
#include <variant>

#include "backend/native/dataset_runner.h"
#include "backend/native/runner_util.h"
#include "engine/batch/file_source.h"
#include "engine/batch/schema_conform.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/exec/catch_all.h"
#include "engine/fs/atomic_write.h"
#include "engine/keyed/filter_placement.h"
#include "engine/keyed/key_spec.h"
#include "thund/validate.h"

namespace thund::native {

namespace {

using Batches = std::vector<std::shared_ptr<arrow::RecordBatch>>;

// Key column indices of `spec` in `schema`; empty when one is missing.
std::vector<int> KeyIndices(const engine::keyed::KeySpec& spec, const arrow::Schema& schema) {
  std::vector<int> out;
  for (const auto& name : spec.names) {
    int i = engine::keyed::FindColumn(schema, name);
    if (i < 0) return {};
    out.push_back(i);
  }
  return out;
}

const Flow* OnlyFlowInto(const Pipeline& p, const std::string& dataset) {
  const Flow* found = nullptr;
  for (const auto& f : p.flows) {
    if (f.target != dataset) continue;
    if (found) return nullptr;
    found = &f;
  }
  return found;
}

}  // namespace

// Where the filter runs for one flow, and what was rebound to do it.
struct KeyedDatasetWrite::Placed {
  bool target_checked = false;            // every output row went through DropExisting
  std::vector<std::string> shadowed;      // names bound to filtered rows; restore after
  std::shared_ptr<bool> file_source_ok;   // file source: key columns found in its rows
  std::string explanation;
};

// Rows of one flow into the keyed write.
class KeyedConsumer : public RowConsumer {
 public:
  KeyedConsumer(KeyedDatasetWrite& w, const Flow& f, std::shared_ptr<bool> target_checked)
      : w_(w), where_("flow '" + f.name + "'"), target_checked_(std::move(target_checked)) {}
  arrow::Status Open(const std::shared_ptr<arrow::Schema>& schema) override {
    return w_.OpenWriter(schema);
  }
  arrow::Status Consume(const std::shared_ptr<arrow::RecordBatch>& batch) override {
    // The run's key sets grow here: out of memory is an error, not a crash.
    return engine::CatchAll("filtering the rows of " + where_, [&]() -> arrow::Status {
      ARROW_ASSIGN_OR_RAISE(auto split,
                            w_.filter_->FilterForWrite(*batch, *target_checked_, where_));
      if (split.now && split.now->num_rows() > 0) {
        ARROW_RETURN_NOT_OK(w_.writer_->Write(split.now));
      }
      if (split.deferred && split.deferred->num_rows() > 0) w_.deferred_.push_back(split.deferred);
      return arrow::Status::OK();
    });
  }

 private:
  KeyedDatasetWrite& w_;
  std::string where_;
  std::shared_ptr<bool> target_checked_;
};

arrow::Result<std::unique_ptr<KeyedDatasetWrite>> KeyedDatasetWrite::Make(
    RunContext& ctx, const Dataset& d, std::vector<std::string> key_dirs, std::string out_dir,
    engine::keyed::FileFormat format, int64_t rows_per_file) {
  std::unique_ptr<KeyedDatasetWrite> w(new KeyedDatasetWrite(ctx, d));
  ARROW_ASSIGN_OR_RAISE(w->options_,
                        engine::keyed::KeyedWriteOptions::FromIr(
                            d.keyed_write, std::string(Name(d.kind)) + " '" + d.name +
                                               "' keyed_write"));
  w->key_dirs_ = std::move(key_dirs);
  w->out_dir_ = std::move(out_dir);
  w->output_.format = format;
  w->output_.rows_per_file = rows_per_file;
  w->output_.threads = std::min<int64_t>(w->options_.EffectiveThreads(), 4);
  // The dataset's fast-path switches (key_index, memory_pool and huge_pages
  // came with options_ above). Settling and pass-through are `thund copy`'s
  // alone: this write reads rows, it never commits a source file unchanged.
  const engine::keyed::FileSwitches files = engine::keyed::FileSwitchesFromIr(d.keyed_write.tuning);
  w->output_.join = files.join;
  w->output_.direct_io = files.direct_io;
  ARROW_ASSIGN_OR_RAISE(int removed, engine::CleanupTemporaries(ctx.store->fs(), w->out_dir_));
  if (removed > 0) {
    w->Emit(nullptr, "removed " + std::to_string(removed) + " partial file(s) left in '" +
                         w->out_dir_ + "' by an interrupted write");
  }
  return w;
}

void KeyedDatasetWrite::Emit(const Flow* flow, const std::string& message) const {
  RunEvent e;
  e.kind = RunEvent::Kind::kMessage;
  e.dataset = d_.name;
  if (flow) e.flow = flow->name;
  e.message = (flow ? "keyed_write: " : "keyed_write of '" + d_.name + "': ") + message;
  ctx_.Emit(e);
}

arrow::Status KeyedDatasetWrite::EnsureFilter(const std::shared_ptr<arrow::Schema>& schema) {
  if (filter_) return arrow::Status::OK();
  const std::shared_ptr<arrow::Schema>& use = d_.schema.declared() ? d_.schema.arrow : schema;
  auto made = engine::keyed::KeyedWriteFilter::Make(
      options_, *use, ctx_.store->shared_fs(), key_dirs_,
      [this](const engine::keyed::KeyedEvent& e) { Emit(nullptr, e.message); });
  if (!made.ok()) {
    return made.status().WithMessage(Name(d_.kind), " '", d_.name, "': ",
                                     made.status().message());
  }
  filter_ = std::move(*made);
  return arrow::Status::OK();
}

arrow::Status KeyedDatasetWrite::OpenWriter(const std::shared_ptr<arrow::Schema>& schema) {
  ARROW_RETURN_NOT_OK(EnsureFilter(schema));
  if (writer_) return arrow::Status::OK();
  if (!required_schema_.empty() && engine::batch::DescribeSchema(*schema) != required_schema_) {
    return arrow::Status::Invalid(
        Name(d_.kind), " '", d_.name, "': keyed_write keeps the stored rows, but the new rows ",
        "have the schema ", engine::batch::DescribeSchema(*schema), " and the stored ones ",
        required_schema_, "; keep the schema, or rewrite the dataset with --full-refresh ",
        d_.name);
  }
  schema_ = schema;
  ARROW_ASSIGN_OR_RAISE(writer_, engine::keyed::OutputFileWriter::Make(
                                     ctx_.store->shared_fs(), out_dir_, output_, schema));
  writer_->set_on_commit([this](const std::string& path, int64_t rows) {
    std::lock_guard<std::mutex> lock(files_mu_);
    files_.push_back({path, rows});
  });
  return arrow::Status::OK();
}

arrow::Result<KeyedDatasetWrite::Placed> KeyedDatasetWrite::Place(const Flow& flow) {
  Placed placed;
  if (flow.source) {
    placed.file_source_ok = std::make_shared<bool>(true);
    placed.explanation = "filter right after the file source (" +
                         std::string(SourceKindName(*flow.source)) + "), before expectations";
    return placed;
  }
  ARROW_ASSIGN_OR_RAISE(std::string sql, TranslateFlowSql(flow));
  if (!filter_) {
    auto probe = ctx_.session->Query("SELECT * FROM (" + sql + ") AS __thund_keyed_q LIMIT 0");
    if (!probe.ok()) return FlowError(flow, probe.status());
    ARROW_RETURN_NOT_OK(EnsureFilter((*probe)->schema()));
  }
  std::vector<engine::keyed::SourceSchema> sources;
  auto inputs = FlowInputs(*ctx_.pipeline, flow);
  for (const auto& in : inputs.ok() ? *inputs : std::vector<std::string>()) {
    const Dataset* src = ctx_.pipeline->FindDataset(in);
    auto state = ctx_.states.find(in);
    if (!src || state == ctx_.states.end() || !state->second.available) continue;
    const bool view = src->kind == DatasetKind::kView || src->kind == DatasetKind::kTemporaryView;
    const Flow* view_flow = view ? OnlyFlowInto(*ctx_.pipeline, in) : nullptr;
    const bool plain_view = view_flow && !view_flow->source && src->expectations.empty();
    if (!(IsStored(src->kind) || plain_view) || ctx_.session->IsRegistered(in)) continue;
    auto probe = ctx_.session->Query("SELECT * FROM " + engine::QuoteIdentifier(in) + " LIMIT 0");
    if (!probe.ok()) continue;
    sources.push_back({in, (*probe)->schema()});
  }
  auto plan = engine::keyed::PlanFilterPlacement(sql, filter_->spec().names, sources);
  if (!plan.ok()) return FlowError(flow, plan.status());
  placed.explanation = plan->explanation;
  placed.target_checked = !plan->before_write;
  auto shadow = [&](const std::string& source, const std::vector<std::string>& columns) {
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          ctx_.session->QueryStream("SELECT * FROM " +
                                                    engine::QuoteIdentifier(source)));
    std::shared_ptr<arrow::Schema> schema = reader->schema();
    std::vector<int> indices;
    for (const auto& c : columns) indices.push_back(engine::keyed::FindColumn(*schema, c));
    Batches kept;
    int64_t rows = 0;
    const std::string where = "source '" + source + "' of flow '" + flow.name + "'";
    while (true) {
      std::shared_ptr<arrow::RecordBatch> batch;
      ARROW_RETURN_NOT_OK(reader->ReadNext(&batch));
      if (!batch) break;
      ARROW_ASSIGN_OR_RAISE(auto k, filter_->DropExisting(*batch, indices, where, rows));
      rows += batch->num_rows();
      if (k->num_rows() > 0) kept.push_back(std::move(k));
    }
    reader.reset();
    rows_read_ += rows;
    placed.shadowed.push_back(source);
    return ctx_.catalog->BindArrow(source, schema, std::move(kept));
  };
  for (const auto& [source, columns] : plan->at_source) {
    arrow::Status st = shadow(source, columns);
    if (!st.ok()) {
      (void)Restore(placed);
      return FlowError(flow, st);
    }
  }
  return placed;
}

arrow::Status KeyedDatasetWrite::Restore(const Placed& placed) {
  arrow::Status first;
  for (const auto& name : placed.shadowed) {
    const Dataset* src = ctx_.pipeline->FindDataset(name);
    arrow::Status st;
    if (src && IsStored(src->kind)) {
      auto current = ctx_.store->Current(name);
      if (!current.ok()) {
        st = current.status();
      } else if (*current) {
        st = ctx_.catalog->BindStored(
            name, ctx_.store->layout().VersionGlob(name, (**current).version));
      }
    } else if (const Flow* f = OnlyFlowInto(*ctx_.pipeline, name)) {
      auto sql = TranslateFlowSql(*f);
      st = sql.ok() ? ctx_.catalog->BindView(name, *sql) : sql.status();
    }
    if (first.ok() && !st.ok()) first = st;
  }
  return first;
}

arrow::Status KeyedDatasetWrite::PrePass(const std::vector<const Flow*>& flows) {
  if (options_.duplicates != engine::keyed::Duplicates::kAll) return arrow::Status::OK();
  for (const Flow* f : flows) {
    const std::string where = "source of flow '" + f->name + "' (duplicates=all pre-pass)";
    std::shared_ptr<arrow::RecordBatchReader> reader;
    std::optional<engine::batch::FileSourcePlan> file_plan;
    Placed placed;
    if (f->source) {
      const auto* files = std::get_if<FileSource>(&*f->source);
      if (!files) continue;  // RunFlow reports unsupported sources
      auto plan = engine::batch::PlanFileSource(*ctx_.session, *f, *files, d_, ctx_.NextTag());
      if (!plan.ok()) return FlowError(*f, plan.status());
      file_plan = std::move(*plan);
      auto r = ctx_.session->QueryStream(file_plan->sql);
      if (!r.ok()) {
        engine::batch::Cleanup(*ctx_.session, *file_plan);
        return FlowError(*f, r.status());
      }
      reader = *r;
      ARROW_RETURN_NOT_OK(EnsureFilter(reader->schema()));
    } else {
      ARROW_ASSIGN_OR_RAISE(placed, Place(*f));
      rows_read_ = 0;  // counted in the real pass
      ARROW_ASSIGN_OR_RAISE(std::string sql, TranslateFlowSql(*f));
      auto r = ctx_.session->QueryStream(sql);
      if (!r.ok()) {
        (void)Restore(placed);
        return FlowError(*f, r.status());
      }
      reader = *r;
    }
    arrow::Status st;
    std::vector<int> indices = KeyIndices(filter_->spec(), *reader->schema());
    int64_t rows = 0;  // read so far: messages number rows from the source's start
    while (st.ok()) {
      std::shared_ptr<arrow::RecordBatch> batch;
      st = reader->ReadNext(&batch);
      if (!st.ok() || !batch) break;
      const int64_t first_row = rows;
      rows += batch->num_rows();
      if (f->source && !indices.empty()) {
        auto kept = filter_->DropExisting(*batch, indices, where, first_row);
        if (!kept.ok()) {
          st = kept.status();
          break;
        }
        batch = *kept;
      }
      st = filter_->NoteForAll(*batch, where);
    }
    reader.reset();
    if (file_plan) engine::batch::Cleanup(*ctx_.session, *file_plan);
    arrow::Status restored = Restore(placed);
    ARROW_RETURN_NOT_OK(st.ok() ? restored : FlowError(*f, st));
  }
  return arrow::Status::OK();
}

arrow::Result<FlowResult> KeyedDatasetWrite::RunOneFlow(const Flow& flow, FlowRunOptions options) {
  ARROW_ASSIGN_OR_RAISE(Placed placed, Place(flow));
  auto target_checked = std::make_shared<bool>(placed.target_checked);
  int64_t file_rows = 0;
  if (placed.file_source_ok) {
    *target_checked = true;
    options.pre_filter = [this, &file_rows, target_checked, &flow](
                             const std::shared_ptr<arrow::RecordBatch>& batch)
        -> arrow::Result<std::shared_ptr<arrow::RecordBatch>> {
      std::vector<int> indices = KeyIndices(filter_->spec(), *batch->schema());
      if (indices.empty()) {
        *target_checked = false;  // the key is not a column of the source's rows
        return batch;
      }
      auto kept = filter_->DropExisting(*batch, indices, "file source of flow '" + flow.name + "'",
                                        file_rows);
      file_rows += batch->num_rows();
      return kept;
    };
  }
  Emit(&flow, placed.explanation);
  KeyedConsumer consumer(*this, flow, target_checked);
  auto result = native::RunFlow(ctx_, flow, d_, options, consumer);
  arrow::Status restored = Restore(placed);
  if (!result.ok()) return result.status();
  if (!restored.ok()) return FlowError(flow, restored);
  if (placed.file_source_ok) {
    rows_read_ += *target_checked ? file_rows : result->rows_in;
    if (!*target_checked) {
      placed.explanation = "filter before the write: the file source's rows lack a key column";
      Emit(&flow, placed.explanation);
    }
  } else if (!placed.target_checked) {
    rows_read_ += result->rows_in;  // rows the query produced reached the write-side filter
  }
  placement_ += (placement_.empty() ? "" : "; ") + flow.name + ": " + placed.explanation;
  return result;
}

arrow::Status KeyedDatasetWrite::Finish() {
  if (!writer_) return arrow::Status::OK();
  if (!deferred_.empty()) {
    int64_t rows = 0;
    for (const auto& b : deferred_) rows += b->num_rows();
    Emit(nullptr, std::to_string(rows) + " rows of keys that repeat are written as one final file");
    ARROW_RETURN_NOT_OK(writer_->Flush());
    ARROW_RETURN_NOT_OK(writer_->WriteOneFile(std::move(deferred_)));
    deferred_.clear();
  }
  return writer_->Finish();
}

engine::keyed::KeyedCounts KeyedDatasetWrite::counts() const {
  engine::keyed::KeyedCounts c;
  if (filter_) c = filter_->counts();
  c.rows_read = rows_read_;
  c.rows_written = writer_ ? writer_->rows_committed() : 0;
  return c;
}

std::vector<KeyedFile> KeyedDatasetWrite::files() const {
  std::lock_guard<std::mutex> lock(files_mu_);
  std::vector<KeyedFile> out = files_;
  std::sort(out.begin(), out.end(),
            [](const KeyedFile& a, const KeyedFile& b) { return a.path < b.path; });
  return out;
}

void KeyedDatasetWrite::FillOutcome(DatasetOutcome* o) const {
  const engine::keyed::KeyedCounts c = counts();
  NativeDatasetOutcome& n = o->native ? *o->native : o->native.emplace();
  NativeKeyedCounts& k = n.keyed.emplace();
  k.rows_read = c.rows_read;
  k.rows_skipped_existing = c.rows_skipped_existing;
  k.rows_skipped_duplicate = c.rows_skipped_duplicate;
  k.rows_null_key = c.rows_null_key;
  k.placement = placement_;
  o->rows_written = c.rows_written;
  o->reason += "; keyed write: " + c.ToString();
}

arrow::Status RunKeyedFlows(RunContext& ctx, const DatasetTask& task, KeyedDatasetWrite& w,
                            const std::vector<engine::batch::CompiledExpectation>& expectations,
                            const std::vector<std::string>& ran_before,
                            const std::string& skip_why, DatasetOutcome* outcome,
                            KeyedFlowRuns* runs) {
  const Dataset& d = *task.dataset;
  for (const Flow* f : task.flows) {
    if (f->once && Contains(ran_before, f->name)) {
      EmitSkipped(ctx, {task.dataset, {f}, false}, skip_why);
      runs->once_flows.push_back(f->name);
      continue;
    }
    FlowRunOptions options;
    options.expectations = expectations;
    options.target_schema = d.schema.declared() ? d.schema.arrow : w.schema();
    options.declared = d.schema.declared();
    auto result = w.RunOneFlow(*f, options);
    if (!result.ok()) {
      (void)w.Finish();
      runs->failed = f;
      return result.status();
    }
    if (f->once) runs->once_flows.push_back(f->name);
    AddCounts(outcome, expectations, *result);
    runs->done.emplace_back(f, std::move(*result));
  }
  return arrow::Status::OK();
}

}  // namespace thund::native
