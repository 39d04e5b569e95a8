// 128-bit hashes of table rows, for incremental checkpoints (state_image.h).
//
// A row's hash covers every column's value and NULL-ness, in column order,
// so equal rows hash equal and different rows collide with probability about
// n^2 / 2^129 for n rows (each value's XXH3 hash folded into two lanes with
// different mixes). Covered
// types: every fixed-width type (integers, floats, decimals, dates, times,
// timestamps, durations, intervals, fixed-size binary), booleans,
// (large) string / binary / view types, and structs of covered types.
// Anything else (lists, maps, dictionaries) is NotImplemented: the caller
// then writes full images.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <arrow/result.h>
#include <arrow/table.h>

namespace thund::engine::checkpoint {

struct RowHash {
  uint64_t lo = 0, hi = 0;
  bool operator==(const RowHash&) const = default;
};

inline bool operator<(const RowHash& a, const RowHash& b) {
  return a.hi != b.hi ? a.hi < b.hi : a.lo < b.lo;
}

// True when every column of `schema` has a covered type.
bool RowsHashable(const arrow::Schema& schema);

// One hash per row of `table`, in row order.
arrow::Result<std::vector<RowHash>> HashRows(const arrow::Table& table);

// XXH3-64 of a byte range, for file checksums.
uint64_t HashBytes(const void* data, size_t size);

}  // namespace thund::engine::checkpoint
