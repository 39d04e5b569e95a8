#include "engine/keyed/output_file_writer.h"

#include <arrow/buffer.h>
#include <arrow/csv/writer.h>
#include <arrow/io/interfaces.h>
#include <arrow/ipc/writer.h>
#include <fcntl.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "engine/exec/catch_all.h"
#include "engine/exec/thread_pool.h"
#include "engine/fs/atomic_write.h"
#include "engine/keyed/data_file_reader.h"
#include "engine/keyed/direct_file.h"
#include "engine/keyed/memory_pool.h"
#include "engine/keyed/ndjson_writer.h"
#include "engine/keyed/parquet_join.h"

namespace thund::engine::keyed {
namespace {

arrow::Status IoError(const char* what, const std::string& file) {
  return arrow::Status::IOError(what, " '", file, "': ", std::strerror(errno));
}

// The last step of writing `path` through the temporary `tmp`: renamed into
// place when `written` is OK, else removed. Returns what went wrong first.
arrow::Status RenameIntoPlace(arrow::Status written, const std::string& tmp,
                              const std::string& path) {
  if (written.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    written = IoError("cannot rename", tmp);
  }
  if (!written.ok()) ::unlink(tmp.c_str());
  return written;
}

// Files at least this big are copied by a DirectFile (no page cache).
constexpr int64_t kDirectCopyBytes = int64_t{1} << 20;

arrow::Status CopyDirect(int in, int64_t size, const std::string& from, const std::string& tmp) {
  ARROW_ASSIGN_OR_RAISE(auto out, DirectFile::Create(tmp));
  arrow::Status st = out->AppendFromFd(in, from, 0, size);
  arrow::Status closed = out->Close();
  return st.ok() ? closed : st;
}

// Copies `size` bytes of `in` to `tmp` with copy_file_range(2): the kernel
// moves the bytes page cache to page cache (or shares extents where the
// filesystem can). NotImplemented when the kernel or filesystem cannot.
arrow::Status CopyInKernel(int in, int64_t size, const std::string& from, const std::string& tmp) {
  const int out = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (out < 0) return IoError("cannot create", tmp);
  arrow::Status status;
  off_t left = size;
  while (left > 0) {
    const ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, static_cast<size_t>(left), 0);
    if (n > 0) {
      left -= n;
      continue;
    }
    if (n == 0) {
      status = arrow::Status::IOError("'", from, "' shrank while being copied");
    } else if (errno == EXDEV || errno == ENOSYS || errno == EINVAL || errno == EOPNOTSUPP) {
      status = arrow::Status::NotImplemented("copy_file_range unavailable");
    } else {
      status = IoError("cannot copy", from);
    }
    break;
  }
  if (::close(out) != 0 && status.ok()) status = IoError("cannot close", tmp);
  return status;
}

// Copies local file `from` to `path` through a temporary renamed into place
// (like WriteFileAtomically): big files by CopyDirect, others by CopyInKernel.
// On failure nothing is left behind (the caller then streams the bytes
// through the filesystem instead, and reports the error as Arrow words it).
arrow::Status CopyLocalFileAtomically(const std::string& from, const std::string& path,
                                      bool direct_io) {
  const int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return IoError("cannot open", from);
  struct stat st {};
  if (::fstat(in, &st) != 0) {
    const arrow::Status status = IoError("cannot stat", from);
    ::close(in);
    return status;
  }
  const std::string tmp = TemporaryPathFor(path);
  arrow::Status status = direct_io && st.st_size >= kDirectCopyBytes
                             ? CopyDirect(in, st.st_size, from, tmp)
                             : CopyInKernel(in, st.st_size, from, tmp);
  ::close(in);
  return RenameIntoPlace(status, tmp, path);
}

// Joins the local Parquet files `sources` into `path` (WriteJoinedParquet)
// through a temporary renamed into place; nothing is left behind on failure.
arrow::Status JoinLocalFilesAtomically(arrow::fs::FileSystem& fs,
                                       const std::vector<std::string>& sources,
                                       const std::string& path) {
  const std::string tmp = TemporaryPathFor(path);
  ARROW_ASSIGN_OR_RAISE(auto out, DirectFile::Create(tmp));
  arrow::Status status = WriteJoinedParquet(fs, sources, out.get());
  const arrow::Status closed = out->Close();
  return RenameIntoPlace(status.ok() ? closed : status, tmp, path);
}

// A JoinSink over an output stream (other filesystems than local).
class StreamSink final : public JoinSink {
 public:
  explicit StreamSink(arrow::io::OutputStream* out) : out_(out) {}
  arrow::Status Append(std::string_view bytes) override {
    return out_->Write(bytes.data(), static_cast<int64_t>(bytes.size()));
  }
  arrow::Status AppendFrom(arrow::io::RandomAccessFile& file, int64_t offset,
                           int64_t length) override {
    constexpr int64_t kPiece = int64_t{4} << 20;
    for (int64_t at = 0; at < length; at += kPiece) {
      ARROW_ASSIGN_OR_RAISE(auto piece, file.ReadAt(offset + at, std::min(kPiece, length - at)));
      if (piece->size() != std::min(kPiece, length - at)) {
        return arrow::Status::IOError("a file to copy ended early");
      }
      ARROW_RETURN_NOT_OK(out_->Write(piece));
    }
    return arrow::Status::OK();
  }

