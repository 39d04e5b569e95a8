// LoadPipeline: one entry point for every pipeline surface (see load.h).
#include <filesystem>
#include <fstream>
#include <sstream>

#include "authoring/sql/sql_internal.h"
#include "thund/load.h"
#include "thund/sql_pipeline.h"

namespace thund {
namespace {

namespace fs = std::filesystem;

ParseResult OneError(const std::string& path, std::string code, std::string message,
                     std::string hint) {
  ParseResult r;
  Diagnostic d;
  d.location.file = path;
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  r.diagnostics.push_back(std::move(d));
  return r;
}

const char* kKinds =
    "give a .sql file, a spark-pipeline.yml, a directory holding one, or a pipeline file "
    "(.yaml, .yml or .json)";

}  // namespace

ParseResult LoadPipeline(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (!fs::exists(p, ec)) return OneError(path, "io", path + " does not exist", kKinds);
  if (fs::is_directory(p, ec)) {
    Diagnostics problem;
    std::string spec = FindSdpSpec(path, &problem);
    if (!problem.empty()) {
      ParseResult r;
      r.diagnostics = std::move(problem);
      return r;
    }
    if (spec.empty()) {
      return OneError(path, "no-pipeline", "no spark-pipeline.yml in " + path + " or its parents",
                      kKinds);
    }
    return LoadSdpProject(spec);
  }
  const std::string name = p.filename().string();
  std::string ext = p.extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (ext == ".sql") return LoadSqlFile(path);
  if (name == "spark-pipeline.yml" || name == "spark-pipeline.yaml") return LoadSdpProject(path);
  if (ext == ".yaml" || ext == ".yml" || ext == ".json") {
    std::ifstream in(p, std::ios::binary);
    if (!in) return OneError(path, "io", "cannot read " + path, "check that the file is readable");
    std::stringstream buf;
    buf << in.rdbuf();
    if (ext != ".json" && LooksLikeSdpSpec(buf.str())) return LoadSdpProject(path);
    return LoadPipelineFile(path);
  }
  return OneError(path, "no-pipeline", "cannot tell what kind of pipeline " + path + " is", kKinds);
}

}  // namespace thund
