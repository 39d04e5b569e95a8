#include "engine/batch/merge_table.h"

#include "engine/fs/filesystem_uri.h"

#include <cctype>
#include <filesystem>
#include <set>

#include <arrow/array.h>
#include <arrow/builder.h>
#include <arrow/compute/api.h>
#include <arrow/memory_pool.h>
#include <parquet/arrow/reader.h>

#include "engine/batch/compute_init.h"
#include "engine/batch/merge_rows.h"
#include "engine/batch/parquet_part_writer.h"
#include "engine/batch/schema_conform.h"
#include "engine/duckdb/duckdb_session.h"
#include "ir/file_uri.h"

namespace thund::engine::batch {
namespace {

constexpr const char* kNewRows = "the new rows";
constexpr const char* kDeletedKeys = "the deleted keys";

arrow::Result<std::shared_ptr<arrow::Int64Array>> Indices(const std::vector<int64_t>& v) {
  arrow::Int64Builder b;
  ARROW_RETURN_NOT_OK(b.AppendValues(v));
  std::shared_ptr<arrow::Int64Array> out;
  ARROW_RETURN_NOT_OK(b.Finish(&out));
  return out;
}

// The rows of `t` at `indices`, in that order, with `schema`.
arrow::Result<std::shared_ptr<arrow::Table>> TakeRows(
    const std::shared_ptr<arrow::Table>& t, const std::vector<int64_t>& indices,
    const std::shared_ptr<arrow::Schema>& schema) {
  ARROW_ASSIGN_OR_RAISE(auto array, Indices(indices));
  ARROW_ASSIGN_OR_RAISE(arrow::Datum taken,
                        arrow::compute::Take(arrow::Datum(t), arrow::Datum(array)));
  return arrow::Table::Make(schema, taken.table()->columns(), static_cast<int64_t>(indices.size()));
}

}  // namespace

MergeTable::MergeTable(DatasetStore store, std::string name, std::string path,
                       std::vector<std::string> keys, MergeTableOptions options)
    : store_(std::move(store)),
      name_(std::move(name)),
      path_(std::move(path)),
      keys_(std::move(keys)),
      options_(options) {}

MergeTable::MergeTable(MergeTable&&) noexcept = default;
MergeTable& MergeTable::operator=(MergeTable&&) noexcept = default;
MergeTable::~MergeTable() = default;

arrow::Result<MergeTable> MergeTable::Open(std::shared_ptr<arrow::fs::FileSystem> fs,
                                           std::string location, std::vector<std::string> keys,
                                           MergeTableOptions options) {
  std::string path, parent, name;
  if (IsObjectStoreUri(location)) {
    // s3://bucket/prefix/table: versions under the table's prefix, in `fs`.
    path = ObjectStoreUri(location);
    while (!path.empty() && path.back() == '/') path.pop_back();
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash < std::string("s3://x").size()) {
      return arrow::Status::Invalid("merge table location '", location,
                                    "': name a prefix below the bucket (s3://bucket/table)");
    }
    parent = path.substr(0, slash);
    name = path.substr(slash + 1);
  } else {
    auto local = internal::LocalPathOf(location);
    if (!local.ok()) {
      return arrow::Status::Invalid("merge table location ", local.status().message());
    }
    if (local->empty() || local->find("://") != std::string::npos) {
      return arrow::Status::NotImplemented("merge table location '", location,
                                           "': a merge table is a local directory or an s3:// ",
                                           "prefix");
    }
    std::error_code ec;
    path = std::filesystem::absolute(*local, ec).lexically_normal().string();
    if (ec) return arrow::Status::IOError("merge table location '", location, "': ", ec.message());
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    const std::filesystem::path p(path);
    parent = p.parent_path().string();
    name = p.filename().string();
  }
  if (arrow::Status st = CheckStorableName(name); !st.ok()) {
    return arrow::Status::Invalid("merge table location '", location, "': its last component ",
                                  "is the table's directory name: ", st.message());
  }
  if (keys.empty()) {
    return arrow::Status::Invalid("merge table '", path, "': no key columns given");
  }
  std::set<std::string> seen;
  for (const auto& key : keys) {
    std::string lower = key;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key.empty() || !seen.insert(key).second || lower == "__thund_row") {
      return arrow::Status::Invalid("merge table '", path, "': key '", key,
                                    "' is empty, listed twice or reserved (__thund_row)");
    }
  }
  ARROW_ASSIGN_OR_RAISE(auto layout, StorageLayout::Make(parent));
  MergeTable table(DatasetStore(std::move(fs), std::move(layout)), name, path, std::move(keys),
                   options);
  ARROW_ASSIGN_OR_RAISE(auto current, table.Refresh());
  // A writer opens the table: a kill between an earlier commit's two renames
  // left the `current` symlink behind `_current`.
  if (current) table.store_.RepairLink(table.name_, current->version);
  return table;
}

