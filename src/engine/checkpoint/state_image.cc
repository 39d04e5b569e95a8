#include "engine/checkpoint/state_image.h"

#include <algorithm>
#include <chrono>
#include <iterator>

#include <arrow/array/builder_primitive.h>
#include <arrow/compute/api_vector.h>
#include <arrow/datum.h>
#include <arrow/io/memory.h>
#include <arrow/memory_pool.h>
#include <parquet/arrow/reader.h>
#include <parquet/arrow/writer.h>
#include <parquet/properties.h>

namespace thund::engine::checkpoint {
namespace {

using Json = nlohmann::json;

// State files are written once and read whole, by this engine only, on the
// recovery path: LZ4 without dictionary encoding (decodes at about twice the
// speed of dictionary pages for a few percent more bytes) and one row group
// (a restored table is one chunk per column, with no copy to combine them).
arrow::Status WriteParquet(const arrow::Table& table,
                           const std::shared_ptr<arrow::io::OutputStream>& out) {
  const int64_t rows = std::max<int64_t>(table.num_rows(), 1);
  auto props = parquet::WriterProperties::Builder()
                   .compression(arrow::Compression::LZ4)
                   ->disable_dictionary()
                   ->max_row_group_length(rows)
                   ->build();
  auto arrow_props = parquet::ArrowWriterProperties::Builder().store_schema()->build();
  return parquet::arrow::WriteTable(table, arrow::default_memory_pool(), out, rows, props,
                                    arrow_props);
}

arrow::Result<std::shared_ptr<arrow::Table>> ReadParquet(const EpochStore& store,
                                                         const EpochFile& file) {
  ARROW_ASSIGN_OR_RAISE(auto buf, store.ReadFile(file));
  auto read = [&]() -> arrow::Result<std::shared_ptr<arrow::Table>> {
    auto in = std::make_shared<arrow::io::BufferReader>(buf);
    ARROW_ASSIGN_OR_RAISE(auto reader, parquet::arrow::OpenFile(in, arrow::default_memory_pool()));
    return reader->ReadTable();
  }();
  if (!read.ok()) {
    return arrow::Status::IOError(store.dir(), "/", file.path, ": not readable Parquet (",
                                  read.status().message(), ")");
  }
  return read;
}

arrow::Result<const EpochFile*> Lookup(const EpochManifest& m, const std::string& path) {
  const EpochFile* f = m.Find(path);
  if (!f) return arrow::Status::IOError("the manifest does not list ", path);
  return f;
}

// A table of the hashes (lo, hi), one row per removed row.
arrow::Result<std::shared_ptr<arrow::Table>> HashTable(const std::vector<RowHash>& hashes) {
  arrow::UInt64Builder lo, hi;
  ARROW_RETURN_NOT_OK(lo.Reserve(static_cast<int64_t>(hashes.size())));
  ARROW_RETURN_NOT_OK(hi.Reserve(static_cast<int64_t>(hashes.size())));
  for (const auto& h : hashes) {
    lo.UnsafeAppend(h.lo);
    hi.UnsafeAppend(h.hi);
  }
  ARROW_ASSIGN_OR_RAISE(auto a, lo.Finish());
  ARROW_ASSIGN_OR_RAISE(auto b, hi.Finish());
  auto schema = arrow::schema({arrow::field("lo", arrow::uint64(), false),
                               arrow::field("hi", arrow::uint64(), false)});
  return arrow::Table::Make(schema, {a, b});
}

arrow::Result<std::shared_ptr<arrow::Table>> TakeRows(const std::shared_ptr<arrow::Table>& t,
                                                      const std::vector<int64_t>& rows) {
  arrow::Int64Builder b;
  ARROW_RETURN_NOT_OK(b.AppendValues(rows));
  ARROW_ASSIGN_OR_RAISE(auto idx, b.Finish());
  ARROW_ASSIGN_OR_RAISE(auto taken, arrow::compute::Take(arrow::Datum(t), arrow::Datum(idx)));
  return taken.table();
}

// Row indexes of `hashes`, ordered by hash.
std::vector<uint32_t> SortedOrder(const std::vector<RowHash>& hashes) {
  std::vector<uint32_t> order(hashes.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return hashes[a] < hashes[b]; });
  return order;
}

// Matches the rows of `hashes` (in `order`) against the sorted multiset
// `old`: rows without a partner go to `unmatched_rows` (in row order), old
// hashes without one to `unmatched_old`.
void Match(const std::vector<RowHash>& hashes, const std::vector<uint32_t>& order,
           const std::vector<RowHash>& old, std::vector<int64_t>* unmatched_rows,
           std::vector<RowHash>* unmatched_old) {
  size_t i = 0, j = 0;
  while (i < order.size() || j < old.size()) {
    if (j == old.size() || (i < order.size() && hashes[order[i]] < old[j])) {
      unmatched_rows->push_back(order[i++]);
    } else if (i == order.size() || old[j] < hashes[order[i]]) {
      unmatched_old->push_back(old[j++]);
    } else {
      ++i;
      ++j;
    }
  }
  std::sort(unmatched_rows->begin(), unmatched_rows->end());
}

// The change from the rows of `old` (hashes in row order) to those of
// `hashes` place by place: each place whose row differs removes the old row
// and adds the new one (in row order), and the longer table's tail is added
// or removed. Always a true change between the two multisets; the least one
// when rows kept their places.
void ByPosition(const std::vector<RowHash>& hashes, const std::vector<RowHash>& old,
                std::vector<int64_t>* added, std::vector<RowHash>* removed) {
  const size_t common = std::min(hashes.size(), old.size());
  for (size_t i = 0; i < common; ++i) {
    if (hashes[i] == old[i]) continue;
    added->push_back(static_cast<int64_t>(i));
    removed->push_back(old[i]);
  }
  for (size_t i = common; i < hashes.size(); ++i) added->push_back(static_cast<int64_t>(i));
  for (size_t i = common; i < old.size(); ++i) removed->push_back(old[i]);
}

}  // namespace

