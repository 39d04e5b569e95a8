#include "engine/keyed/keyed_options.h"

#include <algorithm>
#include <thread>
#include <unordered_set>

namespace thund::engine::keyed {

arrow::Result<Duplicates> ParseDuplicates(const std::string& text) {
  if (text.empty()) return Duplicates::kFirst;
  if (auto v = thund::ParseDuplicateKeys(text)) return *v;
  return arrow::Status::Invalid("duplicates: '", text, "' is not a policy; use 'first' or 'all'");
}

arrow::Result<NullKeys> ParseNullKeys(const std::string& text) {
  if (text.empty()) return NullKeys::kError;
  if (auto v = thund::ParseNullKeys(text)) return *v;
  return arrow::Status::Invalid("null_keys: '", text, "' is not a policy; use 'error' or 'drop'");
}

arrow::Result<KeyMatch> ParseKeyMatch(const std::string& text) {
  if (text.empty()) return KeyMatch::kExact;
  if (auto v = thund::ParseKeyMatch(text)) return *v;
  return arrow::Status::Invalid("key_match: '", text, "' is not a mode; use 'exact' or 'hash'");
}

std::optional<KeyIndex> ParseKeyIndex(const std::string& text) {
  return thund::ParseKeyIndex(text);
}

namespace {

arrow::Status CheckPositive(const char* name, const std::optional<int64_t>& value,
                            const char* what) {
  if (value && *value <= 0) {
    return arrow::Status::Invalid(name, " must be > 0 (", what, "), got ", *value,
                                  "; leave it unset for the default");
  }
  return arrow::Status::OK();
}

}  // namespace

arrow::Status KeyedWriteOptions::Validate() const {
  if (keys.empty()) {
    return arrow::Status::Invalid(
        "checkpoint keys: the key list is empty; name one or more columns that identify a row");
  }
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].empty()) {
      return arrow::Status::Invalid("checkpoint keys: key #", i + 1, " is an empty column name");
    }
    if (!seen.insert(keys[i]).second) {
      return arrow::Status::Invalid("checkpoint keys: column '", keys[i],
                                    "' is listed twice; list each key column once");
    }
  }
  ARROW_RETURN_NOT_OK(CheckPositive("buckets", buckets, "shards of the key set"));
  ARROW_RETURN_NOT_OK(CheckPositive("threads", threads, "worker threads"));
  ARROW_RETURN_NOT_OK(CheckPositive("batch_size", batch_size, "rows per filter batch"));
  if (threads && *threads > 1024) {
    return arrow::Status::Invalid("threads must be <= 1024, got ", *threads);
  }
  if (buckets && *buckets > (1 << 20)) {
    return arrow::Status::Invalid("buckets must be <= 1048576, got ", *buckets);
  }
  return arrow::Status::OK();
}

int64_t KeyedWriteOptions::EffectiveThreads() const {
  if (threads) return *threads;
  return std::max<int64_t>(1, static_cast<int64_t>(std::thread::hardware_concurrency()));
}

int64_t KeyedWriteOptions::EffectiveBuckets() const {
  if (buckets) return *buckets;
  // One shard per thread: each shard's key bytes sit in one arena in load
  // order, so probes that follow the load order read them almost sequentially;
  // more shards split that order (measured: 4 shards per thread cost ~30% more
  // probe time on 18.9M URL keys), fewer cause lock waits.
  const int64_t want = EffectiveThreads();
  int64_t b = 1;
  while (b < want) b <<= 1;
  return b;
}

int64_t KeyedWriteOptions::EffectiveBatchSize() const {
  return batch_size ? *batch_size : kDefaultBatchSize;
}

arrow::Result<KeyedWriteOptions> KeyedWriteOptions::FromIr(const KeyedWrite& ir,
                                                           const std::string& where) {
  KeyedWriteOptions o;
  o.keys = ir.keys;
  auto set = [](int64_t v) { return v == 0 ? std::optional<int64_t>() : std::optional(v); };
  o.buckets = set(ir.tuning.buckets);
  o.threads = set(ir.tuning.threads);
  o.batch_size = set(ir.tuning.batch_size);
  o.duplicates = ir.duplicates;
  o.null_keys = ir.null_keys;
  o.match = ir.key_match;
  o.key_index = ir.tuning.key_index;
  o.memory_pool = ir.tuning.memory_pool;
  o.huge_pages = ir.tuning.huge_pages;
  if (ir.tuning.plain) o.SetPlain();
  arrow::Status st = o.Validate();
  if (!st.ok()) return st.WithMessage(where, ": ", st.message());
  return o;
}

FileSwitches FileSwitchesFromIr(const KeyedWriteTuning& t) {
  FileSwitches s;
  s.settle = t.settle && !t.plain;
  s.passthrough = t.passthrough && !t.plain;
  s.join = t.join && !t.plain;
  s.direct_io = t.direct_io && !t.plain;
  return s;
}

}  // namespace thund::engine::keyed
