// Enum-valued IR fields read from user text (pipeline file, SQL): each parser
// gives the value, or the problem users see for bad text, with the diagnostic
// code, message and hint that `thund check` has always reported for it.
//
// An empty text means "not set" where the IR has a default (keyed-write
// options, storage format and mode): ParseX("") gives the default / nullopt.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "thund/ir.h"

namespace thund::authoring {

struct BadValue {
  std::string code;     // e.g. "keyed-write-value", "storage-format", "source-spec"
  std::string message;  // e.g. "keyed_write null_keys 'skip' is not supported"
  std::string hint;     // the accepted values
};

template <typename T>
using ParsedValue = std::variant<T, BadValue>;

ParsedValue<DuplicateKeys> ParseKeyedDuplicates(std::string_view text);
ParsedValue<NullKeys> ParseKeyedNullKeys(std::string_view text);
ParsedValue<KeyMatch> ParseKeyedKeyMatch(std::string_view text);
ParsedValue<KeyIndex> ParseKeyedKeyIndex(std::string_view text);
ParsedValue<std::optional<FileFormat>> ParseStorageFormat(std::string_view text);
ParsedValue<std::optional<WriteMode>> ParseStorageMode(std::string_view text);
// File sources, generators and Kafka: code "source-spec"; no empty default
// (a file source's format is always set when parsed).
ParsedValue<std::optional<FileFormat>> ParseSourceFormat(std::string_view text);
ParsedValue<GeneratorKind> ParseSourceGeneratorKind(std::string_view text);
ParsedValue<StartingOffsets> ParseSourceStartingOffsets(std::string_view text);

}  // namespace thund::authoring
