#include "backend/native/reconcile.h"

#include <algorithm>

#include "backend/native/flow_runner.h"
#include "engine/batch/input_files.h"
#include "engine/batch/storage_layout.h"
#include "thund/type_names.h"
#include "thund/validate.h"

namespace thund::native {

std::string CanonicalDefinition(const Pipeline& p, const Dataset& d,
                                const std::vector<const Flow*>& flows) {
  std::string s = "dataset " + d.name + "\nkind " + Name(d.kind) + "\nschema " +
                  d.schema.ToString() + "\nmaterialization " + Name(d.materialization) + "\n";
  for (const auto& e : d.expectations) {
    s += "expect " + e.name + " " + Name(e.action) + " " + e.predicate + "\n";
  }
  s += "storage " + d.storage.ToString() + "\n";
  std::vector<const Flow*> sorted = flows;
  std::sort(sorted.begin(), sorted.end(),
            [](const Flow* a, const Flow* b) { return a->name < b->name; });
  for (const Flow* f : sorted) {
    s += "flow " + f->name + (f->once ? " once" : "") + "\nsql " + f->sql + "\n";
    if (f->source) s += "source " + ToString(*f->source) + "\n";
  }
  for (const auto& [k, v] : p.configuration) s += "conf " + k + "=" + v + "\n";
  return s;
}

arrow::Result<engine::batch::Fingerprint> ComputeFingerprint(
    RunContext& ctx, const Dataset& d, const std::vector<const Flow*>& flows) {
  engine::batch::Fingerprint fp;
  fp.definition = engine::batch::HashHex(CanonicalDefinition(*ctx.pipeline, d, flows));
  for (const Flow* f : flows) {
    auto inputs = FlowInputs(*ctx.pipeline, *f);
    if (!inputs.ok()) return FlowError(*f, inputs.status());
    for (const auto& in : *inputs) {
      auto it = ctx.states.find(in);
      fp.inputs[in] = it == ctx.states.end() ? "external" : it->second.stamp;
    }
    ARROW_ASSIGN_OR_RAISE(auto files, FlowInputFiles(ctx, *f));
    for (const auto& path : files) {
      if (engine::batch::IsRemotePath(path)) {
        fp.files[path] = "remote";
        continue;
      }
      auto stamp = engine::batch::FileStamp(path);
      if (!stamp.ok()) return FlowError(*f, stamp.status());
      fp.files[path] = *stamp;
    }
  }
  return fp;
}

Decision Decide(const std::optional<engine::batch::VersionManifest>& previous,
                const engine::batch::Fingerprint& now, bool full_refresh) {
  if (full_refresh) return {true, "full refresh requested"};
  if (!previous) return {true, "never materialized"};
  if (previous->fingerprint.Digest() == now.Digest()) {
    std::string since = previous->version > 0
                            ? engine::batch::VersionName(previous->version)
                            : std::string("the last write");
    return {false, "up to date: definition and inputs unchanged since " + since + " (run " +
                       previous->run_id + ")"};
  }
  std::string why = engine::batch::ExplainChange(previous->fingerprint, now);
  return {true, why.empty() ? "fingerprint changed" : why};
}

}  // namespace thund::native
