// The checkpoint store (engine/checkpoint/): epochs, their manifests and
// checks, incremental state images against full images and the table they
// stand for, retention, and the storage lock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <arrow/array/builder_binary.h>
#include <arrow/array/builder_primitive.h>
#include <arrow/filesystem/localfs.h>
#include <arrow/table.h>

#include "engine/checkpoint/epoch_store.h"
#include "engine/checkpoint/row_hash.h"
#include "engine/checkpoint/state_image.h"
#include "engine/checkpoint/storage_lock.h"
#include "engine/table_compare.h"

namespace thund::engine::checkpoint {
namespace {

using engine::testing::TablesEqualUnordered;
using engine::testing::TempDir;

// A state table: (k int64, name string, x double, at timestamp), NULLs in
// every column but k.
std::shared_ptr<arrow::Table> MakeRows(std::mt19937_64& rng, int64_t n, int64_t key_base) {
  arrow::Int64Builder k;
  arrow::StringBuilder name;
  arrow::DoubleBuilder x;
  arrow::TimestampBuilder at(arrow::timestamp(arrow::TimeUnit::MICRO, "UTC"),
                             arrow::default_memory_pool());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(k.Append(key_base + static_cast<int64_t>(rng() % 50)).ok());
    if (rng() % 7 == 0) {
      EXPECT_TRUE(name.AppendNull().ok());
    } else {
      EXPECT_TRUE(name.Append("n" + std::to_string(rng() % 30)).ok());
    }
    if (rng() % 9 == 0) {
      EXPECT_TRUE(x.AppendNull().ok());
    } else {
      EXPECT_TRUE(x.Append(static_cast<double>(rng() % 1000) / 8).ok());
    }
    EXPECT_TRUE(at.Append(static_cast<int64_t>(rng() % 100000)).ok());
  }
  auto ts = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");
  auto schema = arrow::schema({arrow::field("k", arrow::int64()),
                               arrow::field("name", arrow::utf8()),
                               arrow::field("x", arrow::float64()), arrow::field("at", ts)});
  return arrow::Table::Make(schema, {*k.Finish(), *name.Finish(), *x.Finish(), *at.Finish()});
}

// Drops each row with probability 1/`one_in` and appends `added` new ones.
std::shared_ptr<arrow::Table> Evolve(std::mt19937_64& rng, const std::shared_ptr<arrow::Table>& t,
                                     int one_in, int64_t added) {
  std::vector<std::shared_ptr<arrow::Table>> parts;
  auto combined = *t->CombineChunks();
  for (int64_t i = 0; i < combined->num_rows(); ++i) {
    if (rng() % static_cast<uint64_t>(one_in) != 0) parts.push_back(combined->Slice(i, 1));
  }
  parts.push_back(MakeRows(rng, added, 0));
  return *(*arrow::ConcatenateTables(parts))->CombineChunks();
}

class CheckpointStoreTest : public ::testing::Test {
 protected:
  std::shared_ptr<arrow::fs::FileSystem> fs_ = std::make_shared<arrow::fs::LocalFileSystem>();
  TempDir dir_;
};

// Checkpoints `table` as epoch `epoch` of `store` through `image`, commits
// it, and restores it from what is on disk, as recovery does; adds the bytes
// the checkpoint wrote to `*bytes`. `hint` (may be null) goes to the image.
arrow::Result<std::shared_ptr<arrow::Table>> CheckpointAndRestore(
    EpochStore& store, TableImage& image, const ImageOptions& options, int64_t epoch,
    const std::shared_ptr<arrow::Table>& table, int64_t* bytes,
    const PlaceHint* hint = nullptr) {
  EpochManifest m;
  m.epoch = epoch;
  ARROW_RETURN_NOT_OK(store.Begin(epoch));
  ImageWrite w;
  ARROW_ASSIGN_OR_RAISE(auto ref, image.Checkpoint(store, epoch, "t", table, options, &m.files,
                                                   &w, hint));
  *bytes += w.bytes_written;
  m.body["t"] = ref;
  ARROW_RETURN_NOT_OK(store.Commit(&m));
  ARROW_ASSIGN_OR_RAISE(auto read, store.ReadManifest(epoch));
  TableImage fresh;
  return fresh.Restore(store, read, read.body.at("t"));
}

// Over 40 epochs of random change, an incremental image restores to the
// table of every epoch — as the full-image twin does — and writes less.
TEST_F(CheckpointStoreTest, IncrementalImagesRestoreTheTableOfEveryEpochAsFullImagesDo) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    EpochStore inc_store(fs_, dir_.File("inc-" + std::to_string(seed)));
    EpochStore full_store(fs_, dir_.File("full-" + std::to_string(seed)));
    TableImage inc, full;
    ImageOptions inc_options, full_options;
    inc_options.back_off_by_time = false;  // the bytes below must not depend on timing
    full_options.incremental = false;
    int64_t inc_bytes = 0, full_bytes = 0;
    auto table = MakeRows(rng, 3000, 0);
    for (int64_t epoch = 1; epoch <= 40; ++epoch) {
      if (epoch > 1) table = Evolve(rng, table, 40, 60);
      for (auto* s : {&inc_store, &full_store}) {
        const bool is_inc = s == &inc_store;
        auto restored = CheckpointAndRestore(*s, is_inc ? inc : full,
                                             is_inc ? inc_options : full_options, epoch, table,
                                             is_inc ? &inc_bytes : &full_bytes);
        ASSERT_TRUE(restored.ok()) << restored.status().ToString();
        ASSERT_TRUE(TablesEqualUnordered(*table, **restored, /*check_types=*/true))
            << "epoch " << epoch << (is_inc ? " incremental" : " full");
      }
    }
    EXPECT_LT(inc_bytes * 3, full_bytes) << "incremental " << inc_bytes << " full " << full_bytes;
  }
}

