// `thund explain PATH [FLOW]`: each flow's logical plan as a tree, with the
// output schema of every node, and for streaming flows the mode they run in.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "backend/native/native_backend.h"
#include "backend/native/incremental_flow.h"
#include "backend/native/stream_checkpoint.h"
#include "cli/loaded.h"
#include <arrow/filesystem/localfs.h>

#include "engine/batch/dataset_store.h"
#include "engine/fs/atomic_write.h"
#include "engine/stream/generator_source.h"
#include "engine/stream/incremental_plan.h"
#include "sql/sql_analysis.h"
#include "thund/validate.h"
#include "thund/json_text.h"

namespace thund::cli {
namespace {

struct ExplainOptions {
  std::string path;
  std::string flow;
  std::string format = "human";  // human | json
  std::string streaming_mode;    // "" = each flow's own (default recompute)
  std::string storage;           // "" = the pipeline's storage root
};

// The state the flow's incremental operator held at the newest committed
// checkpoint epoch, as "N rows, M bytes (at epoch E)"; "" when there is none.
std::string CommittedState(const Pipeline& p, const Flow& f, const ExplainOptions& o) {
  auto layout = engine::batch::StorageLayout::Make(native::ResolveStorageRoot(p, o.storage));
  if (!layout.ok()) return "";
  auto epoch = native::NewestEpoch(p, *layout);
  if (!epoch.ok() || !*epoch) return "";
  try {
    const auto& inc = (*epoch)->body.at("flows").at(f.name).at("incremental");
    if (!inc.contains("state_rows")) return "";
    return std::to_string(inc.at("state_rows").get<int64_t>()) + " rows, " +
           std::to_string(inc.at("state_bytes").get<int64_t>()) + " bytes (at checkpoint epoch " +
           std::to_string((*epoch)->epoch) + ")";
  } catch (const std::exception&) {
    return "";
  }
}

bool Incremental(const Pipeline& p, const Flow& f, const ExplainOptions& o) {
  return FlowStreamingMode(p, f, ParseStreamingMode(o.streaming_mode)) ==
         StreamingMode::kIncremental;
}

std::string ModeOf(const Pipeline& p, const Flow& f, const ExplainOptions& o) {
  if (!IsStreamingFlow(p, f)) return "batch";
  const StreamingSpec s = f.streaming.value_or(StreamingSpec{});
  return std::string("streaming, ") + Name(s.output_mode) + " output, " +
         (Incremental(p, f, o) ? "incremental mode" : "Recompute mode");
}

// The incremental operators of a flow's plan (or why it falls back).
std::string IncrementalText(const Pipeline& p, const Flow& f, const plan::PlanNode& root) {
  auto planned = engine::stream::PlanFlowIncremental(p, f, root, "__thund_inc_state");
  if (!planned.ok()) return "falls back to Recompute: " + planned.status().message() + "\n";
  std::string text = engine::stream::DescribeIncremental(planned->plan);
  if (planned->plan.op == engine::stream::IncrementalOperator::kWindowed) {
    // The same choice the run makes (native::ChooseWindowPanes).
    text += "  " +
            native::DescribeWindowPanes(
                native::ChooseWindowPanes(f.sql, root, planned->plan.stream_inputs)) +
            "\n";
  }
  return text;
}

int RunExplain(const ExplainOptions& o) {
  Loaded l = LoadAndValidate(o.path);
  if (ReportPlanErrors(l, o.path, o.format)) return kFailed;
  if (!o.flow.empty() && !l.pipeline.FindFlow(o.flow)) {
    std::cerr << "error: the pipeline has no flow '" << o.flow << "' (`thund plan " << o.path
              << "` lists its flows)\n";
    return kFailed;
  }
  // Sources whose rows' schema is known before a run (generators).
  auto source_schema = [](const Flow& f) -> std::shared_ptr<arrow::Schema> {
    if (f.source) {
      if (const auto* g = std::get_if<GeneratorSource>(&*f.source)) {
        return engine::stream::GeneratorSchema(g->kind);
      }
    }
    return nullptr;
  };
  auto plans = sql::PlanPipeline(l.pipeline, source_schema);
  if (!plans.ok()) {
    std::cerr << "error: " << plans.status().message() << "\n";
    return kFailed;
  }
  auto order = TopoOrder(l.pipeline);
  if (!order.ok()) {
    std::cerr << "error: " << order.status().message() << "\n";
    return kFailed;
  }
  nlohmann::ordered_json flows = nlohmann::ordered_json::array();
  for (const Flow* f : *order) {
    if (!o.flow.empty() && f->name != o.flow) continue;
    auto it = plans->find(f->name);
    const std::string mode = ModeOf(l.pipeline, *f, o);
    if (o.format == "json") {
      nlohmann::ordered_json j;
      j["flow"] = f->name;
      j["target"] = f->target;
      j["mode"] = mode;
      if (it != plans->end()) {
        j["plan"] = nlohmann::ordered_json::parse(plan::ToJson(*it->second));
        if (Incremental(l.pipeline, *f, o) && IsStreamingFlow(l.pipeline, *f)) {
          j["incremental"] = IncrementalText(l.pipeline, *f, *it->second);
          const std::string state = CommittedState(l.pipeline, *f, o);
          if (!state.empty()) j["committed_state"] = state;
        }
      } else {
        j["source"] = f->source ? ToString(*f->source) : std::string();
      }
      flows.push_back(std::move(j));
      continue;
    }
    std::cout << "flow " << f->name << " -> " << f->target << " (" << mode << ")\n";
    if (it != plans->end()) {
      std::string text = plan::ToText(*it->second);
      std::cout << text;
      if (Incremental(l.pipeline, *f, o) && IsStreamingFlow(l.pipeline, *f)) {
        std::cout << "incremental operators:\n" << IncrementalText(l.pipeline, *f, *it->second);
        const std::string state = CommittedState(l.pipeline, *f, o);
        if (!state.empty()) std::cout << "state at the last commit: " << state << "\n";
      }
    } else if (f->source) {
      std::cout << "Source " << ToString(*f->source) << "\n";
    }
    std::cout << "\n";
  }
  if (o.format == "json") std::cout << JsonText(nlohmann::ordered_json{{"flows", flows}}, 2) << "\n";
  return kOk;
}

}  // namespace

void RegisterExplain(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<ExplainOptions>();
  auto* c = app.add_subcommand(
      "explain", "Print each flow's logical plan as a tree, with the output schema of every node.");
  c->add_option("PATH", o->path,
                "pipeline file (.yaml/.yml/.json), .sql file, spark-pipeline.yml, or a directory "
                "holding one")
      ->required();
  c->add_option("FLOW", o->flow, "only this flow");
  c->add_option("--format", o->format, "output format")->check(CLI::IsMember({"human", "json"}));
  c->add_option("--streaming-mode", o->streaming_mode,
                "explain streaming flows that set no mode as this mode would run them (as "
                "thund run --streaming-mode)")
      ->check(CLI::IsMember({Name(StreamingMode::kRecompute), Name(StreamingMode::kIncremental)}));
  c->add_option("--storage", o->storage,
                "storage root whose committed state to report (default: the pipeline's)");
  c->callback([o, exit_code] { *exit_code = RunExplain(*o); });
}

}  // namespace thund::cli
