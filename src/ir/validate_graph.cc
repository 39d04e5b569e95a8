// Rules on the dataset/flow graph: unknown targets and inputs, reading a sink,
// self-reads, cycles, several flows writing a single-query dataset. A flow
// writes its target and its late-rows table (streaming.late_rows).
#include <algorithm>
#include <set>

#include "ir/validate_internal.h"

namespace thund::internal {
namespace {

bool SingleQueryKind(DatasetKind k) {
  return k == DatasetKind::kMaterializedView || k == DatasetKind::kView ||
         k == DatasetKind::kTemporaryView;
}

void CheckTargets(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    if (f.target.empty()) {
      out->push_back(FlowDiag(p, i, Severity::kError, "unknown-target", "target",
                              "flow " + Quote(f.name) + " has no target dataset",
                              "set the flow's target to the dataset it computes"));
    } else if (!ctx.Find(f.target)) {
      out->push_back(FlowDiag(
          p, i, Severity::kError, "unknown-target", "target",
          "flow " + Quote(f.name) + " writes to " + Quote(f.target) +
              ", which is not a dataset of this pipeline" + DidYouMean(f.target, DatasetNames(p)),
          "declare a dataset named " + Quote(f.target) +
              " (e.g. a materialized_view or streaming_table), or fix the target name"));
    }
  }
}

void CheckInputs(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    for (const auto& in : ctx.flows[i].inputs) {
      const Dataset* d = ctx.Find(in.name);
      if (!d) {
        if (in.qualified) continue;  // a table outside the pipeline (db.t, catalog.db.t)
        Diagnostic dg = FlowDiag(
            p, i, Severity::kError, "unknown-input", "sql",
            "flow " + Quote(f.name) + " reads " + Quote(in.name) +
                ", which is not a dataset of this pipeline" + DidYouMean(in.name, DatasetNames(p)),
            "declare a dataset named " + Quote(in.name) +
                ", qualify an external table with its schema (db." + in.name +
                "), or read a file with read_parquet('path') / read_csv('path')");
        // Where the reference is written, not where the statement starts.
        if (f.sql_location.known() && in.line > 0) dg.location = f.SqlPosition(in.line, in.column);
        out->push_back(std::move(dg));
        continue;
      }
      if (d->kind == DatasetKind::kSink) {
        out->push_back(FlowDiag(
            p, i, Severity::kError, "reads-sink", "sql",
            "flow " + Quote(f.name) + " reads sink " + Quote(in.name) + "; sinks are write-only",
            "read the dataset that feeds the sink instead, or declare " + Quote(in.name) +
                " as a table if it must be read back"));
      }
      if (in.name == f.target) {
        out->push_back(FlowDiag(
            p, i, Severity::kError, "self-read", "sql",
            "flow " + Quote(f.name) + " reads its own target " + Quote(f.target) + " (cycle " +
                f.target + " -> " + f.target + ")",
            "a flow cannot read the dataset it writes; read the upstream datasets instead"));
      }
    }
  }
}

// The datasets flow `f` writes: its target, and the streaming table its late
// rows go to (streaming.late_rows), if any.
std::vector<std::string> Written(const Flow& f) {
  std::vector<std::string> out = {f.target};
  if (f.streaming && !f.streaming->late_rows.empty() && f.streaming->late_rows != f.target) {
    out.push_back(f.streaming->late_rows);
  }
  return out;
}

// The first flow (by position) that writes `to` and reads `from`.
const Flow* EdgeFlow(const ValidateContext& ctx, const std::string& from, const std::string& to,
                     size_t* index) {
  for (size_t i = 0; i < ctx.p.flows.size(); ++i) {
    const auto written = Written(ctx.p.flows[i]);
    if (std::find(written.begin(), written.end(), to) == written.end()) continue;
    for (const auto& in : ctx.flows[i].inputs) {
      if (in.name == from) {
        *index = i;
        return &ctx.p.flows[i];
      }
    }
  }
  return nullptr;
}

void CheckCycles(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  // Dataset graph: input -> each dataset the flow writes (its target and its
  // late-rows table), one edge per flow input. Self-reads of the target are
  // reported by CheckInputs (with their own code) and left out here.
  std::map<std::string, std::vector<std::string>> edges;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    for (const auto& out : Written(f)) {
      if (!ctx.Find(out)) continue;
      for (const auto& in : ctx.flows[i].inputs) {
        if (in.name == f.target || !ctx.Find(in.name)) continue;
        edges[in.name].push_back(out);
      }
    }
  }
  for (const Cycle& c : FindCycles(edges)) {
    std::vector<std::string> flow_names;
    size_t first_flow = 0;
    for (size_t k = 0; k < c.path.size(); ++k) {
      size_t index = 0;
      const Flow* f = EdgeFlow(ctx, c.path[k], c.path[(k + 1) % c.path.size()], &index);
      if (!f) continue;
      if (flow_names.empty()) first_flow = index;
      flow_names.push_back(Quote(f->name));
    }
    std::string message = "datasets form a cycle: " + c.ToString();
    if (!flow_names.empty()) message += " (through flows " + JoinNames(flow_names, ", ") + ")";
    if (!c.others.empty()) {
      message += "; " + JoinNames(c.others, ", ") + " also belong to this cycle group";
    }
    std::string hint =
        "a dataset cannot depend on itself: remove one of the reads in the cycle, "
        "or compute the shared part in a separate upstream dataset";
    if (flow_names.empty()) continue;  // cannot happen: every edge comes from a flow
    out->push_back(FlowDiag(p, first_flow, Severity::kError, "cycle", "sql", std::move(message),
                            std::move(hint)));
  }
}

void CheckWriters(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  std::map<std::string, std::vector<size_t>> writers;
  for (size_t i = 0; i < p.flows.size(); ++i) writers[p.flows[i].target].push_back(i);
  for (const auto& [target, flows] : writers) {
    const Dataset* d = ctx.Find(target);
    if (!d || !SingleQueryKind(d->kind) || flows.size() < 2) continue;
    std::vector<std::string> names;
    for (size_t i : flows) names.push_back(Quote(p.flows[i].name));
    for (size_t k = 1; k < flows.size(); ++k) {
      out->push_back(FlowDiag(
          p, flows[k], Severity::kError, "multiple-writers", "target",
          std::string(Name(d->kind)) + " " + Quote(target) + " is written by " +
              std::to_string(flows.size()) + " flows (" + JoinNames(names, ", ") +
              "); it must have exactly one defining query",
          "combine the queries into one (e.g. with UNION ALL), or declare " + Quote(target) +
              " as a streaming_table or table, which accept several flows"));
    }
  }
}

}  // namespace

void CheckGraph(const ValidateContext& ctx, Diagnostics* out) {
  CheckTargets(ctx, out);
  CheckInputs(ctx, out);
  CheckCycles(ctx, out);
  CheckWriters(ctx, out);
}

}  // namespace thund::internal
