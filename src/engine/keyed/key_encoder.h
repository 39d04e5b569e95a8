// Encoding the key columns of a batch into compact per-row keys plus hashes.
//
// Byte layout of a key (KeySpec order, column by column):
//   fixed-width column   its little-endian value bytes (bool: 1 byte 0/1)
//   variable column      the bytes alone when the key is that single column;
//                        else a LEB128 length then the bytes (unambiguous)
// kFixed64 / kFixed128 pack those bytes into one / two words (zero padded).
// Under KeyMatch::kHash a key that does not fit 16 bytes is replaced by the
// XXH3-128 hash of its bytes (kFixed128). kBytes keeps the bytes.
#pragma once

#include <arrow/array.h>
#include <arrow/result.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyed/key_spec.h"

namespace thund::engine::keyed {

// The longest key (encoded bytes) accepted.
constexpr int64_t kMaxKeyBytes = 16 << 20;

// Keys of one batch. Rows with a NULL in any key column have is_null[i] = 1 and
// no meaningful key.
struct EncodedKeys {
  KeyStorage storage = KeyStorage::kBytes;
  int64_t length = 0;
  int64_t null_count = 0;
  std::vector<uint8_t> is_null;
  std::vector<uint64_t> hash;           // places the key: shard (high bits) and slot (low bits)
  std::vector<uint64_t> w0;             // kFixed*: first word; kBytes: 64 more hash bits (the tag)
  std::vector<uint64_t> w1;             // kFixed128: second word
  std::vector<std::string_view> bytes;  // kBytes: the key bytes (into the arrays or scratch)
  std::string scratch;                  // owns composite keys' bytes
  // Keeps the arrays `bytes` points into alive.
  std::vector<std::shared_ptr<arrow::Array>> keep_alive;
};

// Encodes `columns` (the key columns, already of the spec's types, equal
// lengths) into `out` (reusing its buffers). Fails on a key longer than
// kMaxKeyBytes.
arrow::Status EncodeKeys(const KeySpec& spec,
                         const std::vector<std::shared_ptr<arrow::Array>>& columns,
                         EncodedKeys* out);

// Encodes a single-column variable-width key from views (see
// DataFileReader::ScanStringColumn): `out->bytes` points at the views' bytes,
// which must outlive the use of `out`. REQUIRES: spec has one variable-width
// column.
arrow::Status EncodeViews(const KeySpec& spec, const std::string_view* values,
                          const uint8_t* is_null, int64_t n, EncodedKeys* out);

// Rows read, hashed and looked up at a time when keys are scanned as views
// (DataFileReader::ScanStringColumn): small enough that a chunk's key bytes
// (~0.5 MiB of 64-byte keys) are still in L2 when the table compares or copies
// them after hashing (65536-row chunks cost ~15% more CPU on 18.9M URLs).
constexpr int64_t kKeyScanRows = 8192;

// True when EncodeViews applies to `spec`.
bool IsSingleVariableKey(const KeySpec& spec);

// Appends the rows of `rows` to `out` (both encoded by the same spec): every
// field but `bytes`, which is left empty (views into a scan's page buffers
// must not outlive the scan): set it with AttachKeyBytes.
void AppendEncoded(const EncodedKeys& rows, EncodedKeys* out);

// Points out->bytes at the values of `column`, which holds out's keys in order
// (same rows; a NULL row is a NULL key), and keeps it alive in out->keep_alive,
// so `out` is what EncodeKeys gives for {column} without hashing the keys
// again. Fails on a key longer than kMaxKeyBytes. REQUIRES: IsSingleVariableKey
// (spec), `column` of the spec's type, `out` encoded by `spec`.
arrow::Status AttachKeyBytes(const KeySpec& spec, std::shared_ptr<arrow::Array> column,
                             EncodedKeys* out);

}  // namespace thund::engine::keyed