void TableImage::Reset() {
  ref_ = Json();
  files_.clear();
  last_.reset();
  last_chunks_.clear();
  last_rows_ = 0;
  hashes_.clear();
  hashed_ = false;
  schema_.reset();
  base_rows_ = delta_rows_ = 0;
  deltas_ = 0;
}

int64_t TableImage::AppendedTo(const arrow::Table& table) const {
  if (last_chunks_.empty() || static_cast<size_t>(table.num_columns()) != last_chunks_.size()) {
    return -1;
  }
  for (int c = 0; c < table.num_columns(); ++c) {
    const auto& now = table.column(c)->chunks();
    const auto& then = last_chunks_[static_cast<size_t>(c)];
    if (now.size() < then.size()) return -1;
    for (size_t k = 0; k < then.size(); ++k) {
      // A live weak pointer equal to the chunk: the very same array object.
      if (then[k].lock() != now[k]) return -1;
    }
  }
  return last_rows_;
}

void TableImage::Remember(const std::shared_ptr<arrow::Table>& table) {
  last_ = table;
  last_rows_ = table->num_rows();
  last_chunks_.assign(static_cast<size_t>(table->num_columns()), {});
  for (int c = 0; c < table->num_columns(); ++c) {
    for (const auto& chunk : table->column(c)->chunks()) {
      last_chunks_[static_cast<size_t>(c)].push_back(chunk);
    }
  }
}

arrow::Status TableImage::HintedChange(const std::shared_ptr<arrow::Table>& table,
                                       const PlaceHint& hint,
                                       std::vector<int64_t>* added,
                                       std::vector<RowHash>* removed) {
  const int64_t old_rows = static_cast<int64_t>(hashes_.size());
  std::vector<int64_t> places;
  for (int64_t i : hint.changed) {
    if (i < 0 || i >= old_rows || (!places.empty() && i <= places.back())) {
      return arrow::Status::Invalid("a change hint outside the table's rows or out of order");
    }
    places.push_back(i);
  }
  for (int64_t i = old_rows; i < table->num_rows(); ++i) places.push_back(i);
  if (places.empty()) return arrow::Status::OK();
  ARROW_ASSIGN_OR_RAISE(auto rows, TakeRows(table, places));
  ARROW_ASSIGN_OR_RAISE(auto hashes, HashRows(*rows));
  for (size_t k = 0; k < places.size(); ++k) {
    const int64_t i = places[k];
    if (i >= old_rows) {
      added->push_back(i);
      hashes_.push_back(hashes[k]);
    } else if (hashes[k] != hashes_[static_cast<size_t>(i)]) {
      added->push_back(i);
      removed->push_back(hashes_[static_cast<size_t>(i)]);
      hashes_[static_cast<size_t>(i)] = hashes[k];
    }
  }
  return arrow::Status::OK();
}

