#include <iostream>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "thund/diagnostic.h"

namespace thund::cli {

int RunCheck(const CheckOptions& o) {
  Loaded l = LoadAndValidate(o.path);
  const bool ok = !HasErrors(l.diagnostics);
  if (o.format == "json") {
    std::cout << DiagnosticsJson(l.diagnostics) << "\n";
  } else {
    PrintDiagnosticsHuman(l, std::cerr);
    if (ok) {
      std::cout << o.path << ": ok (" << l.pipeline.datasets.size() << " datasets, "
                << l.pipeline.flows.size() << " flows)\n";
    }
  }
  return ok ? kOk : kFailed;
}

}  // namespace thund::cli
