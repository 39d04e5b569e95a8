#include "engine/batch/sink_writer.h"

#include <filesystem>

#include <arrow/array.h>
#include <arrow/csv/writer.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/ipc/writer.h>
#include <arrow/memory_pool.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

#include "engine/fs/atomic_write.h"
#include "engine/fs/filesystem_uri.h"
#include "ir/file_uri.h"

namespace thund::engine::batch {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

arrow::Result<SinkTarget> ResolveSink(const Dataset& sink, const StorageLayout& layout) {
  SinkTarget t;
  t.format = Name(sink.storage.format.value_or(FileFormat::kParquet));
  t.overwrite = sink.storage.mode == WriteMode::kOverwrite;
  if (t.noop()) {
    t.location = "noop";  // nothing is written anywhere (validation refuses a location)
    return t;
  }
  auto local = internal::LocalPathOf(sink.storage.location);
  if (!local.ok()) {
    return arrow::Status::Invalid("sink '", sink.name, "': location ", local.status().message());
  }
  const std::string& loc = *local;
  if (loc.empty()) {
    t.path = layout.DefaultSinkDir(sink.name);
    t.location = layout.Uri(t.path);
  } else if (IsObjectStoreUri(loc)) {
    StringMap s3_options;
    for (const auto& [key, value] : sink.storage.options) {
      if (IsS3OptionKey(key)) s3_options[key] = value;
    }
    auto resolved = ResolveLocation(loc, s3_options);
    if (!resolved.ok()) {
      return arrow::Status::Invalid("sink '", sink.name, "': ", resolved.status().message());
    }
    t.path = resolved->path;
    t.location = resolved->uri;
    t.fs = resolved->fs;
  } else {
    if (loc.find("://") != std::string::npos) {
      return arrow::Status::NotImplemented("sink '", sink.name, "': location '", loc,
                                           "': sinks write local files or s3:// objects");
    }
    std::error_code ec;
    t.path = std::filesystem::absolute(loc, ec).lexically_normal().string();
    while (t.path.size() > 1 && t.path.back() == '/') t.path.pop_back();
    t.location = t.path;
    // A local sink of a run whose storage root is on S3.
    if (!layout.local()) t.fs = std::make_shared<arrow::fs::LocalFileSystem>();
  }
  t.single_file = EndsWith(loc, ".parquet") || EndsWith(loc, ".csv") || EndsWith(loc, ".json");
  auto opt = [&](const char* key) -> const std::string* {
    auto it = sink.storage.options.find(key);
    return it == sink.storage.options.end() ? nullptr : &it->second;
  };
  if (const std::string* h = opt("header")) t.header = *h != "false";
  for (const char* key : {"delimiter", "delim", "sep"}) {
    if (const std::string* d = opt(key)) {
      if (d->size() != 1) {
        return arrow::Status::Invalid("sink '", sink.name, "': ", key,
                                      " must be one character, got '", *d, "'");
      }
      t.delimiter = (*d)[0];
    }
  }
  return t;
}

std::string JsonSelectList() { return "CAST(to_json(\"__thund_q\") AS VARCHAR) AS \"json\""; }

void AppendFiniteJson(std::string_view json, std::string* out) {
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      out->push_back(c);
      if (c == '\\' && i + 1 < json.size()) {
        out->push_back(json[++i]);
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') in_string = true;
    bool replaced = false;
    for (std::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (json.substr(i, word.size()) == word) {
        out->append("null");
        i += word.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) out->push_back(c);
  }
}

struct SinkWriter::Impl {
  std::shared_ptr<arrow::fs::FileSystem> fs;
  SinkTarget target;
  std::shared_ptr<arrow::Schema> schema;
  std::string tmp_path;
  std::shared_ptr<arrow::io::OutputStream> out;
  std::unique_ptr<parquet::arrow::FileWriter> parquet;
  std::shared_ptr<arrow::ipc::RecordBatchWriter> csv;
  bool closed = false;

  arrow::Status Close() {
    if (closed) return arrow::Status::OK();
    closed = true;
    arrow::Status st;
    if (parquet) st = parquet->Close();
    if (csv && st.ok()) st = csv->Close();
    if (!out) return st;
    arrow::Status c = out->Close();
    return st.ok() ? c : st;
  }
};

arrow::Result<std::unique_ptr<SinkWriter>> SinkWriter::Open(
    std::shared_ptr<arrow::fs::FileSystem> fs, SinkTarget target,
    std::shared_ptr<arrow::Schema> schema, const std::string& run_id) {
  std::unique_ptr<SinkWriter> w(new SinkWriter());
  w->impl_ = std::make_unique<Impl>();
  Impl& k = *w->impl_;
  k.fs = std::move(fs);
  k.schema = std::move(schema);
  k.target = std::move(target);
  const SinkTarget& t = k.target;
  if (t.noop()) {
    w->final_path_ = "noop";  // rows are counted by Write, nothing is opened
    return w;
  }
  std::string dir;
  if (t.single_file) {
    std::filesystem::path p(t.path);
    dir = p.parent_path().string();
    w->final_path_ = t.overwrite ? t.path
                                 : (p.parent_path() / (p.stem().string() + "-" + run_id +
                                                       p.extension().string()))
                                       .string();
  } else {
    dir = t.path;
    w->final_path_ = t.path + "/part-" + run_id + "." + t.format;
  }
  ARROW_RETURN_NOT_OK(k.fs->CreateDir(dir, /*recursive=*/true));
  // An S3 object appears whole when its upload completes (no rename there):
  // written in place.
  k.tmp_path = IsObjectStorePath(w->final_path_) ? w->final_path_
                                                 : TemporaryPathFor(w->final_path_);
  ARROW_ASSIGN_OR_RAISE(k.out, k.fs->OpenOutputStream(k.tmp_path));
  if (t.format == "parquet") {
    auto props = parquet::WriterProperties::Builder().compression(arrow::Compression::SNAPPY)->build();
    auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
    ARROW_ASSIGN_OR_RAISE(k.parquet, parquet::arrow::FileWriter::Open(*k.schema,
                                                                      arrow::default_memory_pool(),
                                                                      k.out, props, arrow_props));
  } else if (t.format == "csv") {
    auto options = arrow::csv::WriteOptions::Defaults();
    options.include_header = t.header;
    options.delimiter = t.delimiter;
    ARROW_ASSIGN_OR_RAISE(k.csv, arrow::csv::MakeCSVWriter(k.out, k.schema, options));
  } else if (k.schema->num_fields() != 1 ||
             k.schema->field(0)->type()->id() != arrow::Type::STRING) {
    return arrow::Status::Invalid("a JSON sink takes one utf8 column of JSON objects");
  }
  return w;
}

SinkWriter::~SinkWriter() {
  if (impl_ && !impl_->closed) Abort();
}

arrow::Status SinkWriter::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  Impl& k = *impl_;
  rows_ += batch->num_rows();
  if (k.target.noop()) return arrow::Status::OK();
  if (k.parquet) return k.parquet->WriteRecordBatch(*batch);
  if (k.csv) return k.csv->WriteRecordBatch(*batch);
  auto lines = std::static_pointer_cast<arrow::StringArray>(batch->column(0));
  std::string buffer;
  for (int64_t i = 0; i < lines->length(); ++i) {
    if (lines->IsNull(i)) continue;
    AppendFiniteJson(lines->GetView(i), &buffer);
    buffer.push_back('\n');
  }
  return k.out->Write(buffer.data(), static_cast<int64_t>(buffer.size()));
}

arrow::Result<std::string> SinkWriter::Commit() {
  Impl& k = *impl_;
  ARROW_RETURN_NOT_OK(k.Close());
  if (k.target.noop()) return final_path_;
  if (k.tmp_path != final_path_) ARROW_RETURN_NOT_OK(k.fs->Move(k.tmp_path, final_path_));
  if (k.target.overwrite && !k.target.single_file) {
    arrow::fs::FileSelector sel;
    sel.base_dir = k.target.path;
    ARROW_ASSIGN_OR_RAISE(auto entries, k.fs->GetFileInfo(sel));
    const std::string keep = std::filesystem::path(final_path_).filename().string();
    for (const auto& e : entries) {
      const std::string base = e.base_name();
      if (e.type() != arrow::fs::FileType::File || base == keep || base.empty() ||
          base[0] == '_' || base[0] == '.') {
        continue;
      }
      ARROW_RETURN_NOT_OK(k.fs->DeleteFile(e.path()));
    }
  }
  return final_path_;
}

void SinkWriter::Abort() {
  Impl& k = *impl_;
  if (k.out && k.tmp_path == final_path_) {
    // Written in place (S3): abandon the upload, so neither a partial object
    // appears nor an existing one is replaced or deleted.
    k.closed = true;
    (void)k.out->Abort();
    return;
  }
  (void)k.Close();
  if (k.out) (void)k.fs->DeleteFile(k.tmp_path);
}

}  // namespace thund::engine::batch
