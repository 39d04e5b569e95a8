// `thund plan`: the flows in execution order with what each needs.
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "cli/spark_cli.h"
#include "thund/duration.h"
#include "thund/validate.h"
#include "thund/json_text.h"
#include "common/text.h"

namespace thund::cli {
namespace {

struct PlanOptions {
  std::string path;
  std::string format = "human";  // human | json
  std::string backend = "native";
  SparkCliOptions spark;
};

struct FlowPlan {
  const Flow* flow;
  const Dataset* target;
  bool streaming;
  std::vector<std::string> inputs;
  std::vector<std::string> capabilities;
};


std::vector<std::string> Reads(const FlowPlan& fp) {
  std::vector<std::string> reads = fp.inputs;
  if (fp.flow->source) reads.insert(reads.begin(), ToString(*fp.flow->source));
  return reads;
}

nlohmann::json ToJson(const Pipeline& p, const std::vector<FlowPlan>& plan) {
  nlohmann::json flows = nlohmann::json::array();
  int step = 0;
  for (const auto& fp : plan) {
    nlohmann::json j;
    j["step"] = ++step;
    j["flow"] = fp.flow->name;
    j["target"] = fp.flow->target;
    j["target_kind"] = fp.target ? Name(fp.target->kind) : "";
    j["type"] = fp.streaming ? "streaming" : "batch";
    j["once"] = fp.flow->once;
    if (fp.streaming) {
      StreamingSpec s = fp.flow->streaming.value_or(StreamingSpec{});
      j["mode"] = Name(FlowStreamingMode(p, *fp.flow, std::nullopt));
      j["trigger"] = s.trigger.ToString();
      j["output_mode"] = Name(s.output_mode);
      if (s.watermark) j["watermark"] = s.watermark->ToString();
      if (s.window) j["window"] = s.window->ToString();
      if (!s.late_rows.empty()) j["late_rows"] = s.late_rows;
    }
    if (fp.flow->source) j["source"] = ToString(*fp.flow->source);
    j["inputs"] = fp.inputs;
    j["capabilities"] = fp.capabilities;
    flows.push_back(std::move(j));
  }
  nlohmann::json out;
  out["pipeline"] = p.name;
  out["flows"] = std::move(flows);
  return out;
}

void PrintHuman(const Pipeline& p, const std::vector<FlowPlan>& plan) {
  size_t streaming = 0;
  for (const auto& fp : plan) streaming += fp.streaming ? 1 : 0;
  std::cout << fmt::format("pipeline {}: {} datasets, {} flows ({} batch, {} streaming)\n\n",
                           p.name.empty() ? "(unnamed)" : p.name, p.datasets.size(), plan.size(),
                           plan.size() - streaming, streaming);
  int step = 0;
  for (const auto& fp : plan) {
    const Flow& f = *fp.flow;
    std::cout << fmt::format("{:>2}. {} -> {} [{}]{}\n", ++step, f.name, f.target,
                             fp.target ? Name(fp.target->kind) : "?", f.once ? " (once)" : "");
    if (fp.streaming) {
      StreamingSpec s = f.streaming.value_or(StreamingSpec{});
      std::cout << fmt::format("      streaming: mode {}, trigger {}, output {}",
                               Name(FlowStreamingMode(p, f, std::nullopt)),
                               s.trigger.ToString(), Name(s.output_mode));
      if (s.watermark) std::cout << ", " << s.watermark->ToString();
      if (s.window) std::cout << ", " << s.window->ToString();
      if (!s.late_rows.empty()) std::cout << ", late rows to " << s.late_rows;
      std::cout << "\n";
    } else {
      std::cout << "      batch\n";
    }
    if (f.cdc) std::cout << "      " << f.cdc->ToString() << "\n";
    std::vector<std::string> reads = Reads(fp);
    std::cout << "      reads: " << (reads.empty() ? "(nothing)" : text::Join(reads, ", ")) << "\n";
    std::cout << "      needs: " << text::Join(fp.capabilities, ", ") << "\n";
  }
}

int RunPlan(const PlanOptions& o) {
  Loaded l = LoadAndValidate(o.path);
  if (ReportPlanErrors(l, o.path, o.format)) return kFailed;
  auto order = TopoOrder(l.pipeline);
  if (!order.ok()) {
    std::cerr << "error: " << order.status().message() << "\n";
    return kFailed;
  }
  std::vector<FlowPlan> plan;
  for (const Flow* f : *order) {
    FlowPlan fp{f, l.pipeline.FindDataset(f->target), IsStreamingFlow(l.pipeline, *f), {}, {}};
    auto inputs = FlowInputs(l.pipeline, *f);
    if (inputs.ok()) fp.inputs = *inputs;
    fp.capabilities = RequiredCapabilities(l.pipeline, *f);
    plan.push_back(std::move(fp));
  }
  if (o.backend == "spark") {
    for (auto& d : SparkCheckDiagnostics(l.pipeline, o.spark)) l.diagnostics.push_back(d);
    if (ReportPlanErrors(l, o.path, o.format)) return kFailed;
  }
  if (o.format == "json") {
    nlohmann::json j = ToJson(l.pipeline, plan);
    j["diagnostics"] = nlohmann::json::parse(DiagnosticsJson(l.diagnostics))["diagnostics"];
    std::cout << JsonText(j, 2) << "\n";
  } else {
    PrintDiagnosticsHuman(l, std::cerr);  // warnings, if any
    PrintHuman(l.pipeline, plan);
  }
  return kOk;
}

}  // namespace

void RegisterPlan(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<PlanOptions>();
  auto* p = app.add_subcommand("plan", "Print the flows in execution order with what each needs.");
  p->add_option("PATH", o->path, "pipeline file (.yaml/.yml/.json), .sql file, spark-pipeline.yml, or a directory holding one")->required();
  p->add_option("--format", o->format, "output format")->check(CLI::IsMember({"human", "json"}));
  p->add_option("--backend", o->backend,
                "native, or spark: also what Spark cannot run (errors) and runs differently "
                "(notes)")
      ->check(CLI::IsMember({"native", "spark"}));
  AddSparkOptions(p, &o->spark, /*with_storage=*/false);
  p->callback([o, exit_code] { *exit_code = RunPlan(*o); });
}

}  // namespace thund::cli
