// KeySpec: which columns form the key of a keyed write, their types, and how a
// key is held in memory.
//
// The spec is made from the schema of the rows being WRITTEN (the target's
// schema): every other place that supplies keys (the target's existing files, a
// source that carries the key columns unchanged) has its key columns cast to
// these types first (CastKeyColumns), so equal keys encode to equal bytes.
//
// Keyable types: booleans, integers, date/time/timestamp/duration, decimal128,
// fixed-size binary (fixed width); strings and binaries (variable width);
// dictionaries of those (decoded). Floating point is refused (NaN and -0.0 make
// equality unreliable: cast to DECIMAL or a string), as are nested and null types.
#pragma once

#include <arrow/array.h>
#include <arrow/record_batch.h>
#include <arrow/result.h>
#include <arrow/type.h>

#include <memory>
#include <string>
#include <vector>

#include "engine/keyed/keyed_options.h"

namespace thund::engine::keyed {

// How encoded keys are stored (see key_encoder.h for the byte layout).
enum class KeyStorage {
  kFixed64,   // fixed-width key of <= 8 bytes, packed into one word (exact)
  kFixed128,  // fixed-width key of <= 16 bytes, packed into two words (exact);
              // also every key under KeyMatch::kHash (its 128-bit hash)
  kBytes,     // the key's bytes in an arena (exact)
};
const char* Name(KeyStorage s);

struct KeySpec {
  std::vector<std::string> names;                       // as spelled in the written schema
  std::vector<std::shared_ptr<arrow::DataType>> types;  // value types (dictionaries decoded)
  std::vector<int> widths;  // bytes per column when fixed width, else -1
  KeyStorage storage = KeyStorage::kBytes;
  KeyMatch match = KeyMatch::kExact;

  // Resolves `keys` in `written` (exact name first, else the one column whose name
  // matches case-insensitively, as SQL does). Errors (Invalid) name the column,
  // `where`, and what to do: unknown column (listing the available ones),
  // ambiguous name, non-keyable type.
  static arrow::Result<KeySpec> Make(const arrow::Schema& written,
                                     const std::vector<std::string>& keys, KeyMatch match,
                                     const std::string& where);

  // Indices of the key columns in `schema`, resolved like Make(). `where` names
  // the schema's owner (a target file, a source) in the error.
  arrow::Result<std::vector<int>> Resolve(const arrow::Schema& schema,
                                          const std::string& where) const;

  // The key schema (names and types).
  std::shared_ptr<arrow::Schema> schema() const;
  std::string ToString() const;  // "id:int64, url:string (exact, bytes)"
};

// Finds `name` in `schema`: the exact match, else the unique case-insensitive one.
// -1 when absent; -2 when several columns match case-insensitively.
int FindColumn(const arrow::Schema& schema, const std::string& name);

// Takes the key columns at `indices` of `batch` and casts each to the spec's
// type (a dictionary is decoded; a lossy or impossible cast is an Invalid error
// naming the column, the two types and `where`).
arrow::Result<std::vector<std::shared_ptr<arrow::Array>>> CastKeyColumns(
    const KeySpec& spec, const arrow::RecordBatch& batch, const std::vector<int>& indices,
    const std::string& where);

}  // namespace thund::engine::keyed
