#include "backend/native/runner_util.h"

#include <algorithm>

#include "backend/native/dataset_runner.h"

namespace thund::native {

DatasetOutcome Outcome(const Dataset& d, DatasetStatus status, std::string reason) {
  DatasetOutcome o;
  o.dataset = d.name;
  o.status = status;
  o.reason = std::move(reason);
  o.native.emplace();
  return o;
}

DatasetOutcome Fail(RunContext& ctx, const DatasetTask& task, const Flow* flow,
                    const arrow::Status& st) {
  const Dataset& d = *task.dataset;
  RunEvent e;
  e.kind = RunEvent::Kind::kFlowFailed;
  e.flow = flow ? flow->name : (task.flows.empty() ? d.name : task.flows[0]->name);
  e.dataset = d.name;
  e.message = st.message();
  ctx.Emit(e);
  auto& state = ctx.states[d.name];
  state.available = false;
  state.blocked_reason = "upstream '" + d.name + "' failed";
  return Outcome(d, DatasetStatus::kFailed, st.message());
}

void EmitFinished(RunContext& ctx, const Flow& flow, const Dataset& d, const FlowResult& r,
                  const std::string& message) {
  RunEvent e;
  e.kind = RunEvent::Kind::kFlowFinished;
  e.flow = flow.name;
  e.dataset = d.name;
  e.rows_in = r.rows_in;
  e.rows_out = r.rows_out;
  e.elapsed_ms = r.elapsed_ms;
  e.message = message;
  ctx.Emit(e);
}

void AddCounts(DatasetOutcome* o, const std::vector<engine::batch::CompiledExpectation>& exps,
               const FlowResult& r) {
  for (size_t i = 0; i < exps.size() && i < r.violations.size(); ++i) {
    o->expectation_violations[exps[i].rule.name] += r.violations[i];
  }
  NativeDatasetOutcome& n = o->native ? *o->native : o->native.emplace();
  n.rows_in += r.rows_in;
  o->rows_written += r.rows_out;
  n.bad_rows += static_cast<int64_t>(r.bad_rows.size());
}

std::string Pad(size_t i) {
  std::string s = std::to_string(i);
  return std::string(s.size() < 5 ? 5 - s.size() : 0, '0') + s;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace thund::native
