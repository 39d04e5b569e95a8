#include "engine/duckdb/arrow_table_registry.h"

#include <algorithm>
#include <cctype>

namespace thund::engine::duckdb_internal {
namespace {

std::string Key(const std::string& name) {
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return key;
}

}  // namespace

std::shared_ptr<const ArrowScanSource> ArrowTableRegistry::Put(
    const std::string& name, std::shared_ptr<const ArrowScanSource> source) {
  std::lock_guard<std::mutex> lock(mu_);
  Entry& entry = entries_[Key(name)];
  auto previous = std::move(entry.source);
  entry = Entry{name, std::move(source)};
  return previous;
}

std::shared_ptr<const ArrowScanSource> ArrowTableRegistry::Remove(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(Key(name));
  if (it == entries_.end()) return nullptr;
  auto removed = std::move(it->second.source);
  entries_.erase(it);
  return removed;
}

std::shared_ptr<const ArrowScanSource> ArrowTableRegistry::Find(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(Key(name));
  return it == entries_.end() ? nullptr : it->second.source;
}

std::vector<std::string> ArrowTableRegistry::Names() const {
  std::vector<std::string> names;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, entry] : entries_) names.push_back(entry.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace thund::engine::duckdb_internal
