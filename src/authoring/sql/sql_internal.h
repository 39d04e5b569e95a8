// Internal to the SQL authoring surface (src/authoring/sql/). Not public API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/result.h>

#include "sql/sql_lexer.h"
#include "sql/sql_structure.h"
#include "thund/ir.h"

namespace thund::sqlp {

using sql::Token;
using sql::TokKind;

// ------------------------------------------------------------- body analysis

// What a query body says beyond its SQL: a whole-query source read, a
// watermark, a time window, whether it reads a STREAM.
struct BodyInfo {
  bool reads_stream = false;
  std::optional<Watermark> watermark;
  std::optional<WindowSpec> window;
  std::optional<SourceSpec> source;
  std::vector<std::string> warnings;
};

struct BodyProblem {
  std::string message;
  std::string hint;
  size_t offset = 0;  // byte offset inside the body
};

struct BodyResult {
  BodyInfo info;
  std::optional<BodyProblem> problem;
};

BodyResult AnalyzeBody(std::string_view body);

// The StreamingSpec a body implies on its own: present when it has a
// WATERMARK clause, or a window and a STREAM read.
std::optional<StreamingSpec> ImpliedStreaming(const BodyInfo& info);

// ------------------------------------------------------------------ sources

// The source functions, e.g. "read_files".
bool IsSourceFunction(std::string_view name);

// Parses `fn(args)` (tokens[fn] is the name, tokens[close] the ")"), read with
// STREAM when `stream`. Fails with a message naming the argument at fault;
// `*at` receives the offending token index.
arrow::Result<SourceSpec> ParseSourceCall(std::string_view text, const std::vector<Token>& tokens,
                                          size_t fn, size_t close, bool stream, size_t* at);

// "STREAM read_kafka(...)" / "read_files(...)".
std::string FormatSourceCall(const SourceSpec& s);

// ------------------------------------------------------------------ quoting

// A name as SQL: bare when it is a plain identifier path (a.b.c) whose parts
// are not keywords, else `back-quoted` as one part.
std::string QuoteName(std::string_view name);
// One identifier part, back-quoted unless plain.
std::string QuoteIdent(std::string_view name);
bool IsPlainIdentifier(std::string_view s);

// A string literal Spark and thund read back exactly.
std::string Literal(std::string_view s);

// Durations in option values: FormatDuration, and a parser that also takes
// every int64 written as "<n>ms".
std::string DurationText(int64_t ms);
arrow::Result<int64_t> ParseDurationText(std::string_view text);

// True when `body` can be written verbatim after AS and read back exactly as
// the same SQL body (not as a source read): it lexes, has no top-level ';',
// no leading or trailing whitespace or comments, and `stop_words` (upper
// case) do not appear at depth 0.
bool VerbatimSafe(std::string_view body, const std::vector<std::string_view>& stop_words = {});

// Levenshtein distance, for "did you mean".
size_t EditDistance(std::string_view a, std::string_view b);
std::string DidYouMean(std::string_view word, const std::vector<std::string_view>& candidates);

}  // namespace thund::sqlp