arrow::Status TableImage::MergeHashes(const arrow::Table& rows) {
  ARROW_ASSIGN_OR_RAISE(auto hashes, HashRows(rows));
  hashes_.insert(hashes_.end(), hashes.begin(), hashes.end());
  return arrow::Status::OK();
}

arrow::Status TableImage::WriteAdded(EpochStore& store, int64_t epoch, const std::string& name,
                                     const std::shared_ptr<arrow::Table>& rows, Json* delta,
                                     ImageWrite* stats) {
  ARROW_ASSIGN_OR_RAISE(auto f, store.WriteFile(epoch, name + "-add.parquet",
                                                [&](const auto& out) {
                                                  return WriteParquet(*rows, out);
                                                }));
  (*delta)["added"] = f.path;
  files_.push_back(f);
  stats->rows_written += rows->num_rows();
  stats->bytes_written += f.bytes;
  return arrow::Status::OK();
}

void TableImage::BackOff() {
  backoff_ = next_backoff_;
  next_backoff_ = std::min(next_backoff_ * 2, 32);
}

arrow::Status TableImage::WriteBase(EpochStore& store, int64_t epoch, const std::string& name,
                                    const std::shared_ptr<arrow::Table>& table,
                                    ImageWrite* stats) {
  const auto start = std::chrono::steady_clock::now();
  ARROW_ASSIGN_OR_RAISE(auto f, store.WriteFile(epoch, name + "-base.parquet",
                                                [&](const auto& out) {
                                                  return WriteParquet(*table, out);
                                                }));
  if (table->num_rows() > 0) {
    base_ns_per_row_ = static_cast<double>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                               std::chrono::steady_clock::now() - start)
                                               .count()) /
                       static_cast<double>(table->num_rows());
  }
  files_ = {f};
  ref_ = Json::object();
  ref_["base"] = f.path;
  ref_["deltas"] = Json::array();
  base_rows_ = table->num_rows();
  delta_rows_ = 0;
  deltas_ = 0;
  schema_ = table->schema();
  ++stats->bases;
  stats->rows_written += table->num_rows();
  stats->bytes_written += f.bytes;
  return arrow::Status::OK();
}

