// Name -> registered Arrow data, looked up by the thund_arrow_scan table function.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/duckdb/arrow_scan_source.h"

namespace thund::engine::duckdb_internal {

// Names compare case-insensitively (ASCII), like DuckDB identifiers: "Orders" and
// "orders" are the same entry.
//
// Thread-safety: all methods may be called concurrently (DuckDB binds table functions
// on the querying thread, the session registers on the caller's thread).
// Lifetime: entries are shared_ptr; a query that has bound an entry keeps it alive
// after Remove() until the query finishes.
class ArrowTableRegistry {
 public:
  explicit ArrowTableRegistry(bool parallel_scan) : parallel_scan_(parallel_scan) {}

  // Inserts or replaces; returns the previous entry (null if none).
  std::shared_ptr<const ArrowScanSource> Put(const std::string& name,
                                             std::shared_ptr<const ArrowScanSource> source);
  // Removes; returns the removed entry (null if none).
  std::shared_ptr<const ArrowScanSource> Remove(const std::string& name);
  std::shared_ptr<const ArrowScanSource> Find(const std::string& name) const;
  // Registered names as given at registration, sorted.
  std::vector<std::string> Names() const;

  // Whether scans may run on several DuckDB threads (row order then follows no rule).
  bool parallel_scan() const { return parallel_scan_; }

 private:
  struct Entry {
    std::string name;
    std::shared_ptr<const ArrowScanSource> source;
  };
  const bool parallel_scan_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> entries_;  // key: lower-cased name
};

}  // namespace thund::engine::duckdb_internal
