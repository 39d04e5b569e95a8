#include "engine/stream/file_drop_source.h"

#include <arrow/filesystem/filesystem.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/io/interfaces.h>
#include <fnmatch.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/batch/compute_init.h"
#include "engine/fs/filesystem_uri.h"
#include "thund/json_text.h"

namespace thund::engine::stream {
namespace {

bool HasGlob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// True when a component of `path` below `base` marks it as not (yet) data.
bool IsIgnored(const std::string& path, const std::string& base) {
  std::string_view rest(path);
  if (rest.substr(0, base.size()) == base) rest.remove_prefix(base.size());
  size_t start = 0;
  while (start < rest.size()) {
    size_t end = rest.find('/', start);
    if (end == std::string_view::npos) end = rest.size();
    std::string_view part = rest.substr(start, end - start);
    if (!part.empty() && (part[0] == '.' || part[0] == '_')) return true;
    start = end + 1;
  }
  for (std::string_view suffix : {".tmp", ".inprogress", ".crc", ".partial"}) {
    if (EndsWith(path, suffix)) return true;
  }
  return false;
}

arrow::Result<int64_t> ParseInt(const std::string& flow, const std::string& key,
                                const std::string& value, int64_t min) {
  int64_t out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size() || out < min) {
    return arrow::Status::Invalid("flow '", flow, "': file drop option ", key, " = '", value,
                                  "': must be an integer >= ", min);
  }
  return out;
}

int64_t MtimeNs(const arrow::fs::FileInfo& info) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(info.mtime().time_since_epoch())
      .count();
}

}  // namespace

arrow::Result<std::unique_ptr<StreamSource>> FileDropSource::Make(const FileSource& spec,
                                                                  const StreamSourceContext& ctx) {
  ARROW_RETURN_NOT_OK(batch::EnsureComputeInitialized());  // casts of widened columns
  Settings s;
  s.flow = ctx.flow != nullptr ? ctx.flow->name : std::string("?");
  if (!spec.format) {
    return arrow::Status::Invalid("flow '", s.flow,
                                  "': file drop has no format; use parquet, csv or json "
                                  "(newline-delimited)");
  }
  switch (*spec.format) {
    case FileFormat::kParquet: s.format.format = DropFormat::kParquet; break;
    case FileFormat::kCsv: s.format.format = DropFormat::kCsv; break;
    case FileFormat::kJson: s.format.format = DropFormat::kJson; break;
    case FileFormat::kNoop:
      return arrow::Status::Invalid("flow '", s.flow,
                                    "': noop is a sink format; a file drop reads parquet, csv "
                                    "or json");
  }
  const bool csv = s.format.format == DropFormat::kCsv;
  for (const auto& [key, value] : spec.options) {
    if (key == "max_files_per_trigger") {
      ARROW_ASSIGN_OR_RAISE(s.max_files, ParseInt(s.flow, key, value, 1));
    } else if (key == "min_file_age_ms") {
      ARROW_ASSIGN_OR_RAISE(s.min_age_ms, ParseInt(s.flow, key, value, 0));
    } else if (key == "header" && csv) {
      if (value != "true" && value != "false") {
        return arrow::Status::Invalid("flow '", s.flow, "': file drop option header = '", value,
                                      "': use true or false");
      }
      s.format.header = value == "true";
    } else if (key == "delimiter" && csv) {
      if (value.size() != 1) {
        return arrow::Status::Invalid("flow '", s.flow, "': file drop option delimiter = '", value,
                                      "': must be exactly one character");
      }
      s.format.delimiter = value[0];
    } else if (key == "bad_rows") {
      return arrow::Status::Invalid("flow '", s.flow,
                                    "': option bad_rows is not supported for file drops (a "
                                    "malformed row fails the trigger); remove the option");
    } else {
      return arrow::Status::Invalid(
          "flow '", s.flow, "': file drop option '", key, "' is unknown; valid options: ",
          csv ? "max_files_per_trigger, min_file_age_ms, header, delimiter"
              : "max_files_per_trigger, min_file_age_ms");
    }
  }
  auto fs = ctx.filesystem;
  if (fs == nullptr) fs = std::make_shared<arrow::fs::LocalFileSystem>();
  s.path = spec.path;
  if (IsObjectStoreUri(spec.path)) {
    // s3://bucket/prefix: Arrow's S3 filesystem, "bucket/prefix" inside it.
    auto loc = ResolveLocation(spec.path);
    if (!loc.ok()) return arrow::Status::Invalid("flow '", s.flow, "': ", loc.status().message());
    fs = loc->fs;
    s.path = loc->path;
    s.object_store = true;
  }
  // Local paths (also through the tests' fault-injecting wrapper) are made
  // absolute, relative to the working directory; others are the filesystem's.
  if (fs->type_name() == "local" || fs->type_name() == "fault-injecting") {
    s.path = std::filesystem::absolute(spec.path).lexically_normal().string();
  }
  while (s.path.size() > 1 && s.path.back() == '/') s.path.pop_back();
  std::shared_ptr<arrow::Schema> declared;
  std::string dataset;
  if (ctx.target != nullptr) {
    declared = ctx.target->schema.arrow;
    dataset = ctx.target->name;
  }
  return std::unique_ptr<StreamSource>(
      new FileDropSource(std::move(s), std::move(fs), std::move(declared), std::move(dataset)));
}