arrow::Result<std::optional<VersionManifest>> MergeTable::Refresh() {
  ARROW_ASSIGN_OR_RAISE(auto current, store_.Current(name_));
  version_ = current ? current->version : 0;
  applied_epoch_ = current ? current->epoch.value_or(0) : 0;
  return current;
}

arrow::Result<std::shared_ptr<arrow::Table>> MergeTable::ReadVersion(
    const VersionManifest& m) const {
  const std::string dir = store_.layout().VersionDir(name_, m.version);
  std::vector<std::shared_ptr<arrow::Table>> parts;
  for (const auto& file : m.files) {
    const std::string path = dir + "/" + file.file;
    auto read = [&]() -> arrow::Result<std::shared_ptr<arrow::Table>> {
      ARROW_ASSIGN_OR_RAISE(auto input, store_.fs().OpenInputFile(path));
      ARROW_ASSIGN_OR_RAISE(auto reader,
                            parquet::arrow::OpenFile(input, arrow::default_memory_pool()));
      return reader->ReadTable();
    }();
    if (!read.ok()) {
      return arrow::Status::IOError("merge table '", path_, "': reading ", path, ": ",
                                    read.status().message());
    }
    parts.push_back(std::move(*read));
  }
  if (parts.empty()) {
    return arrow::Status::IOError("merge table '", path_, "': version ", VersionName(m.version),
                                  " lists no files");
  }
  const auto schema = parts[0]->schema();
  for (auto& part : parts) {
    if (!part->schema()->Equals(*schema, /*check_metadata=*/false)) {
      return arrow::Status::IOError("merge table '", path_, "': the files of version ",
                                    VersionName(m.version), " have different schemas");
    }
    part = arrow::Table::Make(schema, part->columns(), part->num_rows());
  }
  return arrow::ConcatenateTables(parts);
}

arrow::Result<std::shared_ptr<arrow::Table>> MergeTable::Read() const {
  ARROW_ASSIGN_OR_RAISE(auto current, store_.Current(name_));
  if (!current) return std::shared_ptr<arrow::Table>();
  return ReadVersion(*current);
}

arrow::Result<MergeResult> MergeTable::Apply(int64_t epoch, std::shared_ptr<arrow::Table> rows,
                                             std::shared_ptr<arrow::Table> deleted_keys,
                                             const std::string& run_id) {
  return Write(epoch, std::move(rows), std::move(deleted_keys), run_id, /*replace=*/false);
}

arrow::Result<MergeResult> MergeTable::Replace(int64_t epoch, std::shared_ptr<arrow::Table> rows,
                                               const std::string& run_id) {
  return Write(epoch, std::move(rows), nullptr, run_id, /*replace=*/true);
}