arrow::Result<Json> TableImage::Checkpoint(EpochStore& store, int64_t epoch,
                                           const std::string& name,
                                           const std::shared_ptr<arrow::Table>& table,
                                           const ImageOptions& options,
                                           std::vector<EpochFile>* files, ImageWrite* stats,
                                           const PlaceHint* hint) {
  if (!table) {
    Reset();
    return Json();
  }
  if (!ref_.is_null() && last_.lock() == table) {  // unchanged since the last checkpoint
    files->insert(files->end(), files_.begin(), files_.end());
    return ref_;
  }
  // An append to the last table: write (and hash) the new rows only.
  const int64_t kept = options.incremental && !ref_.is_null() && schema_ &&
                               schema_->Equals(*table->schema())
                           ? AppendedTo(*table)
                           : -1;
  if (kept >= 0) {
    auto rows = table->Slice(kept);
    const int64_t n = rows->num_rows();
    if (hashed_) ARROW_RETURN_NOT_OK(MergeHashes(*rows));
    const bool base = deltas_ >= options.max_deltas ||
                      static_cast<double>(delta_rows_ + n) >
                          options.compact_ratio *
                              static_cast<double>(std::max<int64_t>(base_rows_, 1024));
    if (base) {
      ARROW_RETURN_NOT_OK(WriteBase(store, epoch, name, table, stats));
    } else if (n > 0) {
      Json delta = Json::object();
      ARROW_RETURN_NOT_OK(WriteAdded(store, epoch, name, rows, &delta, stats));
      ref_["deltas"].push_back(delta);
      delta_rows_ += n;
      ++deltas_;
    }
    ref_["rows"] = table->num_rows();
    Remember(table);
    files->insert(files->end(), files_.begin(), files_.end());
    return ref_;
  }
  const bool skip = backoff_ > 0;
  if (skip) --backoff_;
  const bool hashable = options.incremental && !skip && RowsHashable(*table->schema());
  if (table->num_rows() > int64_t{0xffffffff}) {
    return arrow::Status::NotImplemented("a state table of more than 2^32 rows");
  }
  std::vector<RowHash> hashes;
  const auto hash_start = std::chrono::steady_clock::now();
  // The writer's hint, when it is about the table last checkpointed: only
  // the rows it names are hashed (hashes_ then describe `table`).
  const bool hinted = hint && options.incremental && options.positional && hashed_ &&
                      !ref_.is_null() && schema_ && schema_->Equals(*table->schema()) &&
                      hint->since && hint->since == last_.lock() &&
                      static_cast<int64_t>(hashes_.size()) == hint->since->num_rows() &&
                      table->num_rows() >= hint->since->num_rows() &&
                      RowsHashable(*table->schema());
  std::vector<int64_t> added;
  std::vector<RowHash> removed;
  if (hinted) {
    ARROW_RETURN_NOT_OK(HintedChange(table, *hint, &added, &removed));
  } else if (hashable) {
    ARROW_ASSIGN_OR_RAISE(hashes, HashRows(*table));
  }
  bool base = (!hinted && (!hashable || !hashed_)) || ref_.is_null() || !schema_ ||
              !schema_->Equals(*table->schema()) || deltas_ >= options.max_deltas;
  if (!base && hinted) {
    const int64_t change = static_cast<int64_t>(added.size() + removed.size());
    base = static_cast<double>(delta_rows_ + change) >
           options.compact_ratio * static_cast<double>(std::max<int64_t>(base_rows_, 1024));
  } else if (!base) {
    const double budget =
        options.compact_ratio * static_cast<double>(std::max<int64_t>(base_rows_, 1024)) -
        static_cast<double>(delta_rows_);
    // Row by row against the last table first: a table whose rows keep their
    // places (an aggregate's merged state: changed groups where they were,
    // new ones after) needs no sort. When that change would not fit in the
    // delta budget (rows moved: a join side after an eviction), the two
    // multisets are matched in hash order instead, the least change.
    if (options.positional) ByPosition(hashes, hashes_, &added, &removed);
    if (!options.positional || static_cast<double>(added.size() + removed.size()) > budget) {
      added.clear();
      removed.clear();
      std::vector<RowHash> old = hashes_;
      std::sort(old.begin(), old.end());
      Match(hashes, SortedOrder(hashes), old, &added, &removed);
    }
    const int64_t change = static_cast<int64_t>(added.size() + removed.size());
    base = static_cast<double>(delta_rows_ + change) >
           options.compact_ratio * static_cast<double>(std::max<int64_t>(base_rows_, 1024));
    if (base && deltas_ == 0) {  // even one epoch's change does not pay: wait
      BackOff();
    } else if (!base) {
      next_backoff_ = 2;
    }
  }
  if (base) {
    ARROW_RETURN_NOT_OK(WriteBase(store, epoch, name, table, stats));
  } else if (!added.empty() || !removed.empty()) {
    Json delta = Json::object();
    if (!added.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto rows, TakeRows(table, added));
      ARROW_RETURN_NOT_OK(WriteAdded(store, epoch, name, rows, &delta, stats));
    }
    if (!removed.empty()) {
      ARROW_ASSIGN_OR_RAISE(auto hash_rows, HashTable(removed));
      ARROW_ASSIGN_OR_RAISE(auto f, store.WriteFile(epoch, name + "-del.parquet",
                                                    [&](const auto& out) {
                                                      return WriteParquet(*hash_rows, out);
                                                    }));
      delta["removed"] = f.path;
      files_.push_back(f);
      stats->bytes_written += f.bytes;
    }
    ref_["deltas"].push_back(delta);
    delta_rows_ += static_cast<int64_t>(added.size() + removed.size());
    ++deltas_;
    // Finding and writing the change took longer than writing everything
    // would have (the last full image's time per row): full images for a while.
    const double delta_ns = static_cast<double>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                             hash_start)
            .count());
    if (options.back_off_by_time && base_ns_per_row_ > 0 &&
        delta_ns > base_ns_per_row_ * static_cast<double>(table->num_rows())) {
      BackOff();
    }
  }
  ref_["rows"] = table->num_rows();
  if (!hinted) {
    hashed_ = hashable;
    hashes_ = hashable ? std::move(hashes) : std::vector<RowHash>();
  }
  Remember(table);
  files->insert(files->end(), files_.begin(), files_.end());
  return ref_;
}

