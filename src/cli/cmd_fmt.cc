// `thund fmt`: print (or rewrite) a pipeline in its canonical form.
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "thund/pipeline_file.h"

namespace thund::cli {
namespace {

struct FmtOptions {
  std::string path;
  std::string to = "yaml";  // yaml | json | sql
  bool write = false;       // rewrite the file in place
  bool check = false;       // exit 1 when the file is not in canonical form
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

}  // namespace

void RegisterFmt(CLI::App& app, int* exit_code) {
  auto o = std::make_shared<FmtOptions>();
  auto* f = app.add_subcommand("fmt", "Print a pipeline in canonical form (idempotent).");
  f->add_option("PATH", o->path, "pipeline file (.yaml, .yml, .json)")->required();
  f->add_option("--to", o->to, "output surface")->check(CLI::IsMember({"yaml", "json", "sql"}));
  auto* w = f->add_flag("-w,--write", o->write, "rewrite PATH in place");
  f->add_flag("--check", o->check, "exit 1 when PATH is not in canonical form")->excludes(w);
  f->callback([o, exit_code] { *exit_code = RunFmt(*o); });
}

}  // namespace thund::cli
