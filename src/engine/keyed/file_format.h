// Data file formats and file listing for keyed writes: a source given as a file,
// a directory or a glob, and the files already in a target directory.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <arrow/result.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "thund/ir.h"

namespace thund::engine::keyed {

// The IR's file formats (Name(FileFormat) is in thund/ir.h).
using FileFormat = thund::FileFormat;

// "parquet" | "csv" | "json" (also "ndjson", "jsonl"), case-insensitive.
arrow::Result<FileFormat> ParseFileFormat(const std::string& text);
// By extension: .parquet/.pq, .csv, .json/.jsonl/.ndjson (case-insensitive).
std::optional<FileFormat> FormatOfPath(std::string_view path);
// ".parquet", ".csv", ".json".
const char* ExtensionOf(FileFormat f);

struct DataFile {
  std::string path;  // in the filesystem's own terms
  FileFormat format = FileFormat::kParquet;
  int64_t size = 0;
};

// True for names a reader must ignore: hidden (".x"), underscore-prefixed
// ("_SUCCESS", and the "_tmp-*.inprogress" temporaries of atomic writes).
bool IsIgnoredName(std::string_view basename);

// Resolves `spec` on `fs` to data files, sorted by path:
//   * a file: itself;
//   * a directory: every data file below it (recursively), ignored names skipped;
//   * a glob (*, ?, [..] in any component): matching files below the fixed prefix.
// `format` forces the format; else it comes from each file's extension, and a
// file without a known extension is an error (naming it). Nothing found is an
// Invalid error naming `spec`.
arrow::Result<std::vector<DataFile>> ListSourceFiles(arrow::fs::FileSystem& fs,
                                                     const std::string& spec,
                                                     std::optional<FileFormat> format);

// The data files already in the target directory `dir` (recursively; ignored
// names skipped), sorted by path. A missing directory gives an empty list. A
// file with an unknown extension is an error: its keys could not be read, so
// rows it holds might be written again.
arrow::Result<std::vector<DataFile>> ListTargetFiles(arrow::fs::FileSystem& fs,
                                                     const std::string& dir);

}  // namespace thund::engine::keyed
