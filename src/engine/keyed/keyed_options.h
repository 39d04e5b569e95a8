// Options of a key-checkpointed write (DESIGN.md §2 "Sinks", issue 6).
//
// A key-checkpointed write skips every row whose key is already present in the
// target's files, so a job that died half way resumes where it stopped. This
// header holds the knobs and their validation; see docs/keyed-writes.md for the
// semantics and keyed_write_filter.h for the engine API.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "thund/ir.h"

namespace thund::engine::keyed {

// The IR's keyed-write policies (thund/ir.h, with their Name()s):
// duplicates (kFirst | kAll), null_keys (kError | kDrop), key match (kExact |
// kHash: a 128-bit hash per key; two different keys with equal hashes count as
// one, probability ~ n^2 / 2^129: 5e-23 for 189M keys; opt-in only).
using Duplicates = thund::DuplicateKeys;
using NullKeys = thund::NullKeys;
using KeyMatch = thund::KeyMatch;
// How the target's keys are held (see KeyedWriteOptions::key_index).
using KeyIndex = thund::KeyIndex;
// From "rows" / "table" (nullopt otherwise).
std::optional<KeyIndex> ParseKeyIndex(const std::string& text);

// From flag text ("" = the default), with errors naming the option.
arrow::Result<Duplicates> ParseDuplicates(const std::string& text);
arrow::Result<NullKeys> ParseNullKeys(const std::string& text);
arrow::Result<KeyMatch> ParseKeyMatch(const std::string& text);

struct KeyedWriteOptions {
  // Key columns, in order (one or more; names as in the rows being written).
  std::vector<std::string> keys;
  // Shards of the key set (each with its own lock and table).
  // Unset = derived: the smallest power of two >= threads.
  std::optional<int64_t> buckets;
  // Threads used to load target keys, read, filter and write. Unset = the machine's cores.
  std::optional<int64_t> threads;
  // Rows per filter batch (input is sliced to at most this many rows). Unset = 65536.
  std::optional<int64_t> batch_size;
  Duplicates duplicates = Duplicates::kFirst;
  NullKeys null_keys = NullKeys::kError;
  KeyMatch match = KeyMatch::kExact;

  // Fast-path switches. Each fast path has a plain twin that gives the same
  // rows (tests/keyed/fast_path_diff_test.cc); docs/keyed-writes.md "Fast
  // paths and their switches" says what each assumes.
  //   key_index: kRows holds the target's keys as row numbers behind a Bloom
  //     filter where that applies (one exact string key, Parquet target
  //     files), confirming matches from the files; kTable always holds the
  //     keys' bytes (or packed values) in a KeySet. kRows also holds the keys
  //     this run writes from Parquet source rows as row numbers.
  //   memory_pool: Arrow buffers of keyed reads/writes come from the
  //     recycling pool (memory_pool.h); false: from Arrow's system pool.
  //   huge_pages: row-index tables of 512 MiB or more ask for transparent huge
  //     pages; false: small pages only.
  KeyIndex key_index = KeyIndex::kRows;
  bool memory_pool = true;
  bool huge_pages = true;
  // Turns the three above to their plain twins.
  void SetPlain() {
    key_index = KeyIndex::kTable;
    memory_pool = false;
    huge_pages = false;
  }

  static constexpr int64_t kDefaultBatchSize = 65536;

  // Checks every field; the error names the option and says what to do.
  // A set buckets/threads/batch_size must be > 0.
  arrow::Status Validate() const;

  int64_t EffectiveThreads() const;
  int64_t EffectiveBuckets() const;
  int64_t EffectiveBatchSize() const;

  // From the IR (Dataset::keyed_write), where a tuning value of 0 means unset
  // and negatives are errors. The IR's key_index, memory_pool and huge_pages
  // switches (all off when its `plain` is set) land here; its other switches
  // belong to the callers' OutputOptions / KeyedCopyTuning (FileSwitchesFromIr).
  // `where` names the dataset in errors.
  static arrow::Result<KeyedWriteOptions> FromIr(const KeyedWrite& ir, const std::string& where);
};

// The IR's switches of the fast paths over whole source files (all off when
// `plain` is set): settle and passthrough go to KeyedCopyTuning, join and
// direct_io to OutputOptions. `thund run` writes decoded rows only, so of
// these it sets join and direct_io on its OutputOptions (used by CopyFiles).
struct FileSwitches {
  bool settle = true;
  bool passthrough = true;
  bool join = true;
  bool direct_io = true;
};
FileSwitches FileSwitchesFromIr(const KeyedWriteTuning& t);

}  // namespace thund::engine::keyed
