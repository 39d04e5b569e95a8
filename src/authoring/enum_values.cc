#include "authoring/enum_values.h"

namespace thund::authoring {
namespace {

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// `parse(text)`, "" giving `empty`, else the bad value.
template <typename T, typename E>
ParsedValue<T> Parse(std::string_view text, std::optional<E> (*parse)(std::string_view),
                     std::optional<T> empty, BadValue bad) {
  if (text.empty() && empty) return *empty;
  if (auto v = parse(text)) return T(*v);
  return bad;
}

// A format files can be read in (noop only discards rows: sinks only).
std::optional<FileFormat> ParseReadableFormat(std::string_view s) {
  auto f = ParseFileFormat(s);
  if (f == FileFormat::kNoop) return std::nullopt;
  return f;
}

}  // namespace

ParsedValue<DuplicateKeys> ParseKeyedDuplicates(std::string_view text) {
  return Parse<DuplicateKeys>(
      text, ParseDuplicateKeys, std::optional(DuplicateKeys::kFirst),
      {"keyed-write-value", "keyed_write duplicates " + Quote(text) + " is not supported",
       "use first (keep the first row per new key) or all (keep every row of a new key)"});
}

ParsedValue<NullKeys> ParseKeyedNullKeys(std::string_view text) {
  return Parse<NullKeys>(
      text, ParseNullKeys, std::optional(NullKeys::kError),
      {"keyed-write-value", "keyed_write null_keys " + Quote(text) + " is not supported",
       "use error (fail on a row with a NULL key column) or drop (drop and count such rows)"});
}

ParsedValue<KeyMatch> ParseKeyedKeyMatch(std::string_view text) {
  return Parse<KeyMatch>(
      text, ParseKeyMatch, std::optional(KeyMatch::kExact),
      {"keyed-write-value", "keyed_write key_match " + Quote(text) + " is not supported",
       "use exact (keys compared by value, the default) or hash (128-bit hashes: less memory, "
       "a hash collision skips a new row)"});
}

ParsedValue<KeyIndex> ParseKeyedKeyIndex(std::string_view text) {
  return Parse<KeyIndex>(
      text, ParseKeyIndex, std::optional(KeyIndex::kRows),
      {"keyed-write-value", "keyed_write key_index " + Quote(text) + " is not supported",
       "use rows (row numbers behind a Bloom filter where that applies, the default) or table "
       "(the keys' bytes in a hash table: the plain twin)"});
}

ParsedValue<std::optional<FileFormat>> ParseStorageFormat(std::string_view text) {
  return Parse<std::optional<FileFormat>>(
      text, ParseFileFormat, std::optional<std::optional<FileFormat>>(std::in_place, std::nullopt),
      {"storage-format", "storage format " + Quote(text) + " is not supported",
       "use parquet, csv or json (or leave it empty for parquet); noop (rows counted and "
       "discarded) on a sink"});
}

ParsedValue<std::optional<WriteMode>> ParseStorageMode(std::string_view text) {
  return Parse<std::optional<WriteMode>>(
      text, ParseWriteMode, std::optional<std::optional<WriteMode>>(std::in_place, std::nullopt),
      {"storage-mode", "storage mode " + Quote(text) + " is not supported",
       "use append, overwrite or merge"});
}

ParsedValue<std::optional<FileFormat>> ParseSourceFormat(std::string_view text) {
  return Parse<std::optional<FileFormat>>(
      text, ParseReadableFormat, std::nullopt,
      {"source-spec", "file source format " + Quote(text) + " is not supported",
       "use one of parquet, csv, json"});
}

ParsedValue<GeneratorKind> ParseSourceGeneratorKind(std::string_view text) {
  return Parse<GeneratorKind>(
      text, ParseGeneratorKind, std::nullopt,
      {"source-spec", "unknown generator kind " + Quote(text),
       "use one of keyed_events, nexmark, nexmark_person, nexmark_auction, nexmark_bid"});
}

ParsedValue<StartingOffsets> ParseSourceStartingOffsets(std::string_view text) {
  return Parse<StartingOffsets>(
      text, ParseStartingOffsets, std::nullopt,
      {"source-spec", "kafka starting_offsets " + Quote(text) + " is not supported",
       "use earliest or latest"});
}

}  // namespace thund::authoring
