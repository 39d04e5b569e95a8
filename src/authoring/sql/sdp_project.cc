// SDP projects: finding and reading spark-pipeline.yml, expanding its library
// globs, and parsing every matched .sql file into one Pipeline.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "authoring/python/python_library.h"
#include "authoring/sql/parser.h"
#include "authoring/sql/variables.h"
#include "thund/sql_pipeline.h"
#include "thund/utf8.h"

namespace thund {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSpecNames[] = {"spark-pipeline.yml", "spark-pipeline.yaml"};

bool ReadFile(const fs::path& p, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::stringstream buf;
  buf << in.rdbuf();
  *out = buf.str();
  return true;
}

Diagnostic Error(std::string file, int line, int column, std::string code, std::string message,
                 std::string hint = "", std::string field = "") {
  Diagnostic d;
  d.location = {std::move(file), line, column};
  d.code = std::move(code);
  d.message = std::move(message);
  d.hint = std::move(hint);
  d.field_path = std::move(field);
  return d;
}

SourceLocation Where(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  if (m.line < 0) return {file, 0, 0};
  return {file, m.line + 1, m.column + 1};
}

bool HasMagic(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// fnmatch for one path component: * ? [abc] [!a-z].
bool MatchComponent(std::string_view pat, std::string_view name) {
  if (pat.empty()) return name.empty();
  if (pat[0] == '*') {
    for (size_t i = 0; i <= name.size(); ++i) {
      if (MatchComponent(pat.substr(1), name.substr(i))) return true;
    }
    return false;
  }
  if (name.empty()) return false;
  if (pat[0] == '?') return MatchComponent(pat.substr(1), name.substr(1));
  if (pat[0] == '[') {
    size_t close = pat.find(']', 2);
    if (close != std::string_view::npos) {
      std::string_view set = pat.substr(1, close - 1);
      bool negate = !set.empty() && (set[0] == '!' || set[0] == '^');
      if (negate) set.remove_prefix(1);
      bool hit = false;
      for (size_t i = 0; i < set.size(); ++i) {
        if (i + 2 < set.size() && set[i + 1] == '-') {
          hit = hit || (name[0] >= set[i] && name[0] <= set[i + 2]);
          i += 2;
        } else {
          hit = hit || name[0] == set[i];
        }
      }
      return hit != negate && MatchComponent(pat.substr(close + 1), name.substr(1));
    }
  }
  return pat[0] == name[0] && MatchComponent(pat.substr(1), name.substr(1));
}

bool MatchPath(const std::vector<std::string>& pat, size_t pi, const std::vector<std::string>& path,
               size_t qi) {
  if (pi == pat.size()) return qi == path.size();
  if (pat[pi] == "**") {
    for (size_t k = qi; k <= path.size(); ++k) {
      if (MatchPath(pat, pi + 1, path, k)) return true;
    }
    return false;
  }
  if (qi == path.size()) return false;
  return MatchComponent(pat[pi], path[qi]) && MatchPath(pat, pi + 1, path, qi + 1);
}

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '/') {
      if (!cur.empty() && cur != ".") out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty() && cur != ".") out.push_back(cur);
  return out;
}

