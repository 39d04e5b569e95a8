// Rules on streaming.late_rows, the streaming table that receives a flow's
// late rows (rows whose event time is below the flow's watermark when they
// arrive).
//
// Decisions:
//  * the named dataset must be a streaming_table of the pipeline that no flow
//    writes: its rows are the late rows of the flows naming it, nothing else
//    (several flows may name the same one);
//  * it is not the flow's own target (late rows are the rows the target does
//    not take);
//  * the flow has a watermark, its own or one declared by a flow writing one
//    of its inputs (where the stream is read; the runner looks there too),
//    since without one no row is ever late.
#include <algorithm>

#include "ir/validate_internal.h"

namespace thund::internal {
namespace {

constexpr const char* kField = "streaming.late_rows";

// Its own watermark, or one declared by a flow writing one of its inputs.
bool HasWatermark(const ValidateContext& ctx, size_t i) {
  const Flow& f = ctx.p.flows[i];
  if (f.streaming && f.streaming->watermark) return true;
  for (const auto& in : ctx.flows[i].inputs) {
    if (in.qualified) continue;
    for (const Flow* g : ctx.p.FlowsInto(in.name)) {
      if (g->streaming && g->streaming->watermark) return true;
    }
  }
  return false;
}

void CheckOne(const ValidateContext& ctx, size_t i, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  const Flow& f = p.flows[i];
  const std::string& name = f.streaming->late_rows;
  auto err = [&](const char* code, std::string message, std::string hint) {
    out->push_back(
        FlowDiag(p, i, Severity::kError, code, kField, std::move(message), std::move(hint)));
  };
  const std::string what = "flow " + Quote(f.name) + " sends its late rows to " + Quote(name);
  const Dataset* d = ctx.Find(name);
  if (!d) {
    err("late-rows-unknown",
        what + ", which is not a dataset of this pipeline" +
            DidYouMean(name, DatasetNames(p)),
        "declare a streaming_table named " + Quote(name) + " that no flow writes, or fix the name");
    return;
  }
  if (name == f.target) {
    err("late-rows-self", what + ", its own target",
        "name a separate streaming_table for the late rows; the target keeps the rows that "
        "arrive in time");
    return;
  }
  if (d->kind != DatasetKind::kStreamingTable) {
    err("late-rows-kind", what + ", which is a " + std::string(Name(d->kind)),
        "late rows go to a streaming_table: declare " + Quote(name) +
            " as a streaming_table that no flow writes");
    return;
  }
  std::vector<std::string> writers;
  for (const Flow* g : p.FlowsInto(name)) writers.push_back(Quote(g->name));
  if (!writers.empty()) {
    err("late-rows-written",
        what + ", which flow" + (writers.size() > 1 ? "s " : " ") + JoinNames(writers, ", ") +
            (writers.size() > 1 ? " write" : " writes"),
        "give the late rows a streaming_table of their own that no flow writes");
  }
}

}  // namespace

void CheckLateRows(const ValidateContext& ctx, Diagnostics* out) {
  const Pipeline& p = ctx.p;
  for (size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    if (!f.streaming || f.streaming->late_rows.empty()) continue;
    CheckOne(ctx, i, out);
    if (!HasWatermark(ctx, i)) {
      out->push_back(FlowDiag(
          p, i, Severity::kError, "late-rows-watermark", kField,
          "flow " + Quote(f.name) + " sends its late rows to " + Quote(f.streaming->late_rows) +
              " but has no watermark, so no row is ever late",
          "declare a watermark on the flow (watermark = 'col', or WATERMARK col DELAY OF ... in "
          "the query) or on the flow that reads its input stream"));
    }
  }
}

}  // namespace thund::internal
