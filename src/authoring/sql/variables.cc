#include "authoring/sql/variables.h"

#include <cctype>
#include <optional>

#include "sql/sql_lexer.h"

namespace thund::sqlp {
namespace {

enum class Context { kCode, kQuoted, kComment };

// The lexical context of every byte of `text`: Spark's strings ('...',
// "...", backslash escapes; r'...' raw), `quoted names` and comments (-- to
// the end of the line, nested /* */). Unterminated forms run to the end.
std::vector<Context> Contexts(std::string_view text) {
  std::vector<Context> ctx(text.size(), Context::kCode);
  size_t i = 0;
  auto mark = [&](size_t from, size_t to, Context c) {
    for (size_t k = from; k < to && k < text.size(); ++k) ctx[k] = c;
  };
  while (i < text.size()) {
    const char c = text[i];
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    if (c == '-' && next == '-') {
      size_t end = text.find('\n', i);
      end = end == std::string_view::npos ? text.size() : end;
      mark(i, end, Context::kComment);
      i = end;
    } else if (c == '/' && next == '*') {
      size_t k = i + 2;
      int depth = 1;
      while (k < text.size() && depth > 0) {
        if (text[k] == '/' && k + 1 < text.size() && text[k + 1] == '*') {
          ++depth;
          k += 2;
        } else if (text[k] == '*' && k + 1 < text.size() && text[k + 1] == '/') {
          --depth;
          k += 2;
        } else {
          ++k;
        }
      }
      mark(i, k, Context::kComment);
      i = k;
    } else if (c == '\'' || c == '"' || c == '`') {
      const bool raw = c == '\'' && i > 0 && (text[i - 1] == 'r' || text[i - 1] == 'R') &&
                       (i == 1 || !(std::isalnum(static_cast<unsigned char>(text[i - 2])) ||
                                    text[i - 2] == '_'));
      const bool escapes = c != '`' && !raw;
      size_t k = i + 1;
      while (k < text.size() && text[k] != c) k += escapes && text[k] == '\\' ? 2 : 1;
      k = std::min(k + 1, text.size());
      mark(i, k, Context::kQuoted);
      i = k;
    } else {
      ++i;
    }
  }
  return ctx;
}

// The key a reference's content names, or nullopt for ${env:...} /
// ${system:...}.
std::optional<std::string> KeyOf(std::string_view content) {
  const size_t colon = content.find(':');
  if (colon != std::string_view::npos) {
    const std::string prefix = sql::ToLower(content.substr(0, colon));
    if (prefix == "spark" || prefix == "sparkconf" || prefix == "hiveconf" || prefix == "hivevar") {
      return std::string(content.substr(colon + 1));
    }
    if (prefix == "env" || prefix == "system") return std::nullopt;
  }
  return std::string(content);
}

// A reference starting at text[i] ("${"): the index one past its "}", or 0.
size_t ReferenceEnd(std::string_view text, size_t i) {
  if (text.substr(i, 2) != "${") return 0;
  for (size_t k = i + 2; k < text.size(); ++k) {
    const char c = text[k];
    if (c == '}') return k > i + 2 ? k + 1 : 0;
    if (std::isspace(static_cast<unsigned char>(c)) || c == '$' || c == '{') return 0;
  }
  return 0;
}

std::string DefinedKeys(const StringMap& conf) {
  if (conf.empty()) return "the spec's configuration defines no keys";
  std::string out = "the spec's configuration defines ";
  size_t n = 0;
  for (const auto& [k, v] : conf) {
    if (n == 12) {
      out += ", ... (" + std::to_string(conf.size() - n) + " more)";
      break;
    }
    out += (n++ ? ", " : "") + k;
  }
  return out;
}

struct Expander {
  const StringMap& conf;
  std::vector<std::string> chain;  // keys being expanded (cycle check)
  std::string problem;             // set when expansion failed