 private:
  arrow::io::OutputStream* out_;
};

arrow::Status Encode(FileFormat format, const arrow::Schema& schema, int64_t row_group_rows,
                     const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches,
                     arrow::io::OutputStream* out) {
  // The stream is owned (and closed) by WriteFileAtomically.
  std::shared_ptr<arrow::io::OutputStream> sink(out, [](arrow::io::OutputStream*) {});
  switch (format) {
    case FileFormat::kParquet: {
      // Dictionary encoding pays off for repetitive strings; for numbers and
      // times it mostly costs a hash table per column chunk, so only string
      // and binary columns try it.
      parquet::WriterProperties::Builder builder;
      // Page and compression buffers from the recycling pool too: the default
      // allocator hands each row group's buffers back to the kernel.
      builder.compression(arrow::Compression::SNAPPY)
          ->max_row_group_length(row_group_rows)
          ->memory_pool(KeyedMemoryPool());
      for (const auto& field : schema.fields()) {
        const bool stringy =
            IsByteArrayStringType(*field->type()) || field->type()->id() == arrow::Type::DICTIONARY;
        if (!stringy && field->type()->num_fields() == 0) builder.disable_dictionary(field->name());
      }
      auto props = builder.build();
      auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
      ARROW_ASSIGN_OR_RAISE(auto writer, parquet::arrow::FileWriter::Open(
                                             schema, KeyedMemoryPool(), sink, props, arrow_props));
      for (const auto& b : batches) ARROW_RETURN_NOT_OK(writer->WriteRecordBatch(*b));
      return writer->Close();
    }
    case FileFormat::kCsv: {
      ARROW_ASSIGN_OR_RAISE(auto writer,
                            arrow::csv::MakeCSVWriter(sink, std::make_shared<arrow::Schema>(schema),
                                                      arrow::csv::WriteOptions::Defaults()));
      for (const auto& b : batches) ARROW_RETURN_NOT_OK(writer->WriteRecordBatch(*b));
      return writer->Close();
    }
    case FileFormat::kJson:
      for (const auto& b : batches) ARROW_RETURN_NOT_OK(WriteNdjson(*b, out));
      return arrow::Status::OK();
    case FileFormat::kNoop:
      break;  // never a keyed write's output (validation refuses it)
  }
  return arrow::Status::Invalid("unknown output format");
}

}  // namespace

OutputFileWriter::OutputFileWriter(std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir,
                                   OutputOptions options, std::shared_ptr<arrow::Schema> schema)
    : fs_(std::move(fs)),
      dir_(std::move(dir)),
      options_(std::move(options)),
      schema_(std::move(schema)),
      token_(UniqueToken()),
      gate_(std::make_shared<Gate>()) {
  gate_->writer = this;
}