// Files under `root` matching `pattern` (relative, '/'-separated), sorted.
std::vector<fs::path> Glob(const fs::path& root, std::string pattern) {
  // As spark-pipelines does: "dir/**" means every file under dir.
  if (pattern.size() >= 3 && pattern.substr(pattern.size() - 3) == "/**") pattern += "/*";
  std::vector<std::string> pat = Split(pattern);
  std::vector<fs::path> out;
  if (pat.empty()) return out;
  // Walk only below the pattern's literal prefix.
  fs::path base = root;
  size_t fixed = 0;
  while (fixed + 1 < pat.size() && !HasMagic(pat[fixed])) base /= pat[fixed++];
  std::error_code ec;
  if (!HasMagic(pattern)) {
    fs::path p = root / pattern;
    if (fs::is_regular_file(p, ec)) out.push_back(p);
    return out;
  }
  if (!fs::is_directory(base, ec)) return out;
  for (auto it = fs::recursive_directory_iterator(
           base, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (it->path().filename() == "__pycache__") {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(ec)) continue;
    std::vector<std::string> rel = Split(fs::relative(it->path(), root, ec).generic_string());
    if (MatchPath(pat, 0, rel, 0)) out.push_back(it->path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool LooksLikeSdpSpec(const std::string& text) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) return false;
    return root["libraries"] && !root["datasets"] && !root["flows"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

std::string FindSdpSpec(const std::string& dir, Diagnostics* problem) {
  std::error_code ec;
  fs::path cur = fs::absolute(dir, ec);
  while (true) {
    std::vector<fs::path> found;
    for (const char* n : kSpecNames) {
      if (fs::is_regular_file(cur / n, ec)) found.push_back(cur / n);
    }
    if (found.size() > 1) {
      if (problem) {
        problem->push_back(
            Error(cur.string(), 0, 0, "sdp-spec",
                  "both spark-pipeline.yml and spark-pipeline.yaml are in " + cur.string(),
                  "keep one of them"));
      }
      return "";
    }
    if (found.size() == 1) {
      // Shown relative to the working directory when it lies below it.
      fs::path shown = found[0].lexically_proximate(fs::current_path(ec));
      return (shown.empty() || shown.generic_string().rfind("..", 0) == 0 ? found[0] : shown)
          .generic_string();
    }
    if (!cur.has_parent_path() || cur.parent_path() == cur) return "";
    cur = cur.parent_path();
  }
}

ParseResult LoadSdpProject(const std::string& spec_or_dir) {
  ParseResult result;
  auto& diags = result.diagnostics;
  std::error_code ec;
  std::string spec_path = spec_or_dir;
  if (fs::is_directory(spec_or_dir, ec)) {
    spec_path = FindSdpSpec(spec_or_dir, &diags);
    if (spec_path.empty()) {
      if (diags.empty()) {
        diags.push_back(Error(spec_or_dir, 0, 0, "sdp-spec",
                              "no spark-pipeline.yml in " + spec_or_dir + " or its parents",
                              "give a .sql file, a spark-pipeline.yml, or a pipeline file"));
      }
      return result;
    }
  }
  // Diagnostics name files relative to where the user pointed us.
  std::string text;
  if (!ReadFile(spec_path, &text)) {
    diags.push_back(Error(spec_path, 0, 0, "io", "cannot read " + spec_path));
    return result;
  }
  auto bad = Utf8Diagnostic(text, spec_path);
  if (!bad) bad = ControlCharacterDiagnostic(text, spec_path, /*nul_only=*/false);
  if (bad) {
    diags.push_back(std::move(*bad));
    return result;
  }
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    diags.push_back(Error(spec_path, e.mark.line + 1, e.mark.column + 1, "sdp-spec",
                          "spark-pipeline.yml is not valid YAML: " + e.msg));
    return result;
  }
  Pipeline& p = result.pipeline;
  p.location = {spec_path, 0, 0};
  if (!root.IsMap()) {
    diags.push_back(Error(spec_path, 1, 1, "sdp-spec", "spark-pipeline.yml must be a mapping",
                          "write name:, storage: and libraries: keys"));
    return result;
  }
  static const std::vector<std::string_view> kFields = {
      "name", "storage", "catalog", "database", "schema", "configuration", "libraries"};
  auto scalar = [&](const char* key, std::string* out) {
    YAML::Node n = root[key];
    if (!n || n.IsNull()) return;
    if (!n.IsScalar()) {
      auto w = Where(spec_path, n);
      diags.push_back(Error(spec_path, w.line, w.column, "sdp-spec",
                            std::string("'") + key + "' must be a string", "", key));
      return;
    }
    *out = n.as<std::string>();
  };
  for (const auto& kv : root) {
    std::string key = kv.first.as<std::string>();
    if (std::find(kFields.begin(), kFields.end(), key) == kFields.end()) {
      auto w = Where(spec_path, kv.first);
      std::string guess = sqlp::DidYouMean(key, kFields);
      diags.push_back(Error(spec_path, w.line, w.column, "sdp-spec",
                            "spark-pipeline.yml has no field '" + key + "'",
                            guess.empty() ? "the fields are name, storage, catalog, database "
                                            "(or schema), configuration and libraries"
                                          : "did you mean '" + guess + "'?",
                            key));
    }
  }
  scalar("name", &p.name);
  scalar("storage", &p.storage);
  scalar("catalog", &p.catalog);
  std::string schema;
  scalar("database", &p.database);
  scalar("schema", &schema);
  if (p.database.empty()) p.database = schema;
  for (const char* required : {"name", "storage"}) {
    if (!root[required]) {
      diags.push_back(Error(spec_path, 1, 1, "sdp-spec",
                            std::string("spark-pipeline.yml needs '") + required + "'",
                            std::string("add e.g. ") + required +
                                (std::string(required) == "name" ? ": my_pipeline" : ": ./storage"),
                            required));
    }
  }
  if (YAML::Node conf = root["configuration"]; conf && !conf.IsNull()) {
    if (!conf.IsMap()) {
      auto w = Where(spec_path, conf);
      diags.push_back(Error(spec_path, w.line, w.column, "sdp-spec",
                            "configuration must map names to strings", "", "configuration"));
    } else {
      for (const auto& kv : conf) {
        if (!kv.second.IsScalar()) {
          auto w = Where(spec_path, kv.second);
          diags.push_back(Error(spec_path, w.line, w.column, "sdp-spec",
                                "configuration values must be strings", "",
                                "configuration." + kv.first.as<std::string>()));
          continue;
        }
        p.configuration[kv.first.as<std::string>()] = kv.second.as<std::string>();
      }
    }
  }
  // ${key} in library files reads the spec's configuration (not SET).
  const StringMap spec_configuration = p.configuration;
  const fs::path root_dir = fs::path(spec_path).parent_path();
  std::set<fs::path> seen;
  std::vector<std::string> python_files;
  YAML::Node libs = root["libraries"];
  if (libs && !libs.IsNull() && !libs.IsSequence()) {
    auto w = Where(spec_path, libs);
    diags.push_back(Error(spec_path, w.line, w.column, "sdp-spec",
                          "libraries must be a list of '- glob: {include: pattern}'", "",
                          "libraries"));
  } else if (libs) {
    for (size_t i = 0; i < libs.size(); ++i) {
      const std::string field = "libraries[" + std::to_string(i) + "]";
      YAML::Node lib = libs[i];
      auto w = Where(spec_path, lib);
      if (!lib.IsMap() || !lib["glob"] || !lib["glob"].IsMap() || !lib["glob"]["include"] ||
          !lib["glob"]["include"].IsScalar()) {
        diags.push_back(Error(spec_path, w.line, w.column, "sdp-spec",
                              "each library is '- glob: {include: pattern}'", "", field));
        continue;
      }
      const std::string pattern = lib["glob"]["include"].as<std::string>();
      const bool spark_ok = !HasMagic(pattern) ||
                            (pattern.size() > 3 && pattern.substr(pattern.size() - 3) == "/**" &&
                             !HasMagic(pattern.substr(0, pattern.size() - 3)));
      if (!spark_ok) {
        Diagnostic d = Error(spec_path, w.line, w.column, "sdp-glob",
                             "spark-pipelines accepts only file paths and 'folder/**' patterns; '" +
                                 pattern + "' works in thund but not on Spark",
                             "use 'folder/**'", field + ".glob.include");
        d.severity = Severity::kWarning;
        diags.push_back(d);
      }
      std::vector<fs::path> files = Glob(root_dir, pattern);
      if (files.empty()) {
        Diagnostic d =
            Error(spec_path, w.line, w.column, "sdp-glob",
                  "library glob '" + pattern + "' matches no files", "", field + ".glob.include");
        d.severity = Severity::kWarning;
        diags.push_back(d);
      }
      for (const fs::path& file : files) {
        if (!seen.insert(file).second) continue;
        const std::string shown = file.generic_string();
        const std::string ext = file.extension().string();
        if (ext == ".py") {
          python_files.push_back(fs::absolute(file).lexically_normal().string());
          continue;
        }
        if (ext != ".sql") {
          diags.push_back(
              Error(shown, 0, 0, "sdp-library",
                    "unsupported library file " + shown + " (only .sql and .py are pipeline code)",
                    "narrow the glob in " + field));
          continue;
        }
        std::string sql;
        if (!ReadFile(file, &sql)) {
          diags.push_back(Error(shown, 0, 0, "io", "cannot read " + shown));
          continue;
        }
        SqlParseOptions opts;
        opts.project_library = true;
        opts.catalog = p.catalog;
        opts.database = p.database;
        const sqlp::Substitution vars = sqlp::Substitution::Apply(sql, shown, spec_configuration);
        for (const auto& d : vars.diagnostics()) diags.push_back(d);
        ParseResult part = ParseSql(vars.text(), shown, opts);
        vars.MapBack(&part);
        for (auto& d : part.pipeline.datasets) p.datasets.push_back(std::move(d));
        for (auto& f : part.pipeline.flows) p.flows.push_back(std::move(f));
        for (const auto& [k, v] : part.pipeline.configuration) {
          auto it = p.configuration.find(k);
          if (it != p.configuration.end() && it->second != v) {
            Diagnostic d = Error(shown, 0, 0, "sql-set-override",
                                 "SET " + k + " in " + shown + " replaces '" + it->second +
                                     "' from the spec or an earlier file",
                                 "thund keeps one value per key for the whole pipeline");
            d.severity = Severity::kWarning;
            diags.push_back(d);
          }
          p.configuration[k] = v;
        }
        for (auto& d : part.diagnostics) diags.push_back(std::move(d));
      }
    }
  }
  // Python definitions last: they may read what the SQL files define.
  LoadPythonLibraries(python_files, &p, &diags);
  return result;
}

}  // namespace thund
