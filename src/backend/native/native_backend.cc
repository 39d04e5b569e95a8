#include "backend/native/native_backend.h"

#include "backend/native/batch_run.h"
#include "thund/validate.h"

namespace thund::native {

std::shared_ptr<NativeBackend> NativeBackend::Make() { return std::make_shared<NativeBackend>(); }

Capabilities NativeBackend::capabilities() const {
  Capabilities c;
  c.supported = {"batch-sql",          "source:files",         "once",
                 "expectations:warn",  "expectations:drop",    "expectations:fail",
                 "materialization:incremental",                "sink:parquet",
                 "sink:csv",           "sink:json"};
  return c;
}

Diagnostics NativeBackend::Check(const Pipeline& p) const {
  Diagnostics out;
  const Capabilities caps = capabilities();
  for (const auto& f : p.flows) {
    for (const auto& cap : RequiredCapabilities(p, f)) {
      if (caps.Supports(cap)) continue;
      Diagnostic d;
      d.severity = Severity::kError;
      d.code = "backend-unsupported";
      d.flow = f.name;
      d.dataset = f.target;
      d.location = f.location;
      d.message = "flow '" + f.name + "' needs '" + cap +
                  "', which the native batch engine does not run yet";
      d.hint = cap.rfind("sink:", 0) == 0
                   ? "use a parquet, csv or json sink"
                   : "remove the flow from the batch pipeline, or run it on a backend that "
                     "supports it (see docs/status.md)";
      out.push_back(std::move(d));
    }
  }
  for (const auto& d : p.datasets) {
    if (!d.storage.partition_by.empty()) {
      Diagnostic w;
      w.severity = Severity::kWarning;
      w.code = "backend-ignored";
      w.dataset = d.name;
      w.location = d.location;
      w.message = "dataset '" + d.name +
                  "': partition_by is ignored by the native batch engine (files are not "
                  "partitioned)";
      out.push_back(std::move(w));
    }
  }
  return out;
}

arrow::Result<RunSummary> NativeBackend::Run(const Pipeline& p, const RunOptions& options) {
  return RunBatch(*this, p, options);
}

std::string ResolveStorageRoot(const Pipeline& p, const std::string& override_root) {
  if (!override_root.empty()) return override_root;
  if (!p.storage.empty()) return p.storage;
  return ".thund/" + (p.name.empty() ? std::string("pipeline") : p.name);
}

}  // namespace thund::native
