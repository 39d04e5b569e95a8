// DuckDbSession: the native engine's SQL data plane.
//
// One in-process DuckDB database and connection. Arrow data goes in through
// RegisterArrow (zero-copy, via the Arrow C Data Interface and the thund_arrow_scan
// table function -- never duckdb_arrow_scan, see DESIGN.md §5) and results come out
// as Arrow (Query / QueryStream).
//
//   DuckDbSessionOptions options;
//   options.threads = 4;
//   ARROW_ASSIGN_OR_RAISE(auto session, DuckDbSession::Open(options));
//   ARROW_RETURN_NOT_OK(session->RegisterArrow("orders", orders_table));
//   ARROW_ASSIGN_OR_RAISE(auto totals,
//       session->Query("SELECT customer, sum(amount) FROM orders GROUP BY customer"));
//
// Thread-safety: a session is NOT thread-safe; call it from one thread at a time (use
// one session per thread for concurrency). DuckDB parallelizes each query internally
// over `threads` workers. Different sessions are fully independent.
//
// Errors: SQL errors come back as arrow::Status carrying DuckDB's message (with its
// "LINE n:" excerpt) and a DuckDbErrorDetail (see duckdb_status.h); user mistakes map
// to StatusCode::Invalid, I/O to IOError, memory exhaustion to OutOfMemory.
#pragma once

