#include "engine/duckdb/duckdb_session.h"

#include <chrono>
#include <string>
#include <thread>

#include <arrow/scalar.h>
#include <utility>

#include "engine/duckdb/arrow_scan_function.h"
#include "engine/duckdb/arrow_scan_source.h"
#include "engine/duckdb/arrow_table_registry.h"
#include "engine/duckdb/duckdb_handles.h"
#include "engine/duckdb/duckdb_result_reader.h"
#include "engine/duckdb/duckdb_status.h"
#include "ir/validate_internal.h"
#include "sql/duckdb_functions.h"
#include "engine/duckdb/session_core.h"
#include "engine/duckdb/sql_quote.h"

namespace thund::engine {

using duckdb_internal::ArrowScanSource;
using duckdb_internal::ArrowTableRegistry;
using duckdb_internal::ConverterConnection;
using duckdb_internal::DuckDbResultReader;
using duckdb_internal::SessionCore;

namespace {

arrow::Status SetOption(duckdb_config config, const char* name, const std::string& value) {
  if (duckdb_set_config(config, name, value.c_str()) != DuckDBSuccess) {
    return arrow::Status::Invalid("DuckDB rejected option ", name, "='", value, "'");
  }
  return arrow::Status::OK();
}

arrow::Result<duckdb_internal::ConfigHandle> MakeConfig(const DuckDbSessionOptions& options) {
  duckdb_internal::ConfigHandle config;
  if (duckdb_create_config(config.out()) != DuckDBSuccess) {
    return arrow::Status::OutOfMemory("could not create a DuckDB configuration");
  }
  if (options.threads < 0) {
    return arrow::Status::Invalid("threads must be >= 0 (0 = DuckDB default), got ",
                                  options.threads);
  }
  if (options.threads > 0) {
    ARROW_RETURN_NOT_OK(SetOption(config.get(), "threads", std::to_string(options.threads)));
  }
  if (!options.memory_limit.empty()) {
    ARROW_RETURN_NOT_OK(SetOption(config.get(), "memory_limit", options.memory_limit));
  }
  if (!options.temp_directory.empty()) {
    ARROW_RETURN_NOT_OK(SetOption(config.get(), "temp_directory", options.temp_directory));
  }
  return config;
}

arrow::Status CheckName(const std::string& name) {
  if (name.empty()) return arrow::Status::Invalid("an Arrow table needs a non-empty name");
  if (name.find('\0') != std::string::npos) {
    return arrow::Status::Invalid("Arrow table name contains a NUL character");
  }
  return arrow::Status::OK();
}

}  // namespace

DuckDbSession::DuckDbSession(std::shared_ptr<SessionCore> core,
                             std::shared_ptr<ConverterConnection> converter,
                             std::shared_ptr<ArrowTableRegistry> registry)
    : core_(std::move(core)), converter_(std::move(converter)), registry_(std::move(registry)) {}

DuckDbSession::~DuckDbSession() {
  // Every Arrow scan holds the converter connection, and with it the database.
  // DuckDB destroys a finished (or failed) query's leftover tasks on its own
  // worker threads, so a scan may let go of the converter after this session
  // closed its connection. If that release were the database's last, DuckDB
  // would destroy its task scheduler on one of the scheduler's own threads,
  // which aborts the process. So: drop the registered sources, then wait for
  // the worker threads to release the rest before the database closes.
  if (registry_) {
    for (const auto& name : registry_->Names()) registry_->Remove(name);
  }
  using namespace std::chrono_literals;
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  // (A result stream that outlives the session keeps the core, and closes the
  // database itself later, on its own thread.)
  while (converter_ && core_.use_count() == 1 && converter_.use_count() > 1) {
    if (std::chrono::steady_clock::now() > deadline) {
      // Something outside DuckDB's tasks still holds a scan source: keep the
      // database alive for the process rather than risk the abort.
      new std::shared_ptr<ConverterConnection>(converter_);
      break;
    }
    std::this_thread::sleep_for(1ms);
  }
}

arrow::Result<std::unique_ptr<DuckDbSession>> DuckDbSession::Open(
    const DuckDbSessionOptions& options) {
  ARROW_ASSIGN_OR_RAISE(auto config, MakeConfig(options));
  auto core = std::make_shared<SessionCore>();
  char* open_error = nullptr;
  const char* path = options.database_path.empty() ? nullptr : options.database_path.c_str();
  if (duckdb_open_ext(path, core->database.out(), config.get(), &open_error) != DuckDBSuccess) {
    std::string msg = open_error == nullptr ? "unknown error" : open_error;
    duckdb_free(open_error);
    return arrow::Status::Invalid("could not open DuckDB database '",
                                  path == nullptr ? ":memory:" : path, "': ", msg);
  }
  if (duckdb_connect(core->database.get(), core->connection.out()) != DuckDBSuccess) {
    return arrow::Status::UnknownError("could not connect to the DuckDB database");
  }
  auto converter = std::make_shared<ConverterConnection>();
  if (duckdb_connect(core->database.get(), converter->connection.out()) != DuckDBSuccess) {
    return arrow::Status::UnknownError("could not connect to the DuckDB database");
  }
  auto registry = std::make_shared<ArrowTableRegistry>(options.parallel_arrow_scan);
  ARROW_RETURN_NOT_OK(duckdb_internal::RegisterArrowScanFunction(core->connection.get(), registry));
  ARROW_RETURN_NOT_OK(sql::RegisterThundFunctions(core->connection.get()));
  std::unique_ptr<DuckDbSession> session(
      new DuckDbSession(std::move(core), std::move(converter), std::move(registry)));
  session->reuse_views_ = options.reuse_arrow_views;
  if (!options.time_zone.empty()) {
    arrow::Status st = session->Execute("SET TimeZone = " + QuoteString(options.time_zone));
    if (!st.ok()) {
      return arrow::Status::Invalid("DuckDB rejected option time_zone='", options.time_zone,
                                    "': ", st.message());
    }
  }
  return session;
}

arrow::Status DuckDbSession::Execute(std::string_view sql) {
  ARROW_RETURN_NOT_OK(core_->CheckNoOpenStream());
  duckdb_internal::ResultHandle result;
  const std::string text(sql);
  if (duckdb_query(core_->connection.get(), text.c_str(), result.out()) != DuckDBSuccess) {
    const char* msg = duckdb_result_error(result.get());
    return DuckDbError(duckdb_result_error_type(result.get()), msg == nullptr ? "" : msg,
                       "SQL failed");
  }
  return arrow::Status::OK();
}

arrow::Result<std::shared_ptr<arrow::Table>> DuckDbSession::Query(std::string_view sql) {
  ARROW_RETURN_NOT_OK(core_->CheckNoOpenStream());
  ARROW_ASSIGN_OR_RAISE(auto reader, DuckDbResultReader::OpenMaterialized(core_, sql));
  return reader->ToTable();
}

arrow::Result<int64_t> DuckDbSession::QueryInt64(std::string_view sql) {
  ARROW_ASSIGN_OR_RAISE(auto table, Query(sql));
  if (table->num_rows() != 1 || table->num_columns() < 1) {
    return arrow::Status::Invalid("expected one row of one integer, got ", table->num_rows(),
                                  " rows");
  }
  ARROW_ASSIGN_OR_RAISE(auto value, table->column(0)->GetScalar(0));
  if (!value->is_valid) return arrow::Status::Invalid("expected an integer, got NULL");
  ARROW_ASSIGN_OR_RAISE(value, value->CastTo(arrow::int64()));
  return std::static_pointer_cast<arrow::Int64Scalar>(value)->value;
}

arrow::Result<std::shared_ptr<arrow::RecordBatchReader>> DuckDbSession::QueryStream(
    std::string_view sql) {
  ARROW_RETURN_NOT_OK(core_->CheckNoOpenStream());
  ARROW_ASSIGN_OR_RAISE(auto reader, DuckDbResultReader::OpenStreaming(core_, sql));
  return reader;
}

arrow::Status DuckDbSession::RegisterArrow(const std::string& name,
                                           const std::shared_ptr<arrow::Table>& table) {
  if (table == nullptr) return arrow::Status::Invalid("RegisterArrow('", name, "'): null table");
  arrow::TableBatchReader reader(*table);  // zero-copy; aligns chunk boundaries
  ARROW_ASSIGN_OR_RAISE(auto batches, reader.ToRecordBatches());
  return RegisterArrow(name, table->schema(), std::move(batches));
}

arrow::Status DuckDbSession::RegisterArrow(const std::string& name,
                                           arrow::RecordBatchReader& reader) {
  ARROW_ASSIGN_OR_RAISE(auto batches, reader.ToRecordBatches());
  return RegisterArrow(name, reader.schema(), std::move(batches));
}

arrow::Status DuckDbSession::RegisterArrow(
    const std::string& name, std::shared_ptr<arrow::Schema> schema,
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  ARROW_RETURN_NOT_OK(CheckName(name));
  ARROW_RETURN_NOT_OK(core_->CheckNoOpenStream());
  if (schema == nullptr) return arrow::Status::Invalid("RegisterArrow('", name, "'): null schema");
  auto source = ArrowScanSource::Make(converter_, std::move(schema), std::move(batches));
  if (!source.ok()) {
    return source.status().WithMessage("cannot register Arrow table '", name,
                                       "': ", source.status().message());
  }
  const bool reuse = ReusesView(name, *(*source)->schema());
  auto previous = registry_->Put(name, std::move(source).ValueUnsafe());
  // The view scans the registry entry by name when a query runs: new data of
  // the same schema needs no new view.
  if (reuse) return arrow::Status::OK();
  // The view is bound now (DuckDB resolves its columns at creation), so the registry
  // entry must exist first; on failure, restore the previous state.
  const std::string sql = "CREATE OR REPLACE TEMP VIEW " + QuoteIdentifier(name) +
                          " AS SELECT * FROM " + duckdb_internal::kArrowScanFunctionName + "(" +
                          QuoteString(name) + ")";
  arrow::Status st = Execute(sql);
  if (!st.ok()) {
    if (previous != nullptr) {
      registry_->Put(name, std::move(previous));
    } else {
      registry_->Remove(name);
    }
    return st.WithMessage("cannot register Arrow table '", name, "': ", st.message());
  }
  views_.insert(thund::internal::Lower(name));
  return arrow::Status::OK();
}

bool DuckDbSession::ReusesView(const std::string& name, const arrow::Schema& schema) const {
  if (!reuse_views_ || !views_.count(thund::internal::Lower(name))) return false;
  auto current = registry_->Find(name);
  return current != nullptr && current->schema()->Equals(schema, /*check_metadata=*/true);
}

arrow::Status DuckDbSession::Release(const std::string& name) {
  auto current = registry_->Find(name);
  if (!reuse_views_ || current == nullptr || !views_.count(thund::internal::Lower(name))) {
    return Unregister(name);
  }
  ARROW_RETURN_NOT_OK(core_->CheckNoOpenStream());
  ARROW_ASSIGN_OR_RAISE(auto empty, ArrowScanSource::Make(converter_, current->schema(), {}));
  registry_->Put(name, std::move(empty));
  return arrow::Status::OK();
}

arrow::Status DuckDbSession::Unregister(const std::string& name) {
  ARROW_RETURN_NOT_OK(core_->CheckNoOpenStream());
  if (registry_->Find(name) == nullptr) {
    return arrow::Status::KeyError("no Arrow table named '", name, "' is registered");
  }
  ARROW_RETURN_NOT_OK(Execute("DROP VIEW IF EXISTS temp.main." + QuoteIdentifier(name)));
  registry_->Remove(name);
  views_.erase(thund::internal::Lower(name));
  return arrow::Status::OK();
}

bool DuckDbSession::IsRegistered(const std::string& name) const {
  return registry_->Find(name) != nullptr;
}

std::vector<std::string> DuckDbSession::RegisteredNames() const { return registry_->Names(); }

}  // namespace thund::engine
