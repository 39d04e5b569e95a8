// CheckSqlFunctions: functions in flow bodies and expectations that DuckDB
// does not have, located in the source file when it can be read.
#include <fstream>
#include <map>
#include <sstream>

#include "authoring/sql/sql_internal.h"
#include "thund/sql_dialect.h"
#include "thund/sql_pipeline.h"

namespace thund {
namespace {

class FileCache {
 public:
  const std::string* Get(const std::string& file) {
    auto it = files_.find(file);
    if (it != files_.end()) return it->second ? &*it->second : nullptr;
    std::ifstream in(file, std::ios::binary);
    std::optional<std::string> text;
    if (in) {
      std::stringstream buf;
      buf << in.rdbuf();
      text = buf.str();
    }
    auto& slot = files_[file] = std::move(text);
    return slot ? &*slot : nullptr;
  }

 private:
  std::map<std::string, std::optional<std::string>> files_;
};

size_t OffsetOf(const std::string& text, int line, int column) {
  size_t off = 0;
  for (int l = 1; l < line && off < text.size(); ++l) {
    off = text.find('\n', off);
    if (off == std::string::npos) return text.size();
    ++off;
  }
  return std::min(text.size(), off + static_cast<size_t>(std::max(column, 1) - 1));
}

// Where `fn(` appears in `body`, which is written in the file at or after
// `from`; unknown -> `fallback`.
SourceLocation Locate(FileCache* files, const SourceLocation& fallback, const std::string& body,
                      const std::string& fn) {
  if (!fallback.known()) return fallback;
  const std::string* text = files->Get(fallback.file);
  if (!text) return fallback;
  size_t at = text->find(body, OffsetOf(*text, fallback.line, fallback.column));
  if (at == std::string::npos) return fallback;
  sql::LexResult lex = sql::Lex(body);
  for (size_t i = 0; i + 1 < lex.tokens.size(); ++i) {
    if (sql::EqualsIgnoreCase(lex.tokens[i].text, fn) && sql::IsOp(lex.tokens[i + 1], "(")) {
      SourceLocation loc = fallback;
      sql::LineColumn(*text, at + lex.tokens[i].begin, &loc.line, &loc.column);
      return loc;
    }
  }
  return fallback;
}

Diagnostic Unknown(const std::string& fn, SourceLocation loc) {
  Diagnostic d;
  d.code = "unknown-function";
  d.location = std::move(loc);
  d.message = "function '" + fn + "' does not exist in DuckDB, and thund has no translation for it";
  d.hint = "use a DuckDB function instead; docs/sql.md lists the Spark functions thund translates";
  return d;
}

// The check could not be made (DuckDB ran out of memory or failed; parse
// errors are reported by validation and are not this).
bool CheckFailed(const arrow::Status& st) {
  return st.IsOutOfMemory() || st.message().rfind("DuckDB failed while", 0) == 0;
}

Diagnostic Failed(const arrow::Status& st, SourceLocation loc, const std::string& what) {
  Diagnostic d;
  d.code = "sql-check-failed";
  d.location = std::move(loc);
  d.message = "the function check of " + what + " could not be made: " + st.message();
  d.hint = "simplify the query; if it is small, please report it";
  return d;
}

}  // namespace

Diagnostics CheckSqlFunctions(const Pipeline& p) {
  Diagnostics out;
  FileCache files;
  for (const Flow& f : p.flows) {
    if (f.sql.empty()) continue;
    auto unknown = UnknownSqlFunctions(f.sql);
    if (!unknown.ok() && CheckFailed(unknown.status())) {
      Diagnostic d = Failed(unknown.status(), f.location, "flow '" + f.name + "'");
      d.flow = f.name;
      d.dataset = f.target;
      out.push_back(std::move(d));
    }
    if (!unknown.ok()) continue;
    for (const auto& fn : *unknown) {
      Diagnostic d = Unknown(fn, Locate(&files, f.location, f.sql, fn));
      d.flow = f.name;
      d.dataset = f.target;
      out.push_back(std::move(d));
    }
  }
  for (const Dataset& ds : p.datasets) {
    for (const Expectation& e : ds.expectations) {
      if (e.predicate.empty()) continue;
      auto unknown = UnknownSqlFunctions("SELECT 1 WHERE (" + e.predicate + ")");
      if (!unknown.ok() && CheckFailed(unknown.status())) {
        Diagnostic d = Failed(unknown.status(), e.location, "expectation '" + e.name + "'");
        d.dataset = ds.name;
        out.push_back(std::move(d));
      }
      if (!unknown.ok()) continue;
      for (const auto& fn : *unknown) {
        Diagnostic d = Unknown(fn, Locate(&files, e.location, e.predicate, fn));
        d.dataset = ds.name;
        d.message += " (expectation '" + e.name + "')";
        out.push_back(std::move(d));
      }
    }
  }
  return out;
}

}  // namespace thund