arrow::Result<std::unique_ptr<OutputFileWriter>> OutputFileWriter::Make(
    std::shared_ptr<arrow::fs::FileSystem> fs, std::string dir, OutputOptions options,
    std::shared_ptr<arrow::Schema> schema) {
  if (options.rows_per_file <= 0 || options.row_group_rows <= 0 || options.threads <= 0) {
    return arrow::Status::Invalid("output: rows_per_file, row_group_rows and threads must be > 0");
  }
  auto st = fs->CreateDir(dir, /*recursive=*/true);
  if (!st.ok()) return st.WithMessage("creating target directory '", dir, "': ", st.message());
  return std::unique_ptr<OutputFileWriter>(
      new OutputFileWriter(std::move(fs), std::move(dir), std::move(options), std::move(schema)));
}

OutputFileWriter::~OutputFileWriter() { Close(); }

void OutputFileWriter::Close() {
  while (RunNextJob()) {
  }
  {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return running_ == 0; });
  }
  std::unique_lock<std::mutex> lock(gate_->mu);
  gate_->closed = true;
  gate_->cv.wait(lock, [&] { return gate_->active == 0; });
}

arrow::Status OutputFileWriter::Write(const std::shared_ptr<arrow::RecordBatch>& batch) {
  int64_t offset = 0;
  while (offset < batch->num_rows()) {
    const int64_t take =
        std::min(batch->num_rows() - offset, options_.rows_per_file - buffered_rows_);
    buffer_.push_back(take == batch->num_rows() ? batch : batch->Slice(offset, take));
    buffered_rows_ += take;
    offset += take;
    if (buffered_rows_ == options_.rows_per_file) ARROW_RETURN_NOT_OK(Flush());
  }
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

arrow::Status OutputFileWriter::Flush() {
  if (buffered_rows_ == 0) return arrow::Status::OK();
  auto batches = std::move(buffer_);
  buffer_.clear();
  const int64_t rows = buffered_rows_;
  buffered_rows_ = 0;
  return Submit(std::move(batches), rows);
}

arrow::Status OutputFileWriter::WriteOneFile(
    std::vector<std::shared_ptr<arrow::RecordBatch>> batches) {
  int64_t rows = 0;
  for (const auto& b : batches) rows += b->num_rows();
  if (rows == 0) return arrow::Status::OK();
  return Submit(std::move(batches), rows);
}

arrow::Status OutputFileWriter::CopyFiles(std::vector<std::string> source_paths, int64_t rows) {
  if (source_paths.empty()) return arrow::Status::OK();
  return Submit({}, rows, std::move(source_paths));
}

arrow::Status OutputFileWriter::Submit(std::vector<std::shared_ptr<arrow::RecordBatch>> batches,
                                       int64_t rows, std::vector<std::string> copy_from) {
  char seq[32];
  std::snprintf(seq, sizeof(seq), "%06lld", static_cast<long long>(next_seq_++));
  Job job;
  job.path = dir_ + "/" + options_.prefix + "-" + token_ + "-" + seq + ExtensionOf(options_.format);
  job.batches = std::move(batches);
  job.rows = rows;
  job.copy_from = std::move(copy_from);
  bool spawn = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.ok()) return error_;
    queue_.push_back(std::move(job));
    if (drainers_ < options_.threads) {
      ++drainers_;
      spawn = true;
    }
  }
  if (spawn) {
    std::shared_ptr<Gate> gate = gate_;
    ThreadPool::Engine().Spawn([gate] {
      {
        std::lock_guard<std::mutex> lock(gate->mu);
        if (gate->closed) return;
        ++gate->active;
      }
      gate->writer->Drain();
      std::lock_guard<std::mutex> lock(gate->mu);
      if (--gate->active == 0) gate->cv.notify_all();
    });
  }
  // More files waiting than may be encoded at once: encode one here rather
  // than wait for a pool thread (which may all be busy).
  while (true) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!error_.ok()) return error_;
      if (static_cast<int64_t>(queue_.size()) <= options_.threads) return arrow::Status::OK();
    }
    RunNextJob();
  }
}

