// `thund fmt`: print (or rewrite) a pipeline in its canonical form.
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "thund/pipeline_file.h"

namespace thund::cli {
namespace {

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

int RunFmt(const FmtOptions& o) {
  ParseResult r = LoadPipelineFile(o.path);
  if (!r.ok()) {
    Loaded l;
    l.diagnostics = r.diagnostics;
    l.sources[o.path] = Slurp(o.path);
    PrintDiagnosticsHuman(l, std::cerr);
    std::cerr << "not formatted: the file has errors\n";
    return kFailed;
  }
  std::string text;
  if (o.to == "yaml") {
    text = FormatPipelineFile(r.pipeline);
  } else {
    std::cerr << "error: --to " << o.to << " is not available yet; use --to yaml\n";
    return kUsage;
  }
  if (o.check) {
    if (Slurp(o.path) == text) return kOk;
    std::cerr << o.path << ": not in canonical form (run `thund fmt --write " << o.path << "`)\n";
    return kFailed;
  }
  if (o.write) {
    std::string tmp = o.path + ".thund-fmt.tmp";
    {
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      out << text;
      if (!out) {
        std::cerr << "error: cannot write " << tmp << "\n";
        return kFailed;
      }
    }
    if (std::rename(tmp.c_str(), o.path.c_str()) != 0) {
      std::cerr << "error: cannot replace " << o.path << "\n";
      return kFailed;
    }
    return kOk;
  }
  std::cout << text;
  return kOk;
}

}  // namespace thund::cli
