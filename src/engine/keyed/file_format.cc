#include "engine/keyed/file_format.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include "common/text.h"

namespace thund::engine::keyed {
namespace {


bool EndsWith(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

bool HasGlob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// True when some component of `path` after `base` is ignored (hidden, "_x").
bool UnderIgnored(const std::string& path, const std::string& base) {
  std::string_view rest(path);
  if (!base.empty() && rest.substr(0, base.size()) == base) rest.remove_prefix(base.size());
  size_t start = 0;
  while (start <= rest.size()) {
    size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view part = rest.substr(start, end - start);
    if (!part.empty() && IsIgnoredName(part)) return true;
    start = end + 1;
  }
  return false;
}

arrow::Result<std::vector<arrow::fs::FileInfo>> ListFilesBelow(arrow::fs::FileSystem& fs,
                                                               const std::string& dir) {
  arrow::fs::FileSelector sel;
  sel.base_dir = dir;
  sel.recursive = true;
  sel.allow_not_found = true;
  ARROW_ASSIGN_OR_RAISE(auto infos, fs.GetFileInfo(sel));
  std::vector<arrow::fs::FileInfo> files;
  for (auto& info : infos) {
    if (info.IsFile() && !UnderIgnored(info.path(), dir)) files.push_back(std::move(info));
  }
  return files;
}

arrow::Result<DataFile> ToDataFile(const arrow::fs::FileInfo& info,
                                   std::optional<FileFormat> format, const char* what) {
  DataFile f;
  f.path = info.path();
  f.size = info.size();
  if (format) {
    f.format = *format;
  } else if (auto by_ext = FormatOfPath(f.path)) {
    f.format = *by_ext;
  } else {
    return arrow::Status::Invalid(what, " file '", f.path,
                                  "' has no known data extension (.parquet, .csv, .json); ",
                                  "give --format, or move the file away");
  }
  return f;
}

void SortByPath(std::vector<DataFile>* files) {
  std::sort(files->begin(), files->end(),
            [](const DataFile& a, const DataFile& b) { return a.path < b.path; });
}

}  // namespace

arrow::Result<FileFormat> ParseFileFormat(const std::string& text) {
  const std::string t = text::AsciiLower(text);
  if (t == "parquet") return FileFormat::kParquet;
  if (t == "csv") return FileFormat::kCsv;
  if (t == "json" || t == "ndjson" || t == "jsonl") return FileFormat::kJson;
  return arrow::Status::Invalid("format '", text, "' is not supported; use parquet, csv or json");
}

std::optional<FileFormat> FormatOfPath(std::string_view path) {
  const std::string p = text::AsciiLower(BaseName(path));
  if (EndsWith(p, ".parquet") || EndsWith(p, ".pq")) return FileFormat::kParquet;
  if (EndsWith(p, ".csv")) return FileFormat::kCsv;
  if (EndsWith(p, ".json") || EndsWith(p, ".jsonl") || EndsWith(p, ".ndjson")) {
    return FileFormat::kJson;
  }
  return std::nullopt;
}

const char* ExtensionOf(FileFormat f) {
  switch (f) {
    case FileFormat::kParquet:
      return ".parquet";
    case FileFormat::kCsv:
      return ".csv";
    case FileFormat::kJson:
      return ".json";
    case FileFormat::kNoop:
      return "";
  }
  return "";
}

bool IsIgnoredName(std::string_view basename) {
  return !basename.empty() && (basename[0] == '.' || basename[0] == '_');
}

arrow::Result<std::vector<DataFile>> ListSourceFiles(arrow::fs::FileSystem& fs,
                                                     const std::string& spec,
                                                     std::optional<FileFormat> format) {
  std::vector<DataFile> out;
  if (!HasGlob(spec)) {
    ARROW_ASSIGN_OR_RAISE(auto info, fs.GetFileInfo(spec));
    if (info.type() == arrow::fs::FileType::NotFound) {
      return arrow::Status::Invalid("source '", spec, "' does not exist");
    }
    if (info.IsFile()) {
      ARROW_ASSIGN_OR_RAISE(auto f, ToDataFile(info, format, "source"));
      out.push_back(std::move(f));
      return out;
    }
    ARROW_ASSIGN_OR_RAISE(auto files, ListFilesBelow(fs, spec));
    for (const auto& info2 : files) {
      ARROW_ASSIGN_OR_RAISE(auto f, ToDataFile(info2, format, "source"));
      out.push_back(std::move(f));
    }
  } else {
    // The fixed prefix: every component before the first one with a glob.
    size_t glob_at = spec.find_first_of("*?[");
    size_t slash = spec.rfind('/', glob_at);
    std::string base = slash == std::string::npos ? "." : spec.substr(0, slash);
    if (base.empty()) base = "/";
    ARROW_ASSIGN_OR_RAISE(auto files, ListFilesBelow(fs, base));
    for (const auto& info : files) {
      if (fnmatch(spec.c_str(), info.path().c_str(), FNM_PATHNAME) != 0) continue;
      ARROW_ASSIGN_OR_RAISE(auto f, ToDataFile(info, format, "source"));
      out.push_back(std::move(f));
    }
  }
  if (out.empty()) {
    return arrow::Status::Invalid("source '", spec, "' matches no data files");
  }
  SortByPath(&out);
  return out;
}

arrow::Result<std::vector<DataFile>> ListTargetFiles(arrow::fs::FileSystem& fs,
                                                     const std::string& dir) {
  ARROW_ASSIGN_OR_RAISE(auto info, fs.GetFileInfo(dir));
  if (info.type() == arrow::fs::FileType::NotFound) return std::vector<DataFile>{};
  if (info.IsFile()) {
    return arrow::Status::Invalid("target '", dir,
                                  "' is a file; a keyed write needs a directory of files");
  }
  ARROW_ASSIGN_OR_RAISE(auto files, ListFilesBelow(fs, dir));
  std::vector<DataFile> out;
  for (const auto& f : files) {
    ARROW_ASSIGN_OR_RAISE(auto df, ToDataFile(f, std::nullopt, "target"));
    out.push_back(std::move(df));
  }
  SortByPath(&out);
  return out;
}

}  // namespace thund::engine::keyed
