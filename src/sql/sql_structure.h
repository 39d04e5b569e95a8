// Internal: the query-block structure of a token stream (which SELECT each
// token belongs to, and where each clause of a block starts), and interval
// literals. Shared by the Spark -> DuckDB translation and the SDP SQL parser.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <arrow/result.h>

#include "sql/sql_lexer.h"

namespace thund::sql {

constexpr size_t kNone = static_cast<size_t>(-1);

// One SELECT ... block: from the SELECT keyword up to the end of its query
// term (a closing parenthesis, a set operation, ";" or the end of the text).
struct Block {
  size_t select = 0;  // token index of SELECT
  size_t end = 0;     // exclusive
  int depth = 0;      // parenthesis depth of SELECT
  // Token index of each clause keyword at the block's own depth, or kNone.
  size_t from = kNone, where = kNone, group_by = kNone, having = kNone, qualify = kNone,
         window = kNone, order_by = kNone, limit = kNone;

  // Index one past the last token of the clause starting at `start` (the next
  // clause keyword of this block, or end).
  size_t ClauseEnd(size_t start) const;
};

struct Structure {
  std::vector<int> depth;  // per token: number of enclosing brackets
  std::vector<Block> blocks;
  std::vector<int> owner;  // per token: innermost block holding it, or -1
};

Structure Analyze(const std::vector<Token>& tokens);

// ---------------------------------------------------------------- intervals

struct IntervalValue {
  int64_t months = 0;
  int64_t days = 0;
  int64_t micros = 0;
  bool operator==(const IntervalValue&) const = default;
};

// An interval literal starting at tokens[i] (the INTERVAL keyword):
//   INTERVAL 10 SECONDS | INTERVAL '10' SECOND | INTERVAL '10 seconds'
//   INTERVAL 1 HOUR 30 MINUTES | INTERVAL -1.5 SECONDS
struct IntervalLiteral {
  IntervalValue value;
  size_t next = 0;             // token index after the literal
  int parts = 0;               // number of value/unit pairs written
  bool duckdb_native = false;  // DuckDB reads this text with the same meaning
};
// Fails (Invalid, naming what is wrong) when the tokens after INTERVAL are
// not a literal thund understands. A parenthesized value (DuckDB's
// INTERVAL (expr) DAY) is not a literal: NotImplemented is returned.
arrow::Result<IntervalLiteral> ParseIntervalLiteral(const std::vector<Token>& tokens, size_t i);

// Interval text as Spark's window() takes it: "10 seconds", "1 hour 30
// minutes", "interval 5 minutes", "500 milliseconds"; thund's "10s" style is
// accepted too.
arrow::Result<IntervalValue> ParseIntervalText(std::string_view text);

// The interval as a fixed number of microseconds (months are refused).
arrow::Result<int64_t> FixedMicros(const IntervalValue& v);

// A DuckDB expression for the interval, e.g. "INTERVAL '90 seconds'" or
// "to_microseconds(1500000)".
std::string DuckDbInterval(const IntervalValue& v);

}  // namespace thund::sql