FileDropSource::FileDropSource(Settings settings, std::shared_ptr<arrow::fs::FileSystem> fs,
                               std::shared_ptr<arrow::Schema> declared, std::string dataset)
    : s_(std::move(settings)), fs_(std::move(fs)), schema_(std::move(declared)) {
  if (schema_ != nullptr) schema_origin_ = "declared by dataset '" + dataset + "'";
}

arrow::Result<std::vector<FileDropSource::FileState>> FileDropSource::List() const {
  std::string base = s_.path;
  if (HasGlob(base)) {
    const size_t slash = base.rfind('/', base.find_first_of("*?["));
    base = slash == std::string::npos ? "." : (slash == 0 ? "/" : base.substr(0, slash));
  }
  ARROW_ASSIGN_OR_RAISE(auto info, fs_->GetFileInfo(base));
  std::vector<arrow::fs::FileInfo> infos;
  if (info.IsFile() && base == s_.path) {
    infos.push_back(info);
  } else if (info.IsDirectory()) {
    arrow::fs::FileSelector sel;
    sel.base_dir = base;
    sel.recursive = true;
    ARROW_ASSIGN_OR_RAISE(infos, fs_->GetFileInfo(sel));
  } else if (s_.object_store && info.type() == arrow::fs::FileType::NotFound) {
    return std::vector<FileState>();  // no object under the prefix yet
  } else {
    return arrow::Status::Invalid("flow '", s_.flow, "': file drop directory '", base,
                                  "' does not exist; create it (it may stay empty until files "
                                  "arrive) or fix the path");
  }
  std::vector<FileState> out;
  for (const auto& f : infos) {
    if (!f.IsFile() || IsIgnored(f.path(), base)) continue;
    if (HasGlob(s_.path) && fnmatch(s_.path.c_str(), f.path().c_str(), FNM_PATHNAME) != 0) {
      continue;
    }
    out.push_back({f.path(), f.size(), MtimeNs(f)});
  }
  std::sort(out.begin(), out.end(),
            [](const FileState& a, const FileState& b) { return a.path < b.path; });
  return out;
}

arrow::Result<std::shared_ptr<arrow::Table>> FileDropSource::TryRead(
    const FileState& file, const std::shared_ptr<arrow::Schema>& expected,
    std::shared_ptr<arrow::Schema>* whole) const {
  *whole = nullptr;
  auto input = fs_->OpenInputFile(file.path);
  if (!input.ok()) return nullptr;  // gone (renamed or deleted) since the listing
  auto bytes = (*input)->Read(file.size);
  if (!bytes.ok()) {
    return arrow::Status::IOError("flow '", s_.flow, "': reading file '", file.path,
                                  "': ", bytes.status().message());
  }
  if ((*bytes)->size() != file.size) return nullptr;  // shrank or grew while reading
  ARROW_ASSIGN_OR_RAISE(auto after, fs_->GetFileInfo(file.path));
  if (!after.IsFile() || after.size() != file.size || MtimeNs(after) != file.mtime_ns) {
    return nullptr;  // changed since the listing
  }
  return ParseDropFile({s_.flow, file.path}, *bytes, s_.format, expected, read_only_, whole);
}

arrow::Status FileDropSource::RecoverSchema() {
  for (const auto& path : processed_order_) {
    auto info = fs_->GetFileInfo(path);
    if (!info.ok() || !info->IsFile()) continue;
    std::shared_ptr<arrow::Schema> whole;
    auto table = TryRead({path, info->size(), MtimeNs(*info)}, nullptr, &whole);
    if (!table.ok() || *table == nullptr) continue;
    schema_ = (whole ? whole : (*table)->schema())->RemoveMetadata();
    schema_origin_ = "as in the first file, '" + path + "'";
    return arrow::Status::OK();
  }
  return arrow::Status::OK();
}

