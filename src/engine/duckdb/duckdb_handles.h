// RAII owners for DuckDB C-API handles and Arrow C Data Interface structs.
//
// Every DuckDB C-API object that must be destroyed gets a move-only owner here, so
// no code path (early return, error) can leak or double-free one. These are
// internal to src/engine/duckdb; the public surface is DuckDbSession.
#pragma once

#include <arrow/c/abi.h>
#include <duckdb.h>

#include <utility>

namespace thund::engine::duckdb_internal {

// Owns one DuckDB handle `T` (a pointer-like typedef) destroyed by `Destroy(&h)`.
template <typename T, void (*Destroy)(T*)>
class Handle {
 public:
  Handle() = default;
  explicit Handle(T h) : h_(h) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  Handle& operator=(Handle&& o) noexcept {
    if (this != &o) {
      reset();
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ~Handle() { reset(); }

  T get() const { return h_; }
  // For C out-parameters. REQUIRES: the handle is empty (else it would leak).
  T* out() { return &h_; }
  explicit operator bool() const { return h_ != nullptr; }
  void reset() {
    if (h_ != nullptr) Destroy(&h_);
    h_ = nullptr;
  }

 private:
  T h_ = nullptr;
};

using DatabaseHandle = Handle<duckdb_database, duckdb_close>;
using ConnectionHandle = Handle<duckdb_connection, duckdb_disconnect>;
using ConfigHandle = Handle<duckdb_config, duckdb_destroy_config>;
using DataChunkHandle = Handle<duckdb_data_chunk, duckdb_destroy_data_chunk>;
using LogicalTypeHandle = Handle<duckdb_logical_type, duckdb_destroy_logical_type>;
using ConvertedSchemaHandle =
    Handle<duckdb_arrow_converted_schema, duckdb_destroy_arrow_converted_schema>;
using ErrorDataHandle = Handle<duckdb_error_data, duckdb_destroy_error_data>;
using ArrowOptionsHandle = Handle<duckdb_arrow_options, duckdb_destroy_arrow_options>;
using PreparedHandle = Handle<duckdb_prepared_statement, duckdb_destroy_prepare>;
using PendingHandle = Handle<duckdb_pending_result, duckdb_destroy_pending>;
using ValueHandle = Handle<duckdb_value, duckdb_destroy_value>;

// Owns a duckdb_result (a struct, not a pointer). duckdb_destroy_result must be called
// even when the query failed, so the owner is armed as soon as it is handed out.
class ResultHandle {
 public:
  ResultHandle() = default;
  ResultHandle(const ResultHandle&) = delete;
  ResultHandle& operator=(const ResultHandle&) = delete;
  ~ResultHandle() { reset(); }
  void reset() {
    if (armed_) duckdb_destroy_result(&r_);
    armed_ = false;
    r_ = duckdb_result{};
  }
  // Out-parameter for duckdb_query / duckdb_execute_pending. REQUIRES: called once.
  duckdb_result* out() {
    armed_ = true;
    return &r_;
  }
  duckdb_result* get() { return &r_; }
  bool armed() const { return armed_; }

 private:
  duckdb_result r_{};
  bool armed_ = false;
};

// Owns an ArrowArray / ArrowSchema until someone moves it out (a consumer that takes
// ownership sets `release` to null, after which the destructor does nothing).
struct OwnedArrowArray {
  ArrowArray c{};
  OwnedArrowArray() { c.release = nullptr; }
  OwnedArrowArray(const OwnedArrowArray&) = delete;
  OwnedArrowArray& operator=(const OwnedArrowArray&) = delete;
  ~OwnedArrowArray() {
    if (c.release != nullptr) c.release(&c);
  }
};

struct OwnedArrowSchema {
  ArrowSchema c{};
  OwnedArrowSchema() { c.release = nullptr; }
  OwnedArrowSchema(const OwnedArrowSchema&) = delete;
  OwnedArrowSchema& operator=(const OwnedArrowSchema&) = delete;
  ~OwnedArrowSchema() {
    if (c.release != nullptr) c.release(&c);
  }
};

}  // namespace thund::engine::duckdb_internal