arrow::Status OutputFileWriter::JoinAndCommit(const Job& job) {
  const bool local = fs_->type_name() == "local" && options_.direct_io;
  arrow::Status st =
      !options_.join ? arrow::Status::NotImplemented("joining is switched off")
      : local        ? JoinLocalFilesAtomically(*fs_, job.copy_from, job.path)
                     : WriteFileAtomically(*fs_, job.path, [&](arrow::io::OutputStream* out) {
                         StreamSink sink(out);
                         return WriteJoinedParquet(*fs_, job.copy_from, &sink);
                       });
  if (!st.IsNotImplemented()) return st;
  if (options_.join && on_fallback_) {
    on_fallback_(std::to_string(job.copy_from.size()) + " source files decoded and written as " +
                 job.path + " instead of joined: " + st.message());
  }
  // Files that cannot be joined as they are: decoded and written as one.
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  for (const std::string& path : job.copy_from) {
    ARROW_ASSIGN_OR_RAISE(auto reader,
                          DataFileReader::Open(fs_, DataFile{path, FileFormat::kParquet}));
    for (int u = 0; u < reader->num_units(); ++u) {
      ARROW_ASSIGN_OR_RAISE(auto batch, reader->ReadUnit(u, nullptr));
      batches.push_back(std::move(batch));
    }
  }
  return WriteFileAtomically(*fs_, job.path, [&](arrow::io::OutputStream* out) {
    return Encode(options_.format, *schema_, options_.row_group_rows, batches, out);
  });
}

arrow::Status OutputFileWriter::EncodeAndCommit(const Job& job) {
  if (job.copy_from.size() > 1) return JoinAndCommit(job);
  if (job.copy_from.size() == 1) {
    const std::string& from = job.copy_from[0];
    if (fs_->type_name() == "local") {
      // On any failure (temporary removed) the streaming copy below retries
      // and reports the error as Arrow words it.
      if (CopyLocalFileAtomically(from, job.path, options_.direct_io).ok()) {
        return arrow::Status::OK();
      }
    }
    return WriteFileAtomically(*fs_, job.path, [&](arrow::io::OutputStream* out) -> arrow::Status {
      ARROW_ASSIGN_OR_RAISE(auto in, fs_->OpenInputStream(from));
      while (true) {
        ARROW_ASSIGN_OR_RAISE(auto chunk, in->Read(4 << 20));
        if (chunk->size() == 0) return in->Close();
        ARROW_RETURN_NOT_OK(out->Write(chunk));
      }
    });
  }
  return WriteFileAtomically(*fs_, job.path, [&](arrow::io::OutputStream* out) {
    return Encode(options_.format, *schema_, options_.row_group_rows, job.batches, out);
  });
}

bool OutputFileWriter::RunNextJob() {
  Job job;
  bool failed = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (queue_.empty()) return false;
    job = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    failed = !error_.ok();
  }
  // After a failure no further file is committed (a later file must not
  // appear while an earlier one is missing, so counts stay explainable).
  arrow::Status st = failed ? arrow::Status::OK()
                            : CatchAll("writing output file '" + job.path + "'",
                                       [&] { return EncodeAndCommit(job); });
  if (st.ok() && !failed && on_commit_) on_commit_(job.path, job.rows);
  std::lock_guard<std::mutex> lock(mu_);
  --running_;
  if (!st.ok() && error_.ok()) error_ = st;
  if (st.ok() && !failed) {
    rows_committed_ += job.rows;
    ++files_committed_;
  }
  cv_.notify_all();
  return true;
}

void OutputFileWriter::Drain() {
  while (RunNextJob()) {
  }
  std::lock_guard<std::mutex> lock(mu_);
  --drainers_;
}

arrow::Status OutputFileWriter::Finish() {
  const arrow::Status flushed = Flush();
  Close();
  std::lock_guard<std::mutex> lock(mu_);
  return error_.ok() ? flushed : error_;
}

int64_t OutputFileWriter::rows_committed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rows_committed_;
}

int64_t OutputFileWriter::files_committed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return files_committed_;
}

}  // namespace thund::engine::keyed