  // The value of `key` with the references inside it expanded.
  std::optional<std::string> Value(const std::string& key) {
    for (const auto& k : chain) {
      if (k == key) {
        problem = "${" + key + "} refers to itself through its value";
        return std::nullopt;
      }
    }
    auto it = conf.find(key);
    if (it == conf.end()) {
      problem = chain.empty() ? "" : "the value of ${" + chain.back() + "} uses ${" + key +
                                         "}, which configuration does not define";
      return std::nullopt;
    }
    chain.push_back(key);
    std::string out;
    const std::string& v = it->second;
    for (size_t i = 0; i < v.size();) {
      const size_t end = ReferenceEnd(v, i);
      if (end == 0) {
        out.push_back(v[i++]);
        continue;
      }
      auto inner_key = KeyOf(std::string_view(v).substr(i + 2, end - i - 3));
      auto inner = inner_key ? Value(*inner_key) : std::nullopt;
      if (!inner) {
        if (problem.empty()) problem = "the value of ${" + key + "} uses an undefined reference";
        return std::nullopt;
      }
      out += *inner;
      i = end;
    }
    chain.pop_back();
    return out;
  }
};

}  // namespace

Substitution Substitution::Apply(std::string_view text, const std::string& file,
                                 const StringMap& configuration) {
  Substitution s;
  s.original_ = std::string(text);
  s.file_ = file;
  if (text.find("${") == std::string_view::npos) {
    s.text_ = s.original_;
    return s;
  }
  const std::vector<Context> ctx = Contexts(text);
  auto diag = [&](Severity sev, size_t at, std::string message, std::string hint) {
    Diagnostic d;
    d.severity = sev;
    d.code = "sql-variable";
    d.message = std::move(message);
    d.hint = std::move(hint);
    d.location.file = file;
    sql::LineColumn(text, at, &d.location.line, &d.location.column);
    s.diagnostics_.push_back(std::move(d));
  };
  for (size_t i = 0; i < text.size();) {
    const size_t end = ReferenceEnd(text, i);
    if (end == 0) {
      s.text_.push_back(text[i++]);
      continue;
    }
    const std::string ref(text.substr(i, end - i));
    const std::optional<std::string> key = KeyOf(text.substr(i + 2, end - i - 3));
    Expander ex{configuration, {}, ""};
    std::optional<std::string> value = key ? ex.Value(*key) : std::nullopt;
    if (value) {
      s.spans_.push_back({i, end, s.text_.size(), s.text_.size() + value->size()});
      s.text_ += *value;
      i = end;
      continue;
    }
    // Not substituted: the reference stays as written.
    s.text_ += ref;
    i = end;
    const size_t at = i - ref.size();
    if (ctx[at] == Context::kComment) continue;
    if (!key) {
      diag(Severity::kError, at,
           ref + ": thund does not substitute environment or system properties",
           "put the value in the spec's configuration and write ${key}");
    } else if (!ex.problem.empty()) {
      diag(Severity::kError, at, ref + ": " + ex.problem, DefinedKeys(configuration));
    } else if (ctx[at] == Context::kQuoted) {
      diag(Severity::kWarning, at,
           ref + " is not defined in the spec's configuration; it stays as written in this "
                 "quoted text (as Spark leaves it)",
           DefinedKeys(configuration));
    } else {
      diag(Severity::kError, at,
           "${" + *key + "} is not defined: " + DefinedKeys(configuration),
           "add '" + *key + "' under configuration: in spark-pipeline.yml (Spark would leave " +
               ref + " in the SQL, where it does not parse)");
    }
  }
  return s;
}

SourceLocation Substitution::Original(const SourceLocation& loc) const {
  if (spans_.empty() || loc.file != file_ || !loc.known()) return loc;
  // Offset of (line, column) in text_.
  size_t offset = 0;
  for (int line = 1; line < loc.line && offset < text_.size(); ++offset) {
    if (text_[offset] == '\n') ++line;
  }
  offset = std::min(offset + static_cast<size_t>(std::max(loc.column, 1) - 1), text_.size());
  size_t original = offset;
  for (const Span& sp : spans_) {
    if (offset < sp.begin) break;
    if (offset < sp.end) {
      original = sp.original_begin;
      break;
    }
    original = offset - sp.end + sp.original_end;
  }
  SourceLocation out = loc;
  sql::LineColumn(original_, original, &out.line, &out.column);
  return out;
}

void Substitution::MapBack(ParseResult* part) const {
  if (spans_.empty()) return;
  for (Diagnostic& d : part->diagnostics) d.location = Original(d.location);
  for (Dataset& d : part->pipeline.datasets) {
    d.location = Original(d.location);
    for (Expectation& e : d.expectations) e.location = Original(e.location);
  }
  for (Flow& f : part->pipeline.flows) f.location = Original(f.location);
}

}  // namespace thund::sqlp
