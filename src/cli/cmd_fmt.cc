// `thund fmt`: print (or rewrite) a pipeline in its canonical form.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/commands.h"
#include "cli/loaded.h"
#include "thund/load.h"
#include "thund/pipeline_file.h"
#include "thund/sql_pipeline.h"

namespace thund::cli {
namespace {

struct FmtOptions {
  std::string path;
  std::string to;           // yaml | sql; "" = the surface PATH is written in
  bool write = false;       // rewrite the file in place
  bool check = false;       // exit 1 when the file is not in canonical form
};

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsSdpSpec(const std::string& path) {
  std::string base = std::filesystem::path(path).filename().string();
  return base == "spark-pipeline.yml" || base == "spark-pipeline.yaml";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int RunFmt(const FmtOptions& o) {
  const bool single_file = !std::filesystem::is_directory(o.path) && !IsSdpSpec(o.path);
  if ((o.write || o.check) && !single_file) {
    std::cerr << "error: --write and --check need a single pipeline or .sql file; " << o.path
              << " is an SDP project (format its .sql files one by one)\n";
    return kUsage;
  }
  ParseResult r = LoadPipeline(o.path);
  if (!r.ok()) {
    Loaded l;
    l.diagnostics = r.diagnostics;
    l.sources[o.path] = Slurp(o.path);
    PrintDiagnosticsHuman(l, std::cerr);
    std::cerr << "not formatted: the file has errors\n";
    return kFailed;
  }
  std::string to = o.to;
  if (to.empty()) to = EndsWith(o.path, ".sql") || !single_file ? "sql" : "yaml";
  const std::string text = to == "sql" ? FormatSql(r.pipeline) : FormatPipelineFile(r.pipeline);
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
  f->add_option("PATH", o->path, "pipeline file (.yaml/.yml/.json), .sql file, spark-pipeline.yml, or a directory holding one")->required();
  f->add_option("--to", o->to, "output surface (default: the input's)")
      ->check(CLI::IsMember({"yaml", "sql"}));
  auto* w = f->add_flag("-w,--write", o->write, "rewrite PATH in place");
  f->add_flag("--check", o->check, "exit 1 when PATH is not in canonical form")->excludes(w);
  f->callback([o, exit_code] { *exit_code = RunFmt(*o); });
}

}  // namespace thund::cli
