// Loading the keys already present in a keyed write's target.
//
// Every data file under the target directory is read -- only its key columns
// (Parquet: column projection; CSV/JSON: parsed, then projected) -- on
// `options.threads` threads. With exact matching (the default), one string or
// binary key column and only Parquet files, the keys go into a RowKeyIndex
// (row numbers; keys confirmed from the files); otherwise into a KeySet
// sharded into `options.buckets`. Ignored names (hidden, "_x", the "_tmp-*.inprogress" files a
// killed writer leaves) are never read, so a partial file never counts.
// Key columns are cast to the written types (KeySpec); a target file without a
// key column, or whose key values do not convert, is an Invalid error naming the
// file. Rows of the target with a NULL key are ignored (counted).
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/keyed/key_lookup.h"
#include "engine/keyed/key_spec.h"
#include "engine/keyed/keyed_options.h"
#include "engine/keyed/row_key_index.h"

namespace thund::engine::keyed {

struct TargetKeys {
  std::unique_ptr<KeyLookup> set;
  bool indexed = false;  // `set` is a RowKeyIndex
  bool target_exists = false;
  int64_t files = 0;      // data files read
  int64_t rows = 0;       // rows in them
  int64_t null_rows = 0;  // rows with a NULL key (never match)
  int64_t keys = 0;       // keys loaded (KeyLookup::size)
  // The rounds' before_rounds said no key is needed (every source row group
  // is written already): `set` is empty and `rows` counts the files' rows.
  bool load_skipped = false;
  int64_t memory_bytes = 0;
  double seconds = 0;
};

arrow::Result<TargetKeys> LoadTargetKeys(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                         const std::string& dir, const KeySpec& spec,
                                         const KeyedWriteOptions& options);

// Same, for a target made of several directories (a stored dataset's current
// version and its keyed staging dir): the keys of all of them. The target
// exists when any of them does. `rounds`: when the keys go into a RowKeyIndex,
// it is loaded in those rounds (else ignored).
arrow::Result<TargetKeys> LoadTargetKeys(const std::shared_ptr<arrow::fs::FileSystem>& fs,
                                         const std::vector<std::string>& dirs, const KeySpec& spec,
                                         const KeyedWriteOptions& options,
                                         const RowKeyIndexRounds* rounds = nullptr);

}  // namespace thund::engine::keyed
