// Internal: the state one native batch run shares between its parts.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "engine/batch/catalog.h"
#include "engine/batch/dataset_store.h"
#include "engine/duckdb/duckdb_session.h"
#include "thund/backend.h"
#include "thund/ir.h"

namespace thund::native {

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// What dependents can know about a dataset once it has been processed.
struct DatasetState {
  bool available = false;  // readable by name in the session now
  std::string stamp;       // how dependents fingerprint it
  std::string blocked_reason;  // when !available: why (for dependents' "skipped")
};

struct RunContext {
  const Pipeline* pipeline = nullptr;
  const RunOptions* options = nullptr;
  std::string run_id;
  engine::batch::DatasetStore* store = nullptr;
  engine::DuckDbSession* session = nullptr;
  engine::batch::Catalog* catalog = nullptr;
  std::map<std::string, DatasetState> states;  // by dataset name
  std::vector<std::string> notes;
  int tag_counter = 0;
  // FlowInputFiles per flow, expanded once per run (fingerprint, then run).
  std::map<const Flow*, std::vector<std::string>> input_files;
  // Arrow schema (without metadata, as text) -> the schema DuckDB hands rows
  // of it back in (stream_flow.cc, CheckRows).
  std::map<std::string, std::shared_ptr<arrow::Schema>> duckdb_schemas;

  void Emit(RunEvent e) const {
    if (!options->on_event) return;
    e.time_ms = NowMs();
    options->on_event(e);
  }
  std::string NextTag() { return std::to_string(++tag_counter); }
  bool StopRequested() const { return options->stop && options->stop->load(); }
};

}  // namespace thund::native
