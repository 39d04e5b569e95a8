// Internal: one SQL tokenizer shared by the Spark -> DuckDB translation
// (sql_dialect.cc) and the SDP SQL parser (authoring/sql/). Not public API.
//
// The lexer accepts the union of Spark SQL and DuckDB lexical forms:
//   * identifiers: bare words, `back-quoted` (Spark), "double-quoted" (kept as
//     their own kind: Spark reads them as strings, DuckDB as identifiers; the
//     consumer decides);
//   * strings: '...' with Spark backslash escapes and SQL '' doubling, r'...'
//     raw strings (Spark);
//   * numbers with Spark type suffixes (10L, 1.5D, 2BD, ...);
//   * -- line comments and nested /* */ block comments (skipped);
//   * multi-character operators (<=>, ->, =>, ::, :=, <=, >=, <>, !=, ==, ||,
//     |>, <<, >>).
// Token positions are byte offsets into the input plus 1-based line:column, so
// callers can rewrite the text in place (everything between tokens, comments
// included, is kept verbatim) and report errors with a caret.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace thund::sql {

enum class TokKind {
  kIdent,        // bare word (also every keyword)
  kQuotedIdent,  // "..."
  kBacktick,     // `...`
  kString,       // '...'
  kRawString,    // r'...'
  kNumber,       // 10, 1.5, 1e3, 10L, .5
  kOp,           // punctuation and operators
};

struct Token {
  TokKind kind = TokKind::kOp;
  size_t begin = 0;  // byte offset of the first character
  size_t end = 0;    // one past the last character
  int line = 1;
  int column = 1;
  std::string_view text;  // view into the lexed input (valid while it lives)
};

struct LexError {
  std::string message;
  size_t offset = 0;
  int line = 1;
  int column = 1;
};

struct LexResult {
  std::vector<Token> tokens;
  std::optional<LexError> error;  // tokens hold everything before the error
};

// Tokenizes `text`. Whitespace and comments produce no tokens.
LexResult Lex(std::string_view text);

// True when `t` is a bare word equal to `word` ignoring ASCII case.
bool IsWord(const Token& t, std::string_view word);
// True when `t` is the operator `op`.
bool IsOp(const Token& t, std::string_view op);
bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::string ToLower(std::string_view s);

// The name an identifier token denotes: bare words as written, quoted forms
// unquoted and unescaped.
std::string IdentifierName(const Token& t);
bool IsIdentifier(const Token& t);  // kIdent, kQuotedIdent or kBacktick

// The value of a string token ('...', r'...' or "..."), Spark escapes applied.
std::string StringValue(const Token& t);
bool IsStringToken(const Token& t);  // kString or kRawString

// Quotes `s` as a SQL string literal that both Spark and DuckDB read back as
// `s`... as far as possible: quotes are doubled (''), which both accept.
// Backslashes are written as-is, so use SparkStringLiteral for text that
// Spark's lexer must read back exactly.
std::string DuckDbStringLiteral(std::string_view s);
// Quotes `s` for Spark's lexer: ' and \ escaped with a backslash, control
// characters as \n, \t, \r.
std::string SparkStringLiteral(std::string_view s);

// 1-based line/column of a byte offset.
void LineColumn(std::string_view text, size_t offset, int* line, int* column);

// Index of the token closing the bracket opened at tokens[open] ("(" / "[" /
// "{"), or tokens.size() when unbalanced.
size_t MatchingClose(const std::vector<Token>& tokens, size_t open);

// Splits the tokens in (open, close) into top-level comma-separated ranges
// [first, last) of token indices. An empty range list for "()".
std::vector<std::pair<size_t, size_t>> SplitArgs(const std::vector<Token>& tokens, size_t open,
                                                 size_t close);

// The source text covering tokens [first, last) (comments in between kept).
std::string_view TextOf(std::string_view text, const std::vector<Token>& tokens, size_t first,
                        size_t last);

}  // namespace thund::sql
