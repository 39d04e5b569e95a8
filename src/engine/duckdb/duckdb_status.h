// DuckDB errors as arrow::Status.
//
// Every DuckDB failure crossing the data-plane boundary becomes an arrow::Status whose
// message is DuckDB's own message (which, for SQL errors, includes DuckDB's
// "LINE n: ..." excerpt), prefixed with what we were doing. The DuckDB error class and
// the raw message travel in a DuckDbErrorDetail so callers (e.g. the batch engine
// mapping a SQL error back to a flow and its source location) need not parse text.
//
// Mapping of duckdb_error_type to arrow::StatusCode:
//   parser/syntax/binder/catalog/conversion/constraint/... (user errors) -> Invalid
//   IO, HTTP, network, permission                                         -> IOError
//   out of memory                                                         -> OutOfMemory
//   interrupt                                                             -> Cancelled
//   not implemented                                                       -> NotImplemented
//   internal, fatal                                                       -> UnknownError
#pragma once

#include <arrow/status.h>
#include <duckdb.h>

#include <memory>
#include <string>
#include <string_view>

namespace thund::engine {

class DuckDbErrorDetail : public arrow::StatusDetail {
 public:
  static constexpr const char kTypeId[] = "thund::engine::DuckDbErrorDetail";

  DuckDbErrorDetail(duckdb_error_type type, std::string message)
      : type_(type), message_(std::move(message)) {}

  const char* type_id() const override { return kTypeId; }
  std::string ToString() const override;

  duckdb_error_type error_type() const { return type_; }
  // DuckDB's message, verbatim.
  const std::string& message() const { return message_; }

 private:
  duckdb_error_type type_;
  std::string message_;
};

// The DuckDbErrorDetail attached to `st`, or nullptr.
const DuckDbErrorDetail* GetDuckDbErrorDetail(const arrow::Status& st);

// Builds the Status for a DuckDB error. `context` says what we were doing
// (e.g. "query failed"); the result message is "<context>: <message>".
arrow::Status DuckDbError(duckdb_error_type type, std::string_view message,
                          std::string_view context);

// Some DuckDB C-API calls report errors as JSON ({"exception_type":..,
// "exception_message":..}); this returns "<type>: <message>" for those and the input
// unchanged otherwise.
std::string ReadableDuckDbMessage(std::string_view message);

// Converts and destroys `error` (which may be null: returns OK).
arrow::Status ConsumeErrorData(duckdb_error_data error, std::string_view context);

}  // namespace thund::engine
