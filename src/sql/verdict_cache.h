// Internal: a bounded, thread-safe memo of the SQL frontend's answers about a
// text (a parse, a plan), keyed by a string. Only verdicts are kept: a value,
// or an Invalid / NotImplemented status (the text is wrong, or asks for what
// is not done); other failures (DuckDB could not be reached) are computed
// again next time. Cleared when full.
#pragma once

#include <arrow/result.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

namespace thund::sql {

template <typename T>
class VerdictCache {
 public:
  explicit VerdictCache(size_t max_entries) : max_entries_(max_entries) {}

  // The cached answer for `key`, else compute() (called without the lock).
  template <typename Fn>
  arrow::Result<T> GetOrCompute(const std::string& key, Fn&& compute) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = entries_.find(key);
      if (it != entries_.end()) return it->second;
    }
    arrow::Result<T> value = compute();
    if (value.ok() || value.status().IsInvalid() || value.status().IsNotImplemented()) {
      std::lock_guard<std::mutex> lock(mu_);
      if (entries_.size() >= max_entries_) entries_.clear();
      entries_.emplace(key, value);
    }
    return value;
  }

 private:
  const size_t max_entries_;
  std::mutex mu_;
  std::unordered_map<std::string, arrow::Result<T>> entries_;
};

}  // namespace thund::sql
