// The DuckDB database + connection a session runs SQL on, shared with the streaming
// readers it hands out so that a reader can never outlive its connection.
#pragma once

#include <arrow/status.h>

#include <atomic>

#include "engine/duckdb/duckdb_handles.h"

namespace thund::engine::duckdb_internal {

struct SessionCore {
  // Declaration order matters: members are destroyed in reverse, so the connection is
  // closed before the database.
  DatabaseHandle database;
  ConnectionHandle connection;

  // The streaming reader currently reading from `connection`, if any. Running another
  // statement would make DuckDB close that stream, and the reader could not tell the
  // early end from the real one (rows would be lost silently), so the session refuses
  // to run statements while this is set.
  std::atomic<const void*> open_stream{nullptr};

  arrow::Status CheckNoOpenStream() const {
    if (open_stream.load() != nullptr) {
      return arrow::Status::Invalid(
          "a streaming query result of this session is still open; read it to the end or "
          "Close() it before running another statement");
    }
    return arrow::Status::OK();
  }
};

}  // namespace thund::engine::duckdb_internal
