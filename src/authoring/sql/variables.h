// Internal: Spark's variable substitution in the SQL files of an SDP project.
// Spark replaces `${key}` in a statement's text by the value of `key` in the
// session's configuration (an SDP pipeline's is its spec's `configuration`)
// before parsing. thund does the same to a library file's text before
// ParseSql, so the IR holds the SQL as it runs, with the values in it.
//
// Like Spark: a reference is `${` + a key without whitespace + `}`; it is
// replaced anywhere in the text (strings and comments too); `${spark:key}`,
// `${sparkconf:key}`, `${hiveconf:key}` and `${hivevar:key}` read `key`; a value
// may itself hold references (expanded in turn, a cycle is an error).
// Unlike Spark, which leaves an undefined `${key}` in the text (where it is a
// syntax error), an undefined key in SQL code is an error naming the key, its
// file:line:col and the keys the configuration defines; inside a string
// literal or a quoted name it stays as written with a warning (there it is
// valid SQL), inside a comment silently. `${env:...}` and `${system:...}` are
// errors (thund reads no environment into SQL). Not public API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "thund/diagnostic.h"
#include "thund/ir.h"
#include "thund/pipeline_file.h"

namespace thund::sqlp {

class Substitution {
 public:
  // Substitutes the references in `text` (the content of `file`). Problems
  // are diagnostics with code "sql-variable" located in the original text.
  static Substitution Apply(std::string_view text, const std::string& file,
                            const StringMap& configuration);

  const std::string& text() const { return text_; }
  const Diagnostics& diagnostics() const { return diagnostics_; }
  bool changed() const { return !spans_.empty(); }

  // Moves every location of `file` in `part` (diagnostics, datasets,
  // expectations, flows) from positions in text() to the same place in the
  // original text (a position inside a replaced value goes to its `${`).
  void MapBack(ParseResult* part) const;

 private:
  struct Span {  // one replaced reference
    size_t original_begin, original_end, begin, end;
  };
  SourceLocation Original(const SourceLocation& loc) const;

  std::string original_;
  std::string file_;
  std::string text_;
  std::vector<Span> spans_;
  Diagnostics diagnostics_;
};

}  // namespace thund::sqlp