#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/status.h>
#include <arrow/table.h>

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace thund::engine {

namespace duckdb_internal {
class ArrowTableRegistry;
struct ConverterConnection;
struct SessionCore;
}  // namespace duckdb_internal

struct DuckDbSessionOptions {
  // DuckDB worker threads; 0 = DuckDB's default (one per hardware thread).
  int threads = 0;
  // DuckDB's memory limit, in DuckDB syntax ("4GB", "512MB"); empty = DuckDB's default
  // (80% of RAM). Beyond it DuckDB spills to temp_directory or fails with OutOfMemory.
  std::string memory_limit;
  // Where DuckDB spills; empty = DuckDB's default ("<database>.tmp", or ".tmp" in the
  // working directory for an in-memory database).
  std::string temp_directory;
  // Database file; empty = in-memory (the usual case: data lives in Arrow/Parquet).
  std::string database_path;
  // The session time zone (DuckDB's TimeZone setting): how TIMESTAMP WITH TIME ZONE
  // values are truncated, extracted and printed, and the zone Arrow results carry.
  // Defaults to "UTC" so results do not depend on the machine; empty = DuckDB's
  // default (the system zone).
  std::string time_zone = "UTC";
  // Let DuckDB scan registered Arrow data on several threads. Row order of queries
  // without ORDER BY is then unspecified; set false to scan in registration order.
  bool parallel_arrow_scan = true;
  // Re-registering an Arrow table under a name whose view already scans Arrow
  // data of the same schema only swaps the data (no CREATE VIEW), and
  // Release() keeps the view. Set false for the plain twin: every
  // registration re-creates the view, Release() drops it.
  bool reuse_arrow_views = true;
};

class DuckDbSession {
 public:
  // Opens the database and connection and installs the thund_arrow_scan function.
  // Fails (Invalid) on an option DuckDB rejects, naming it.
  static arrow::Result<std::unique_ptr<DuckDbSession>> Open(
      const DuckDbSessionOptions& options = {});

  ~DuckDbSession();
  DuckDbSession(const DuckDbSession&) = delete;
  DuckDbSession& operator=(const DuckDbSession&) = delete;

  // Runs one or more statements, discarding any result.
  arrow::Status Execute(std::string_view sql);

  // Runs one or more statements and returns the last one's result as a Table (one
  // chunk per DuckDB vector, <= 2048 rows each). Column types follow DuckDB's Arrow
  // export (e.g. VARCHAR -> utf8, TIMESTAMP -> timestamp[us], DECIMAL -> decimal128,
  // TIMESTAMP WITH TIME ZONE -> timestamp[us, tz=<session time zone>]).
  arrow::Result<std::shared_ptr<arrow::Table>> Query(std::string_view sql);

  // Runs `sql` (e.g. a count, or COPY, which returns the rows written) and
  // returns the first column of its one row as an integer. Invalid when the
  // result is not one row, or the value is NULL or not an integer.
  arrow::Result<int64_t> QueryInt64(std::string_view sql);

  // Runs exactly one statement as a streaming query and returns a reader that
  // produces its rows as they are computed. While the reader is open (until it has
  // returned its end -- a null batch --, is closed or destroyed), every other statement
  // on this session (Execute, Query, QueryStream, RegisterArrow, Unregister) fails with
  // Invalid: DuckDB would otherwise end the stream early and indistinguishably from
  // its real end. The reader may outlive the session.
  arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> QueryStream(std::string_view sql);

  // Makes `table` queryable as `name` (a temporary view over
  // thund_arrow_scan('name')). Zero-copy: the session keeps the table alive until it
  // is unregistered, replaced or the session is destroyed; queries running at that
  // moment keep it alive until they finish. Registering an existing name replaces it
  // (names are case-insensitive, like all DuckDB identifiers).
  // Fails, leaving any previous registration in place, when `name` is empty, when a
  // column type has no DuckDB equivalent (NotImplemented naming the column: halffloat,
  // decimal256, unions), when two column names differ only by case, when a
  // timestamp[ns, tz] / time64[ns] / duration[ns] / month_day_nano value has a
  // sub-microsecond part DuckDB would truncate (arrow_precision_check.h), or when
  // `name` is taken by a table DuckDB owns.
  // Supported and tested: int8..64, uint8..64, float, double, bool, utf8, large_utf8,
  // utf8_view, binary, large_binary, fixed_size_binary, date32, timestamp s/ms/us/ns
  // with and without time zone, time64, decimal32/128, list, large_list,
  // fixed_size_list, struct, map, month_day_nano_interval, dictionary, run-end
  // encoded. REQUIRES: the caller does not mutate the buffers while registered.
  arrow::Status RegisterArrow(const std::string& name, const std::shared_ptr<arrow::Table>& table);
  // Same, for batches sharing `schema` (batches of any sizes, including empty).
  arrow::Status RegisterArrow(const std::string& name, std::shared_ptr<arrow::Schema> schema,
                              std::vector<std::shared_ptr<arrow::RecordBatch>> batches);
  // Same, draining `reader` into memory first (a view must be re-scannable).
  arrow::Status RegisterArrow(const std::string& name, arrow::RecordBatchReader& reader);

  // Drops the view and releases the data. KeyError if `name` is not registered.
  arrow::Status Unregister(const std::string& name);
  // Releases the data of a name the caller will register again: the view
  // stays (scanning no rows) when views are reused, else as Unregister.
  arrow::Status Release(const std::string& name);
  // Whether re-registering `name` with `schema` only swaps its data (a
  // registration by this session with an equal schema, views reused).
  bool ReusesView(const std::string& name, const arrow::Schema& schema) const;

  bool IsRegistered(const std::string& name) const;
  std::vector<std::string> RegisteredNames() const;

 private:
  DuckDbSession(std::shared_ptr<duckdb_internal::SessionCore> core,
                std::shared_ptr<duckdb_internal::ConverterConnection> converter,
                std::shared_ptr<duckdb_internal::ArrowTableRegistry> registry);

  std::shared_ptr<duckdb_internal::SessionCore> core_;
  std::shared_ptr<duckdb_internal::ConverterConnection> converter_;
  std::shared_ptr<duckdb_internal::ArrowTableRegistry> registry_;
  bool reuse_views_ = true;
  std::set<std::string> views_;  // names whose view RegisterArrow created (lower case)
};

}  // namespace thund::engine