// `t` with about one row in `one_in` given new values in place (a merged
// aggregate's changed groups) and `added` new rows after them.
// `changed` (may be null) gets the places given new values.
std::shared_ptr<arrow::Table> UpdateInPlace(std::mt19937_64& rng,
                                            const std::shared_ptr<arrow::Table>& t, int one_in,
                                            int64_t added, std::vector<int64_t>* changed = nullptr) {
  std::vector<std::shared_ptr<arrow::Table>> parts;
  auto combined = *t->CombineChunks();
  for (int64_t i = 0; i < combined->num_rows(); ++i) {
    const bool change = rng() % static_cast<uint64_t>(one_in) == 0;
    parts.push_back(change ? MakeRows(rng, 1, 0) : combined->Slice(i, 1));
    if (change && changed) changed->push_back(i);
  }
  parts.push_back(MakeRows(rng, added, 0));
  return *(*arrow::ConcatenateTables(parts))->CombineChunks();
}

// Rows changed in place (found place by place) and rows removed from the
// middle (places shift: found by matching sorted hashes), at random, with the
// place-by-place path on and off: every epoch restores to its table both
// ways, and in-place change writes no more than the matched twin.
TEST_F(CheckpointStoreTest, ChangeFoundPlaceByPlaceRestoresAsTheMatchedTwin) {
  for (uint64_t seed : {11u, 12u, 13u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    EpochStore on_store(fs_, dir_.File("pos-" + std::to_string(seed)));
    EpochStore off_store(fs_, dir_.File("sorted-" + std::to_string(seed)));
    TableImage on, off;
    ImageOptions on_options, off_options;
    on_options.back_off_by_time = off_options.back_off_by_time = false;
    off_options.positional = false;
    int64_t on_bytes = 0, off_bytes = 0;
    auto table = MakeRows(rng, 3000, 0);
    for (int64_t epoch = 1; epoch <= 40; ++epoch) {
      if (epoch > 1) {
        table = rng() % 4 == 0 ? Evolve(rng, table, 50, 30) : UpdateInPlace(rng, table, 60, 30);
      }
      for (auto* s : {&on_store, &off_store}) {
        const bool is_on = s == &on_store;
        auto restored = CheckpointAndRestore(*s, is_on ? on : off,
                                             is_on ? on_options : off_options, epoch, table,
                                             is_on ? &on_bytes : &off_bytes);
        ASSERT_TRUE(restored.ok()) << restored.status().ToString();
        ASSERT_TRUE(TablesEqualUnordered(*table, **restored, /*check_types=*/true))
            << "epoch " << epoch << (is_on ? " place by place" : " matched");
      }
    }
    EXPECT_LE(on_bytes, off_bytes + off_bytes / 10) << "on " << on_bytes << " off " << off_bytes;
  }
}

// A writer's hint of the places that changed (PlaceHint): the checkpoint
// hashes only those rows, and every epoch restores to its table, as the
// image without hints does (in-place change, appends, and epochs without a
// hint between them).
TEST_F(CheckpointStoreTest, AHintOfThePlacesChangedRestoresAsWithoutIt) {
  for (uint64_t seed : {21u, 22u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    EpochStore hinted_store(fs_, dir_.File("hint-" + std::to_string(seed)));
    EpochStore plain_store(fs_, dir_.File("nohint-" + std::to_string(seed)));
    TableImage hinted, plain;
    ImageOptions options;
    options.back_off_by_time = false;
    int64_t hinted_bytes = 0, plain_bytes = 0;
    auto table = MakeRows(rng, 3000, 0);
    std::shared_ptr<arrow::Table> last;
    for (int64_t epoch = 1; epoch <= 30; ++epoch) {
      PlaceHint hint;
      bool give = false;
      if (epoch > 1) {
        hint.since = last;
        table = UpdateInPlace(rng, table, 50, 20, &hint.changed);
        give = rng() % 5 != 0;  // now and then no hint: the image hashes everything
      }
      for (auto* s : {&hinted_store, &plain_store}) {
        const bool with = s == &hinted_store;
        auto restored = CheckpointAndRestore(*s, with ? hinted : plain, options, epoch, table,
                                             with ? &hinted_bytes : &plain_bytes,
                                             with && give ? &hint : nullptr);
        ASSERT_TRUE(restored.ok()) << restored.status().ToString();
        ASSERT_TRUE(TablesEqualUnordered(*table, **restored, /*check_types=*/true))
            << "epoch " << epoch << (with ? " hinted" : " plain");
      }
      last = table;
    }
    // The same change is found either way: the same rows written.
    EXPECT_EQ(hinted_bytes, plain_bytes);
  }
}

// Appends (the last table's chunks followed by new ones, as a join side
// grows) write only the new rows; mixed with removals and with restarts
// from the image on disk, every epoch still restores to its table.
TEST_F(CheckpointStoreTest, AppendsWriteOnlyTheNewRowsAndMixWithRemovalsAndRestarts) {
  for (uint64_t seed : {5u, 6u, 7u}) {
    SCOPED_TRACE(seed);
    std::mt19937_64 rng(seed);
    EpochStore store(fs_, dir_.File("app-" + std::to_string(seed)));
    auto image = std::make_unique<TableImage>();
    auto table = MakeRows(rng, 2000, 0);
    int appends = 0, cheap_appends = 0;
    for (int64_t epoch = 1; epoch <= 60; ++epoch) {
      const uint64_t step = rng() % 10;
      int64_t appended = -1;
      if (epoch > 1 && step < 6) {  // an append, as Append() in the engine builds it
        appended = static_cast<int64_t>(rng() % 80);
        table = *arrow::ConcatenateTables({table, MakeRows(rng, appended, 0)});
      } else if (epoch > 1 && step < 9) {
        table = Evolve(rng, table, 30, 40);
      }
      EpochManifest m;
      m.epoch = epoch;
      ASSERT_TRUE(store.Begin(epoch).ok());
      ImageWrite w;
      auto ref = image->Checkpoint(store, epoch, "t", table, {}, &m.files, &w);
      ASSERT_TRUE(ref.ok()) << ref.status().ToString();
      if (appended >= 0) {
        ++appends;
        if (w.bases == 0) {
          ++cheap_appends;
          EXPECT_EQ(w.rows_written, appended) << "epoch " << epoch;
        }
      }
      m.body["t"] = *ref;
      ASSERT_TRUE(store.Commit(&m).ok());
      auto read = store.ReadManifest(epoch);
      ASSERT_TRUE(read.ok()) << read.status().ToString();
      auto fresh = std::make_unique<TableImage>();
      auto restored = fresh->Restore(store, *read, read->body.at("t"));
      ASSERT_TRUE(restored.ok()) << restored.status().ToString();
      ASSERT_TRUE(TablesEqualUnordered(*table, **restored, /*check_types=*/true))
          << "epoch " << epoch;
      if (step == 9) {  // a restart: go on from the restored image and table
        image = std::move(fresh);
        table = *restored;
      }
    }
    EXPECT_GT(appends, 20);
    EXPECT_GT(cheap_appends, appends / 2);
  }
}

TEST_F(CheckpointStoreTest, AnUnchangedTableWritesNothingAndAnImageSurvivesARestore) {
  std::mt19937_64 rng(9);
  EpochStore store(fs_, dir_.File("s"));
  auto table = MakeRows(rng, 500, 0);
  TableImage image;
  std::vector<EpochFile> files;
  ImageWrite first, second;
  ASSERT_TRUE(store.Begin(1).ok());
  ASSERT_TRUE(image.Checkpoint(store, 1, "t", table, {}, &files, &first).ok());
  ASSERT_TRUE(store.Begin(2).ok());
  ASSERT_TRUE(image.Checkpoint(store, 2, "t", table, {}, &files, &second).ok());
  EXPECT_GT(first.bytes_written, 0);
  EXPECT_EQ(second.bytes_written, 0);
}

TEST_F(CheckpointStoreTest, EqualRowsHashEqualAndDifferentRowsDiffer) {
  std::mt19937_64 rng(4);
  auto table = MakeRows(rng, 2000, 0);
  auto twice = *arrow::ConcatenateTables({table, table->Slice(0, table->num_rows())});
  auto hashes = HashRows(*twice);
  ASSERT_TRUE(hashes.ok());
  const auto rows = engine::testing::RowStrings(*twice);
  const size_t n = static_cast<size_t>(table->num_rows());
  std::map<std::string, std::pair<uint64_t, uint64_t>> by_row;
  for (size_t i = 0; i < rows.size(); ++i) {
    if (i >= n) {
      EXPECT_EQ((*hashes)[i], (*hashes)[i - n]);
    }
    auto [it, added] = by_row.emplace(rows[i], std::make_pair((*hashes)[i].lo, (*hashes)[i].hi));
    if (!added) {
      EXPECT_EQ(it->second, std::make_pair((*hashes)[i].lo, (*hashes)[i].hi));
    }
  }
  std::set<std::pair<uint64_t, uint64_t>> distinct;
  for (const auto& [row, h] : by_row) distinct.insert(h);
  EXPECT_EQ(distinct.size(), by_row.size());  // no two different rows collide
}

// A committed epoch with one table; returns its manifest path.
std::string CommitOne(EpochStore& store, int64_t epoch, const std::shared_ptr<arrow::Table>& t,
                      TableImage* image) {
  EpochManifest m;
  m.epoch = epoch;
  EXPECT_TRUE(store.Begin(epoch).ok());
  ImageWrite w;
  ImageOptions options;
  options.back_off_by_time = false;  // where bases fall must not depend on timing
  auto ref = image->Checkpoint(store, epoch, "t", t, options, &m.files, &w);
  EXPECT_TRUE(ref.ok());
  m.body["t"] = *ref;
  EXPECT_TRUE(store.Commit(&m).ok());
  return store.dir() + "/" + EpochDirName(epoch) + "/_manifest.json";
}

TEST_F(CheckpointStoreTest, AlteredManifestsAndTruncatedFilesAreRecognised) {
  std::mt19937_64 rng(5);
  EpochStore store(fs_, dir_.File("s"));
  TableImage image;
  auto table = MakeRows(rng, 800, 0);
  const std::string manifest = CommitOne(store, 1, table, &image);
  auto m = store.ReadManifest(1);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // One digit of the manifest changed: still JSON, but the checksum says no.
  std::string text;
  {
    std::ifstream in(manifest);
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t at = text.find("\"bytes\": ") + 9;
  text[at] = text[at] == '1' ? '2' : '1';
  std::ofstream(manifest, std::ios::trunc) << text;
  auto altered = store.ReadManifest(1);
  ASSERT_FALSE(altered.ok());
  EXPECT_NE(altered.status().message().find("checksum"), std::string::npos)
      << altered.status().ToString();
  // Half a manifest: not a valid manifest.
  std::ofstream(manifest, std::ios::trunc) << text.substr(0, text.size() / 2);
  EXPECT_FALSE(store.ReadManifest(1).ok());
  // A truncated state file: its size no longer matches.
  const std::string file = store.dir() + "/" + m->files[0].path;
  std::filesystem::resize_file(file, m->files[0].bytes / 2);
  auto bytes = store.ReadFile(m->files[0]);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("truncated"), std::string::npos);
  // Same size, other bytes: the checksum catches it.
  std::filesystem::resize_file(file, m->files[0].bytes);
  auto flipped = store.ReadFile(m->files[0]);
  ASSERT_FALSE(flipped.ok());
  EXPECT_NE(flipped.status().message().find("checksum"), std::string::npos);
  // A directory without a manifest was never committed.
  ASSERT_TRUE(store.Begin(2).ok());
  auto uncommitted = store.ReadManifest(2);
  ASSERT_FALSE(uncommitted.ok());
  EXPECT_NE(uncommitted.status().message().find("never committed"), std::string::npos);
}

TEST_F(CheckpointStoreTest, RetentionKeepsTheNewestEpochsAndTheFilesTheyReference) {
  std::mt19937_64 rng(6);
  EpochStore store(fs_, dir_.File("s"));
  TableImage image;
  auto table = MakeRows(rng, 5000, 0);
  std::vector<EpochManifest> committed;
  // Small changes: deltas on a base, a new base after 16 of them (epoch 18).
  for (int64_t e = 1; e <= 24; ++e) {
    if (e > 1) table = Evolve(rng, table, 200, 10);
    CommitOne(store, e, table, &image);
    committed.insert(committed.begin(), *store.ReadManifest(e));
    store.Retain(committed, 3, nullptr);
  }
  auto epochs = store.ListEpochs();
  ASSERT_TRUE(epochs.ok());
  // 24, 23, 22 and the chain they read: the base of epoch 18 and its deltas.
  EXPECT_EQ(*epochs, (std::vector<int64_t>{24, 23, 22, 21, 20, 19, 18}));
  TableImage fresh;
  auto restored = fresh.Restore(store, committed[0], committed[0].body.at("t"));
  ASSERT_TRUE(restored.ok()) << restored.status().ToString();
  EXPECT_TRUE(TablesEqualUnordered(*table, **restored, true));
}

// A second holder is refused with the holder named; a holder that died is
// taken over (an flock the kernel dropped).
TEST_F(CheckpointStoreTest, TheStorageLockRefusesALiveHolderAndTakesOverADeadOne) {
  const std::string path = dir_.File("root/_thund/lock");
  std::string took_over;
  {
    auto first = StorageLock::Acquire(fs_, path, "run-one", &took_over);
    ASSERT_TRUE(first.ok()) << first.status().ToString();
    EXPECT_TRUE(took_over.empty());
    auto second = StorageLock::Acquire(fs_, path, "run-two");
    ASSERT_FALSE(second.ok());
    EXPECT_NE(second.status().message().find("run run-one (pid " + std::to_string(getpid())),
              std::string::npos)
        << second.status().ToString();
  }
  // A clean release leaves nothing to take over.
  auto again = StorageLock::Acquire(fs_, path, "run-three", &took_over);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(took_over.empty());
  again->reset();
  // Another process holds it, then is killed.
  std::ofstream(path, std::ios::trunc) << R"({"run_id": "dead-run", "pid": 1, "host": "h"})";
  // -o: the lock stays with flock itself, not with the command it runs.
  const char* argv[] = {"flock", "-o", path.c_str(), "sleep", "5", nullptr};
  pid_t pid = 0;
  ASSERT_EQ(posix_spawnp(&pid, "flock", nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  // Wait until the child holds it (a shared probe lock is refused).
  bool held = false;
  for (int i = 0; i < 500 && !held; ++i) {
    int fd = ::open(path.c_str(), O_RDONLY);
    held = fd >= 0 && ::flock(fd, LOCK_SH | LOCK_NB) != 0;
    if (fd >= 0) ::close(fd);  // closing drops a probe lock we got
    if (!held) usleep(10000);
  }
  ASSERT_TRUE(held);
  auto refused = StorageLock::Acquire(fs_, path, "run-four");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("dead-run"), std::string::npos)
      << refused.status().ToString();
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  // The kernel drops a dead process's locks as it reaps it; allow it a moment.
  auto taken = StorageLock::Acquire(fs_, path, "run-five", &took_over);
  for (int i = 0; i < 200 && !taken.ok(); ++i) {
    usleep(10000);
    taken = StorageLock::Acquire(fs_, path, "run-five", &took_over);
  }
  ASSERT_TRUE(taken.ok()) << taken.status().ToString();
  EXPECT_NE(took_over.find("dead-run"), std::string::npos) << "[" << took_over << "]";
}

}  // namespace
}  // namespace thund::engine::checkpoint
