// What a keyed write reports besides its result: events (for the run's event
// stream) and counts (for the run summary).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace thund::engine::keyed {

struct KeyedEvent {
  enum class Kind {
    kTargetMissing,  // the target does not exist yet: nothing is skipped
    kTargetEmpty,    // the target holds no rows: nothing is skipped
    kTargetLoaded,   // keys loaded: files, keys, bytes, seconds
    kCleanup,        // temporaries of a killed writer removed
    kPlacement,      // where the filter runs (after a source / before the write) and why
    kSettled,        // source row groups found written while the target loaded (unit_settler.h)
    kDeferred,       // duplicates=all: rows of repeated keys held for one final file
    kCommitted,      // an output file was renamed into place (message: path and rows)
    kFallback,       // a fast path was not taken for some files, and why (plain path used)
    kTargetChanged,  // the target changed under the write (the write fails)
  };
  Kind kind = Kind::kTargetLoaded;
  std::string message;
  // kCommitted only: the committed file and its rows (for progress displays).
  std::string path = {};
  int64_t rows = 0;
};
const char* Name(KeyedEvent::Kind k);

using KeyedEventSink = std::function<void(const KeyedEvent&)>;

struct KeyedCounts {
  int64_t rows_read = 0;               // rows read from the sources
  int64_t rows_skipped_existing = 0;   // key already in the target
  int64_t rows_skipped_duplicate = 0;  // duplicates=first: key written earlier in this run
  int64_t rows_null_key = 0;           // null_keys=drop: a key column was NULL
  int64_t rows_written = 0;            // rows in committed output files

  std::string ToString() const;  // "read 10, skipped 4 (already written), ..."
};

}  // namespace thund::engine::keyed