arrow::Result<MergeResult> MergeTable::Write(int64_t epoch, std::shared_ptr<arrow::Table> rows,
                                             std::shared_ptr<arrow::Table> deleted_keys,
                                             const std::string& run_id, bool replace) {
  if (epoch <= 0) {
    return arrow::Status::Invalid("merge table '", path_, "': epoch ", epoch,
                                  " is not positive (epochs start at 1)");
  }
  ARROW_RETURN_NOT_OK(EnsureComputeInitialized());
  ARROW_ASSIGN_OR_RAISE(auto manifest, Refresh());
  MergeResult result;
  if (epoch <= applied_epoch_) {
    result.skipped_replay = true;
    result.rows = manifest ? manifest->rows : 0;
    result.version = version_;
    return result;
  }
  // The schema: the current version's, else the first rows'.
  std::shared_ptr<arrow::Table> current;
  if (manifest) {
    ARROW_ASSIGN_OR_RAISE(current, ReadVersion(*manifest));
  }
  std::shared_ptr<arrow::Schema> schema =
      current ? current->schema() : rows ? rows->schema() : nullptr;
  if (!schema) return result;  // nothing to write, and no schema to write it with
  for (const auto& key : keys_) {
    if (schema->GetFieldIndex(key) < 0) {
      return arrow::Status::Invalid("merge table '", path_, "': key column '", key, "' is not in ",
                                    current ? "the table " : "the new rows ",
                                    DescribeSchema(*schema));
    }
  }
  if (!current) {
    ARROW_ASSIGN_OR_RAISE(current, arrow::Table::MakeEmpty(schema));
  }
  if (rows) {
    ARROW_ASSIGN_OR_RAISE(rows, merge::ConformRows(path_, *rows, schema, kNewRows));
  } else {
    ARROW_ASSIGN_OR_RAISE(rows, arrow::Table::MakeEmpty(schema));
  }
  ARROW_RETURN_NOT_OK(merge::CheckNoNullKeys(path_, *rows, keys_, kNewRows));
  if (deleted_keys) {
    ARROW_ASSIGN_OR_RAISE(deleted_keys,
                          merge::ConformKeys(path_, *deleted_keys, *schema, keys_, kDeletedKeys));
    ARROW_RETURN_NOT_OK(merge::CheckNoNullKeys(path_, *deleted_keys, keys_, kDeletedKeys));
  }
  if (!session_) {
    DuckDbSessionOptions o;
    o.threads = options_.threads;
    ARROW_ASSIGN_OR_RAISE(session_, DuckDbSession::Open(o));
  }
  ARROW_ASSIGN_OR_RAISE(auto plan, merge::MatchKeys(*session_, path_, *current, *rows,
                                                    deleted_keys.get(), keys_, replace));
  ARROW_ASSIGN_OR_RAISE(auto kept, TakeRows(current, plan.kept, schema));
  ARROW_ASSIGN_OR_RAISE(auto written, TakeRows(rows, plan.written, schema));
  ARROW_ASSIGN_OR_RAISE(auto merged, arrow::ConcatenateTables({kept, written}));

  auto begun = store_.Begin(name_);
  if (!begun.ok()) {
    return begun.status().WithMessage("merge table '", path_, "': ", begun.status().message());
  }
  const PendingVersion pending = std::move(*begun);
  auto commit = [&]() -> arrow::Status {
    ARROW_ASSIGN_OR_RAISE(auto writer, ParquetPartWriter::Open(store_.shared_fs(), pending.dir,
                                                               "part-00000", schema));
    ARROW_RETURN_NOT_OK(writer->WriteTable(*merged));
    ARROW_ASSIGN_OR_RAISE(auto files, writer->Finish("merge"));
    VersionManifest m;
    m.run_id = run_id;
    m.rows = merged->num_rows();
    m.files = std::move(files);
    m.schema = DescribeSchema(*schema);
    m.epoch = epoch;
    return store_.Commit(pending, std::move(m), &result.notes);
  };
  if (arrow::Status st = commit(); !st.ok()) {
    // A failure reported after the commit point leaves the new version
    // current: it must not be abandoned.
    auto now = store_.Current(name_);
    if (!now.ok() || !*now || (*now)->version != pending.version) {
      store_.Abandon(pending);
      return st.WithMessage("merge table '", path_, "': ", st.message());
    }
    result.notes.push_back("merge table '" + path_ + "': committed " +
                           VersionName(pending.version) + ", then: " + st.message());
  }
  version_ = pending.version;
  applied_epoch_ = epoch;
  result.inserted = plan.inserted;
  result.updated = plan.updated;
  result.deleted = plan.deleted;
  result.rows = merged->num_rows();
  result.version = pending.version;
  return result;
}

}  // namespace thund::engine::batch