arrow::Result<std::shared_ptr<arrow::Table>> TableImage::Restore(const EpochStore& store,
                                                                 const EpochManifest& m,
                                                                 const Json& ref) {
  Reset();
  if (ref.is_null()) return std::shared_ptr<arrow::Table>();
  std::vector<std::shared_ptr<arrow::Table>> parts;
  std::vector<RowHash> remove;
  int64_t want_rows = 0;
  try {
    want_rows = ref.at("rows").get<int64_t>();
    ARROW_ASSIGN_OR_RAISE(const EpochFile* base, Lookup(m, ref.at("base").get<std::string>()));
    files_.push_back(*base);
    ARROW_ASSIGN_OR_RAISE(auto t, ReadParquet(store, *base));
    base_rows_ = t->num_rows();
    parts.push_back(t);
    for (const auto& d : ref.at("deltas")) {
      ++deltas_;
      if (d.contains("added")) {
        ARROW_ASSIGN_OR_RAISE(const EpochFile* f, Lookup(m, d.at("added").get<std::string>()));
        files_.push_back(*f);
        ARROW_ASSIGN_OR_RAISE(auto rows, ReadParquet(store, *f));
        if (!rows->schema()->Equals(*t->schema())) {
          return arrow::Status::IOError(store.dir(), "/", f->path,
                                        ": its columns differ from the image's base");
        }
        delta_rows_ += rows->num_rows();
        parts.push_back(rows);
      }
      if (d.contains("removed")) {
        ARROW_ASSIGN_OR_RAISE(const EpochFile* f, Lookup(m, d.at("removed").get<std::string>()));
        files_.push_back(*f);
        ARROW_ASSIGN_OR_RAISE(auto hashes, ReadParquet(store, *f));
        ARROW_ASSIGN_OR_RAISE(auto combined, hashes->CombineChunks());
        if (combined->num_columns() != 2) {
          return arrow::Status::IOError(store.dir(), "/", f->path, ": not a hash file");
        }
        auto lo = std::static_pointer_cast<arrow::UInt64Array>(combined->column(0)->chunk(0));
        auto hi = std::static_pointer_cast<arrow::UInt64Array>(combined->column(1)->chunk(0));
        for (int64_t i = 0; i < combined->num_rows(); ++i) {
          remove.push_back({lo->Value(i), hi->Value(i)});
        }
        delta_rows_ += combined->num_rows();
      }
    }
  } catch (const std::exception& e) {
    return arrow::Status::IOError("state image reference is damaged (", e.what(), ")");
  }
  ARROW_ASSIGN_OR_RAISE(auto all, arrow::ConcatenateTables(parts));
  schema_ = all->schema();
  std::shared_ptr<arrow::Table> out = all;
  // Without removals the rows are the files' rows as they are; their hashes
  // are left for the next checkpoint, which then writes a new base (so a
  // restart reads and decodes, and does not hash).
  hashed_ = false;
  if (!remove.empty()) {
    hashed_ = RowsHashable(*all->schema());
    ARROW_ASSIGN_OR_RAISE(auto hashes, HashRows(*all));
    std::sort(remove.begin(), remove.end());
    auto order = SortedOrder(hashes);
    // The rows left once the removed ones are matched away, and the hashes
    // the image removes without having them (a damaged image).
    std::vector<int64_t> keep;
    std::vector<RowHash> missing;
    Match(hashes, order, remove, &keep, &missing);
    if (!missing.empty()) return arrow::Status::IOError("state image removes rows it never had");
    if (keep.size() != hashes.size()) {
      ARROW_ASSIGN_OR_RAISE(out, TakeRows(all, keep));
    }
    // In the kept rows' order (the table restored).
    hashes_.clear();
    hashes_.reserve(keep.size());
    for (int64_t i : keep) hashes_.push_back(hashes[static_cast<size_t>(i)]);
  }
  if (out->num_rows() != want_rows) {
    return arrow::Status::IOError("state image has ", out->num_rows(), " rows, its manifest ",
                                  "says ", want_rows);
  }
  ref_ = ref;
  ARROW_ASSIGN_OR_RAISE(out, out->CombineChunks());
  Remember(out);
  return out;
}

}  // namespace thund::engine::checkpoint