arrow::Result<std::optional<SourceBatch>> FileDropSource::Next(const TriggerLimit& limit) {
  ARROW_ASSIGN_OR_RAISE(auto listed, List());
  if (schema_ == nullptr && !processed_.empty()) ARROW_RETURN_NOT_OK(RecoverSchema());
  std::shared_ptr<arrow::Schema> schema = schema_;
  std::string origin = schema_origin_;
  const auto now_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  std::vector<std::shared_ptr<arrow::Table>> tables;
  std::vector<FileState> taken;
  for (const auto& file : listed) {
    if (processed_.count(file.path) > 0) continue;
    if (!limit.take_all && s_.max_files > 0 && static_cast<int64_t>(taken.size()) >= s_.max_files) {
      break;
    }
    if (s_.min_age_ms > 0 && now_ns - file.mtime_ns < s_.min_age_ms * 1000000) continue;
    std::shared_ptr<arrow::Schema> whole;
    ARROW_ASSIGN_OR_RAISE(auto table, TryRead(file, schema, &whole));
    if (table == nullptr) continue;  // still being written
    if (schema == nullptr) {
      schema = (whole ? whole : table->schema())->RemoveMetadata();
      origin = "as in the first file, '" + file.path + "'";
    }
    if (whole) {
      // Only some columns were read: the others are checked by name and type
      // from the footer, the ones read as always.
      ARROW_ASSIGN_OR_RAISE(auto none, arrow::Table::MakeEmpty(whole));
      ARROW_RETURN_NOT_OK(ConformDropFile({s_.flow, file.path}, none, schema, origin).status());
      arrow::FieldVector read;
      for (const auto& f : schema->fields()) {
        if (table->schema()->GetFieldIndex(f->name()) >= 0) read.push_back(f);
      }
      ARROW_ASSIGN_OR_RAISE(
          table, ConformDropFile({s_.flow, file.path}, table, arrow::schema(read), origin));
    } else {
      ARROW_ASSIGN_OR_RAISE(table, ConformDropFile({s_.flow, file.path}, table, schema, origin));
    }
    tables.push_back(std::move(table));
    taken.push_back(file);
  }
  if (taken.empty()) return std::nullopt;
  ARROW_ASSIGN_OR_RAISE(auto rows, arrow::ConcatenateTables(tables));
  schema_ = schema;
  schema_origin_ = origin;
  for (const auto& file : taken) {
    processed_[file.path] = file;
    processed_order_.push_back(file.path);
  }
  SourceBatch out;
  out.rows = std::move(rows);
  out.position_summary =
      "files=" + std::to_string(processed_.size()) + " (+" + std::to_string(taken.size()) + ")";
  return out;
}

std::string FileDropSource::Position() const {
  if (processed_order_.empty()) return "";
  nlohmann::json files = nlohmann::json::array();
  for (const auto& path : processed_order_) {
    const FileState& f = processed_.at(path);
    files.push_back({{"path", f.path}, {"size", f.size}, {"mtime_ns", f.mtime_ns}});
  }
  return JsonText(nlohmann::json{{"files", files}});
}

arrow::Status FileDropSource::Restore(const std::string& position) {
  std::map<std::string, FileState> processed;
  std::vector<std::string> order;
  if (!position.empty()) {
    auto doc = nlohmann::json::parse(position, nullptr, /*allow_exceptions=*/false);
    bool ok =
        !doc.is_discarded() && doc.is_object() && doc.contains("files") && doc["files"].is_array();
    for (const auto& f : ok ? doc["files"] : nlohmann::json::array()) {
      if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
          !f["size"].is_number_integer() || !f.contains("mtime_ns") ||
          !f["mtime_ns"].is_number_integer()) {
        ok = false;
        break;
      }
      FileState state{f["path"].get<std::string>(), f["size"].get<int64_t>(),
                      f["mtime_ns"].get<int64_t>()};
      if (processed.emplace(state.path, state).second) order.push_back(state.path);
    }
    if (!ok) {
      return arrow::Status::Invalid("flow '", s_.flow, "': '", position.substr(0, 200),
                                    "' is not a file-drop position (expected {\"files\": "
                                    "[{\"path\", \"size\", \"mtime_ns\"}, ...]}); the checkpoint "
                                    "belongs to another kind of source");
    }
  }
  processed_ = std::move(processed);
  processed_order_ = std::move(order);
  return arrow::Status::OK();
}

}  // namespace thund::engine::stream
