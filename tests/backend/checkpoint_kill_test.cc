// Crash consistency of streaming checkpoints (backend/native/stream_checkpoint.h):
// real SIGKILLs of the `thund run` CLI at random points of five incremental
// pipelines — a windowed aggregation (with a late-rows table), a stream-stream
// join (interval and window joins), deduplication (first / last row per key,
// DISTINCT), AUTO CDC (SCD types 1 and 2, and into a merge sink) over a file
// drop, and sinks (Parquet and CSV file sinks, a merge sink). Each pipeline
// runs once uninterrupted (the reference), then in a second storage root it is
// killed again and again, every rerun resuming from the newest good epoch, and
// finally runs to completion: every dataset and sink must then equal the
// reference as a multiset (nothing lost, nothing twice), checked by an
// independent DuckDB over the version each table's `_current` names. The
// reference itself is checked against the batch query of the same result over
// its inputs.
//
// A kill between a version's `_current` rename and its `current` symlink
// leaves the symlink one version behind; every run repairs it at its start
// (docs/storage.md), so after a completed run each link must name `_current`.
//
// Kill points (seeded; THUND_KILL_SEED=N draws the same ones again, though
// where a delay lands still varies with the machine's speed): a delay of 0-60 ms
// (start-up), 0-2 ms after the run's first recovery event (checking the epoch,
// restoring state), a delay spread over the time the run has left, right
// after a new epoch directory appears (mid-commit: state files being written,
// no manifest yet), 0-3 ms after an epoch's manifest appears (the commit is
// done, publishing and retention are under way), and right after a new
// dataset version or sink file appears (staged, not committed).
// scripts/checkpoint_soak.sh runs the same kinds of kills many more times.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <arrow/array.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "testing/run_command.h"

namespace thund::native::testing {
namespace {

namespace fs = std::filesystem;
using engine::QuoteString;
using ::thund::testing::ReadAll;
using ::thund::testing::Spawn;
using Clock = std::chrono::steady_clock;

// A sink's files under the run's sink directory ({out}).
struct SinkFiles {
  std::string name;
  std::string glob;  // "cheap/*.parquet"
};

// One pipeline under test. `sql` names its sink locations {out}/... and its
// file drop {data}; `datasets`, `sinks` (file sinks) and `merge_sinks` (at
// {out}/<name>, stored like a dataset) are everything it writes.
struct Case {
  std::string name;  // the pipeline is ck_<name>
  std::string sql;
  std::vector<std::string> datasets;
  std::vector<SinkFiles> sinks;
  std::vector<std::string> merge_sinks = {};
};

// One storage root with its sink directory and SQL file.
struct Store {
  std::string base;
  std::string root;
  std::string out;
  std::string sql;
  std::string checkpoints;
  int runs = 0;
};

// The run's end: killed (the kill landed), or its exit code; whether it
// resumed from an epoch (a recovery event says so).
struct RunEnd {
  bool landed = false;
  int exit_code = -1;
  bool resumed = false;
  std::string log;
};

// When to kill: `now(seconds since the start)` says it is time.
struct KillPoint {
  std::string what;
  std::function<bool(double)> now;
};

struct Totals {
  int sent = 0;
  int landed = 0;
  int resumed = 0;
  int stale = 0;  // `current` symlinks left behind `_current` after a completed run
};

// Kills of every pipeline run so far in this process.
Totals& Suite() {
  static Totals t;
  return t;
}

std::string Fill(std::string sql, const std::string& key, const std::string& value) {
  for (size_t at; (at = sql.find(key)) != std::string::npos;) sql.replace(at, key.size(), value);
  return sql;
}

std::optional<ino_t> Inode(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_ino;
}

std::vector<std::string> Names(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) out.push_back(e.path().filename());
  return out;
}

// The newest epoch with a manifest (0: none).
int64_t CommittedEpoch(const Store& s) {
  int64_t best = 0;
  for (const auto& n : Names(s.checkpoints)) {
    if (n.rfind("epoch=", 0) == 0 && fs::exists(s.checkpoints + "/" + n + "/_manifest.json")) {
      best = std::max<int64_t>(best, std::stoll(n.substr(6)));
    }
  }
  return best;
}

// The version the commit point of the table at `dir` names ("v-000007"; ""
// if none).
std::string CommittedVersion(const std::string& dir) {
  std::istringstream in(ReadAll(dir + "/_current"));
  std::string v;
  in >> v;
  return v;
}

// The directories of everything `c` stores in versions: datasets, merge sinks.
std::vector<std::string> Tables(const Case& c, const Store& s) {
  std::vector<std::string> out;
  for (const auto& d : c.datasets) out.push_back(s.root + "/" + d);
  for (const auto& m : c.merge_sinks) out.push_back(s.out + "/" + m);
  return out;
}

// Tables whose `current` symlink names another version than `_current`.
std::vector<std::string> StaleLinks(const Case& c, const Store& s) {
  std::vector<std::string> out;
  for (const auto& dir : Tables(c, s)) {
    std::error_code ec;
    const fs::path link = fs::read_symlink(dir + "/current", ec);
    const std::string v = CommittedVersion(dir);
    if (!v.empty() && link.filename() != v) {
      out.push_back(fs::path(dir).filename().string() + ": _current " + v + ", current -> " +
                    link.string());
    }
  }
  return out;
}

// A store's paths: its SQL file and sink directory under `base`.
Store At(const std::string& base, const std::string& root) {
  Store s;
  s.base = base;
  s.root = root;
  s.out = base + "/out";
  s.sql = base + "/p.sql";
  return s;
}

std::string EpochDir(const Store& s, int64_t epoch) {
  char name[32];
  std::snprintf(name, sizeof(name), "/epoch=%06lld", static_cast<long long>(epoch));
  return s.checkpoints + name;
}

// Dataset version directories and sink stream files, with their inodes (a
// leftover rewritten under its old name counts as new).
std::set<std::pair<std::string, ino_t>> Staged(const Case& c, const Store& s) {
  std::set<std::pair<std::string, ino_t>> out;
  auto add = [&](const std::string& dir, const std::string& prefix) {
    for (const auto& n : Names(dir)) {
      if (n.rfind(prefix, 0) != 0) continue;
      if (auto i = Inode(dir + "/" + n)) out.insert({dir + "/" + n, *i});
    }
  };
  for (const auto& dir : Tables(c, s)) add(dir, "v-");
  for (const auto& k : c.sinks) add(fs::path(s.out + "/" + k.glob).parent_path(), "part-stream");
  return out;
}

// The log of the next run of `s`.
std::string NextLog(const Store& s) {
  return s.base + "/run-" + std::to_string(s.runs + 1) + ".log";
}

// Each kind of kill point, drawn from `rng`. `left`: the estimated seconds
// the run has left; `epochs_left`: epochs the reference committed after this
// store's newest (kill points past them would never come).
KillPoint DrawKill(std::mt19937_64& rng, const Case& c, const Store& s, double left,
                   int64_t epochs_left) {
  auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  const int64_t committed = CommittedEpoch(s);
  int kind = static_cast<int>(rng() % 100);
  if (epochs_left <= 0) kind %= 45;  // only the delays can still land
  char what[96];
  if (kind >= 35 && kind < 45 && committed > 0) {
    // While the run checks the epoch and restores the state.
    const std::string log = NextLog(s);
    const double extra = uniform(0, 0.002);
    auto seen = std::make_shared<double>(-1);
    std::snprintf(what, sizeof(what), "%.1f ms into recovery", extra * 1000);
    return {what, [log, extra, seen](double t) {
              if (*seen < 0 && ReadAll(log).find("\"event\":\"recovery\"") != std::string::npos) {
                *seen = t;
              }
              return *seen >= 0 && t >= *seen + extra;
            }};
  }
  if (kind < 45) {
    // A delay past the run's end would miss it (and start a new round).
    const double d = kind < 10 || kind >= 35 ? uniform(0, 0.06) : uniform(0, 0.7 * left);
    std::snprintf(what, sizeof(what), "after %.0f ms", d * 1000);
    return {what, [d](double t) { return t >= d; }};
  }
  const int64_t m = 1 + static_cast<int64_t>(rng() % std::min<int64_t>(4, epochs_left));
  const int64_t epoch = committed + m;
  if (kind < 65) {
    const std::string dir = EpochDir(s, epoch);
    const std::optional<ino_t> stale = Inode(dir);  // a leftover the rerun discards
    std::snprintf(what, sizeof(what), "as epoch %lld is begun", static_cast<long long>(epoch));
    return {what, [dir, stale](double) {
              const std::optional<ino_t> now = Inode(dir);
              return now.has_value() && now != stale;
            }};
  }
  if (kind < 85) {
    const std::string manifest = EpochDir(s, epoch) + "/_manifest.json";
    const double extra = uniform(0, 0.003);
    auto seen = std::make_shared<double>(-1);
    std::snprintf(what, sizeof(what), "%.1f ms after epoch %lld commits", extra * 1000,
                  static_cast<long long>(epoch));
    return {what, [manifest, extra, seen](double t) {
              if (*seen < 0 && fs::exists(manifest)) *seen = t;
              return *seen >= 0 && t >= *seen + extra;
            }};
  }
  const auto before = Staged(c, s);
  return {"as a dataset version or sink file is staged", [&c, &s, before](double) {
            for (const auto& e : Staged(c, s)) {
              if (before.count(e) == 0) return true;
            }
            return false;
          }};
}

class CheckpointKillTest : public BatchFixture {
 protected:
  // The reference lives at root() (so ReadDataset() and EXPECT_DATASET_MATCHES
  // read it), its sinks under out/; killed runs under killed-N/.
  Store MakeStore(const Case& c, const std::string& base, const std::string& root) {
    Store s = At(base, root);
    s.checkpoints = root + "/_thund/checkpoints/ck_" + c.name;
    fs::create_directories(base);
    std::ofstream(s.sql) << Fill(Fill(c.sql, "{out}", s.out), "{data}", Path("data"));
    return s;
  }

  // One run of `s`, killed at `kill` when given (and still running then).
  RunEnd RunOnce(Store& s, const KillPoint* kill) {
    RunEnd r;
    r.log = NextLog(s);
    ++s.runs;
    const pid_t pid =
        Spawn({THUND_BINARY, "run", s.sql, "--storage", s.root, "--events", "json"}, r.log);
    if (pid < 0) return r;
    const auto t0 = Clock::now();
    int status = 0;
    while (true) {
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      const double t = std::chrono::duration<double>(Clock::now() - t0).count();
      if (kill != nullptr && kill->now(t)) {
        ::kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
    r.landed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::istringstream lines(ReadAll(r.log));
    for (std::string line; std::getline(lines, line);) {
      r.resumed |= line.find("\"event\":\"recovery\"") != std::string::npos &&
                   line.find("resumed from epoch") != std::string::npos;
    }
    return r;
  }

  // A relation over what `s` committed of a dataset or sink; `like` (the
  // reference's) gives an empty one of its columns when `s` has nothing.
  // A table (a dataset, a merge sink) is read at the version its commit point
  // (`_current`) names, not through the `current` symlink, which a kill
  // between the two renames leaves behind (docs/storage.md; see StaleLinks()).
  std::string Table(const std::string& dir, const std::string& like = "") {
    const std::string version = CommittedVersion(dir);
    if (!version.empty() && fs::exists(dir + "/" + version)) {
      return "(SELECT * FROM read_parquet(" + QuoteString(dir + "/" + version + "/*.parquet") +
             "))";
    }
    return "(SELECT * FROM " + like + " LIMIT 0)";
  }
  std::string Relation(const Store& s, const std::string& dataset, const std::string& like = "") {
    return Table(s.root + "/" + dataset, like);
  }
  std::string Relation(const Store& s, const SinkFiles& k, const std::string& like = "") {
    const fs::path glob = s.out + "/" + k.glob;
    const std::string ext = glob.extension();
    bool any = false;
    for (const auto& n : Names(glob.parent_path())) any |= fs::path(n).extension() == ext;
    if (!any) return "(SELECT * FROM " + like + " LIMIT 0)";
    const std::string reader = ext == ".csv" ? "read_csv" : "read_parquet";
    return "(SELECT * FROM " + reader + "(" + QuoteString(glob.string()) + "))";
  }

  // Rows of `expected`, rows of it `actual` lacks, rows `actual` has beyond it
  // (multisets).
  std::array<int64_t, 3> Diff(const std::string& expected, const std::string& actual) {
    auto t = Oracle("SELECT (SELECT count(*) FROM " + expected + "), (SELECT count(*) FROM (" +
                    expected + " EXCEPT ALL " + actual + ")), (SELECT count(*) FROM (" + actual +
                    " EXCEPT ALL " + expected + "))");
    if (!t) return {-1, -1, -1};
    std::array<int64_t, 3> v{};
    for (int i = 0; i < 3; ++i) {
      v[i] = std::static_pointer_cast<arrow::Int64Array>(t->column(i)->chunk(0))->Value(0);
    }
    return v;
  }

  // Expects `actual` (a relation) to hold exactly the rows of `expected`.
  void ExpectSame(const std::string& what, const std::string& expected,
                  const std::string& actual) {
    const auto v = Diff(expected, actual);
    EXPECT_GT(v[0], 0) << what << ": no rows to compare";
    EXPECT_EQ(v[1], 0) << what << ": " << v[1] << " of " << v[0] << " rows lost";
    EXPECT_EQ(v[2], 0) << what << ": " << v[2] << " rows too many";
  }

  // The reference run, then kills in fresh roots until `kills` landed, each
  // round ending with a run to completion that must equal the reference.
  void KillAndCompare(const Case& c, int kills) {
    const char* env = std::getenv("THUND_KILL_SEED");
    const uint64_t base_seed = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::cout << "[ seed ] " << base_seed << " (THUND_KILL_SEED=" << base_seed
              << " repeats it)\n";
    std::mt19937_64 rng(base_seed ^ std::hash<std::string>{}(c.name));

    Store ref = MakeStore(c, Path("reference"), root());
    const auto t0 = Clock::now();
    const RunEnd done = RunOnce(ref, nullptr);
    const double t_ref = std::chrono::duration<double>(Clock::now() - t0).count();
    ASSERT_EQ(done.exit_code, 0) << ReadAll(done.log);
    const int64_t epochs = CommittedEpoch(ref);
    std::cout << "[ " << c.name << " ] reference: " << t_ref << " s, " << epochs << " epochs\n";
    ASSERT_GE(epochs, 10) << "the reference should take many triggers";

    Totals n;
    for (int round = 0; n.landed < kills && round < 6; ++round) {
      Store s = MakeStore(c, Path("killed-" + std::to_string(round)),
                          Path("killed-" + std::to_string(round)) + "/store");
      while (n.landed < kills) {
        const int64_t committed = CommittedEpoch(s);
        const double left = t_ref * std::max(0.15, 1.0 - double(committed) / double(epochs));
        const KillPoint kill = DrawKill(rng, c, s, left, epochs - committed);
        const RunEnd r = RunOnce(s, &kill);
        ++n.sent;
        n.landed += r.landed;
        n.resumed += r.resumed;
        std::cout << "[ kill ] " << c.name << " round " << round << ": " << kill.what << " (epoch "
                  << committed << " committed): "
                  << (r.landed ? "killed" : "finished first") << (r.resumed ? ", resumed" : "")
                  << "\n";
        if (!r.landed) {
          EXPECT_EQ(r.exit_code, 0) << "a run after a kill failed:\n" << ReadAll(r.log);
          break;
        }
      }
      // The run to completion must equal the reference, and a rerun with
      // nothing left to do must leave it so; both resume from an epoch.
      for (int again = 0; again < 2; ++again) {
        const bool had_epoch = CommittedEpoch(s) > 0;
        const RunEnd r = RunOnce(s, nullptr);
        n.resumed += r.resumed;
        ASSERT_EQ(r.exit_code, 0) << "the run to completion failed:\n" << ReadAll(r.log);
        EXPECT_EQ(r.resumed, had_epoch) << ReadAll(r.log);
        CompareStores(c, ref, s);
        for (const auto& stale : StaleLinks(c, s)) {
          ++n.stale;
          std::cout << "[ stale link ] " << c.name << " round " << round << ": " << stale
                    << " after a completed run\n";
        }
      }
    }
    std::cout << "[ " << c.name << " ] kills sent " << n.sent << ", landed " << n.landed
              << ", runs resumed from an epoch " << n.resumed << ", stale current links "
              << n.stale << "\n";
    Suite().sent += n.sent;
    Suite().landed += n.landed;
    Suite().resumed += n.resumed;
    Suite().stale += n.stale;
    std::cout << "[ suite ] so far: kills sent " << Suite().sent << ", landed " << Suite().landed
              << ", runs resumed " << Suite().resumed << ", stale current links "
              << Suite().stale << "\n";
    EXPECT_EQ(n.stale, 0) << "a completed run must leave every `current` symlink at _current";
    EXPECT_GE(n.landed, kills);
    EXPECT_GE(n.resumed, n.landed / 2) << "most reruns should resume from an epoch";
  }

  void CompareStores(const Case& c, const Store& ref, const Store& s) {
    int64_t rows = 0;
    const std::vector<std::string> ref_tables = Tables(c, ref), tables = Tables(c, s);
    for (size_t i = 0; i < tables.size(); ++i) {
      const std::string a = Table(ref_tables[i]);
      const auto v = Diff(a, Table(tables[i], a));
      rows += v[0];
      EXPECT_EQ(v[1], 0) << tables[i] << ": " << v[1] << " of " << v[0] << " rows lost";
      EXPECT_EQ(v[2], 0) << tables[i] << ": " << v[2] << " rows duplicated";
    }
    for (const auto& k : c.sinks) {
      const std::string a = Relation(ref, k);
      const auto v = Diff(a, Relation(s, k, a));
      rows += v[0];
      EXPECT_EQ(v[1], 0) << k.name << ": " << v[1] << " of " << v[0] << " rows lost in " << s.base;
      EXPECT_EQ(v[2], 0) << k.name << ": " << v[2] << " rows duplicated in " << s.base;
    }
    std::cout << "[ " << c.name << " ] " << rows << " rows compared with the reference\n";
  }

  // The reference's committed `dataset`, as a relation.
  std::string Ref(const std::string& dataset) {
    return Relation(At(Path("reference"), root()), dataset);
  }
};

constexpr int kKills = 11;  // landed kills per pipeline

// A Nexmark generator table: 60,000 events in 30 triggers of 2,000, event
// time 2,000 events per second, up to 1 s out of order.
std::string Generator(const std::string& table, const std::string& kind, int seed,
                      int per_batch = 2000) {
  return "CREATE STREAMING TABLE " + table + " AS SELECT * FROM STREAM read_generator(\n"
         "  kind => '" + kind + "', seed => " + std::to_string(seed) + ", rows_per_batch => " +
         std::to_string(per_batch) + ", total_rows => 60000,\n"
         "  events_per_second => 2000, out_of_orderness => '1s');\n";
}

TEST_F(CheckpointKillTest, WindowedAggregationSurvivesKills) {
  // The lateness (0.5 s) is below the disorder (1 s): rows are dropped as
  // late, into late_bids, which is as much part of the state as the windows.
  const Case c{"window",
               "CREATE PIPELINE ck_window;\n" + Generator("bids", "nexmark_bid", 11) + R"sql(
CREATE STREAMING TABLE late_bids;
CREATE STREAMING TABLE per_window WITH (mode = 'incremental', late_rows = 'late_bids') AS
SELECT window.start AS ws, channel, count(*) AS n, sum(price) AS total, max(price) AS top
FROM STREAM bids WATERMARK date_time DELAY OF INTERVAL 500 MILLISECONDS
GROUP BY window(date_time, '1 second'), channel;
CREATE STREAMING TABLE per_auction WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '1 second') AS
SELECT window_start, window_end, auction, count(*) AS n, min(price) AS low
FROM TUMBLE(TABLE STREAM bids, DESCRIPTOR(date_time), INTERVAL '3' SECONDS)
GROUP BY window_start, window_end, auction;
)sql",
               {"bids", "late_bids", "per_window", "per_auction"},
               {}};
  KillAndCompare(c, kKills);
  // The reference is the batch query over the rows that were not late.
  const std::string bids = Ref("bids");
  ExpectSame("per_window",
             "(SELECT to_timestamp(epoch_us(date_time) // 1000000) AS ws, channel, count(*) AS n,"
             " sum(price) AS total, max(price) AS top FROM (" + bids +
                 " EXCEPT ALL SELECT * EXCLUDE (__flow, __watermark) FROM " + Ref("late_bids") +
                 ") GROUP BY ALL)",
             Ref("per_window"));
  ExpectSame("per_auction",
             "(SELECT to_timestamp(epoch_us(date_time) // 3000000 * 3) AS window_start,"
             " to_timestamp(epoch_us(date_time) // 3000000 * 3 + 3) AS window_end, auction,"
             " count(*) AS n, min(price) AS low FROM " + bids + " GROUP BY ALL)",
             Ref("per_auction"));
}

TEST_F(CheckpointKillTest, StreamJoinsSurviveKills) {
  const Case c{"join",
               "CREATE PIPELINE ck_join;\n" + Generator("persons", "nexmark_person", 7) +
                   Generator("auctions", "nexmark_auction", 7) +
                   Generator("bids", "nexmark_bid", 7) + R"sql(
CREATE STREAMING TABLE early_bids WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT a.id AS auction, a.category, b.bidder, b.price, b.date_time
FROM STREAM(auctions) AS a JOIN STREAM(bids) AS b
  ON a.id = b.auction AND b.date_time BETWEEN a.date_time AND a.date_time + INTERVAL 3 SECONDS;
CREATE STREAMING TABLE new_sellers WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '2 seconds') AS
SELECT p.window_start, p.id, p.name, count(*) AS auctions
FROM TUMBLE(TABLE persons, DESCRIPTOR(date_time), INTERVAL '5' SECONDS) AS p
JOIN TUMBLE(TABLE auctions, DESCRIPTOR(date_time), INTERVAL '5' SECONDS) AS a
  ON p.window_start = a.window_start AND p.id = a.seller
GROUP BY p.window_start, p.id, p.name;
)sql",
               {"persons", "auctions", "bids", "early_bids", "new_sellers"},
               {}};
  KillAndCompare(c, kKills);
  // The lateness (2 s) covers the disorder (1 s): nothing is late, and the
  // joins equal the batch joins.
  ExpectSame("early_bids",
             "(SELECT a.id AS auction, a.category, b.bidder, b.price, b.date_time FROM " +
                 Ref("auctions") + " a JOIN " + Ref("bids") +
                 " b ON a.id = b.auction AND b.date_time BETWEEN a.date_time AND"
                 " a.date_time + INTERVAL 3 SECONDS)",
             Ref("early_bids"));
  const std::string w = "to_timestamp(epoch_us(date_time) // 5000000 * 5)";
  ExpectSame("new_sellers",
             "(SELECT p.ws AS window_start, p.id, p.name, count(*) AS auctions FROM (SELECT *, " +
                 w + " AS ws FROM " + Ref("persons") + ") p JOIN (SELECT *, " + w + " AS ws FROM " +
                 Ref("auctions") + ") a ON p.ws = a.ws AND p.id = a.seller GROUP BY ALL)",
             Ref("new_sellers"));
}

TEST_F(CheckpointKillTest, DeduplicationSurvivesKills) {
  const Case c{"dedup", "CREATE PIPELINE ck_dedup;\n" + Generator("bids", "nexmark_bid", 5) + R"sql(
CREATE STREAMING TABLE first_bids WITH (mode = 'incremental', watermark = 'date_time',
  allowed_lateness = '1 second') AS
SELECT bidder, auction, price, date_time FROM (
  SELECT *, row_number() OVER (PARTITION BY bidder ORDER BY date_time) AS rn FROM STREAM(bids)
) AS ranked WHERE rn = 1;
CREATE STREAMING TABLE last_bids WITH (mode = 'incremental') AS
SELECT bidder, auction, price, date_time FROM (
  SELECT *, row_number() OVER (PARTITION BY bidder ORDER BY date_time DESC) AS rn
  FROM STREAM(bids)
) AS ranked WHERE rn = 1;
CREATE STREAMING TABLE pairs WITH (mode = 'incremental') AS
SELECT DISTINCT auction, channel FROM STREAM(bids);
)sql",
               {"bids", "first_bids", "last_bids", "pairs"},
               {}};
  KillAndCompare(c, kKills);
  const std::string bids = Ref("bids");
  // No bidder's first or last bid ties on event time: each has one answer.
  auto ties = Oracle("SELECT count(*) FROM (SELECT bidder, date_time FROM " + bids +
                     " b WHERE date_time IN (SELECT min(date_time) FROM " + bids +
                     " WHERE bidder = b.bidder UNION SELECT max(date_time) FROM " + bids +
                     " WHERE bidder = b.bidder) GROUP BY ALL HAVING count(*) > 1)");
  ASSERT_NE(ties, nullptr);
  ASSERT_EQ(std::static_pointer_cast<arrow::Int64Array>(ties->column(0)->chunk(0))->Value(0), 0);
  ExpectSame("first_bids",
             "(SELECT bidder, auction, price, date_time FROM (SELECT *, row_number() OVER"
             " (PARTITION BY bidder ORDER BY date_time) AS rn FROM " + bids + ") WHERE rn = 1)",
             Ref("first_bids"));
  ExpectSame("last_bids",
             "(SELECT bidder, auction, price, date_time FROM (SELECT *, row_number() OVER"
             " (PARTITION BY bidder ORDER BY date_time DESC) AS rn FROM " + bids +
             ") WHERE rn = 1)",
             Ref("last_bids"));
  ExpectSame("pairs", "(SELECT DISTINCT auction, channel FROM " + bids + ")", Ref("pairs"));
}

// The change feed of the CDC pipelines: 80 CSV files of 50 changes to 200
// keys under data/, out of sequence order, 10% deletes, some equal sequences
// (the later arrival wins); `n` numbers the changes in arrival order (file by
// file) for the oracle. Four files per trigger: 20 triggers.
constexpr const char* kChanges = R"sql(
CREATE STREAMING TABLE changes (id BIGINT, name STRING, amount BIGINT, seq BIGINT, op STRING,
  n BIGINT)
AS SELECT * FROM STREAM read_files('{data}', format => 'csv', max_files_per_trigger => 4);
)sql";

// SCD type 1 over `changes`: per key the last change by (sequence, arrival),
// unless it is a delete.
std::string Scd1Oracle(const std::string& changes) {
  return "(SELECT id, name, amount, seq FROM (SELECT *, row_number() OVER (PARTITION BY id"
         " ORDER BY seq DESC, n DESC) AS r FROM " + changes + ") WHERE r = 1 AND op <> 'D')";
}

// Writes the feed through `write(name, text)`.
void WriteChanges(const std::function<void(const std::string&, const std::string&)>& write) {
  std::mt19937 data(3);
  int64_t arrival = 0;
  for (int f = 0; f < 80; ++f) {
    std::string text = "id,name,amount,seq,op,n\n";
    for (int i = 0; i < 50; ++i) {
      const int64_t id = data() % 200, name = data() % 5, amount = data() % 1000;
      const int64_t seq = data() % 20000;
      const char* op = data() % 10 == 0 ? "D" : "U";
      text += std::to_string(id) + ",n" + std::to_string(name) + "," + std::to_string(amount) +
              "," + std::to_string(seq) + "," + op + "," + std::to_string(arrival++) + "\n";
    }
    char file[32];
    std::snprintf(file, sizeof(file), "data/c-%05d.csv", f);
    write(file, text);
  }
}

TEST_F(CheckpointKillTest, AutoCdcOverAFileDropSurvivesKills) {
  WriteChanges([&](const std::string& f, const std::string& t) { WriteFile(f, t); });
  const Case c{"cdc", "CREATE PIPELINE ck_cdc;" + std::string(kChanges) + R"sql(
CREATE STREAMING TABLE scd1;
CREATE FLOW scd1_cdc WITH (mode = 'incremental') AS AUTO CDC INTO scd1 FROM STREAM(changes)
KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, n);
CREATE STREAMING TABLE scd2;
CREATE FLOW scd2_cdc WITH (mode = 'incremental') AS AUTO CDC INTO scd2
FROM (SELECT id, name, amount, seq, op, n FROM STREAM(changes) WHERE amount >= 0)
KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, n)
STORED AS SCD TYPE 2;
)sql",
               {"changes", "scd1", "scd2"},
               {}};
  KillAndCompare(c, kKills);
  const std::string all = "(SELECT * FROM read_csv(" + QuoteString(Path("data") + "/*.csv") + "))";
  ExpectSame("changes", all, Ref("changes"));
  ExpectSame("scd1", Scd1Oracle(all), Ref("scd1"));
  // SCD type 2: of equal sequences the last arrival; a version opens at an
  // upsert after a delete or with other values, and ends at the next version
  // or delete.
  ExpectSame("scd2",
             "(WITH eff AS (SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY id, seq"
             " ORDER BY n DESC) AS r FROM " + all + ") WHERE r = 1),"
             " marked AS (SELECT *, lag(op) OVER w AS pop, lag(name) OVER w AS pname,"
             " lag(amount) OVER w AS pamount FROM eff WINDOW w AS (PARTITION BY id ORDER BY seq)),"
             " bounds AS (SELECT id, name, amount, seq, op FROM marked WHERE op = 'D' OR"
             " pop IS NULL OR pop = 'D' OR pname <> name OR pamount <> amount)"
             " SELECT id, name, amount, seq, seq AS __START_AT, lead(seq) OVER (PARTITION BY id"
             " ORDER BY seq) AS __END_AT FROM bounds QUALIFY op <> 'D')",
             Ref("scd2"));
}

TEST_F(CheckpointKillTest, FileSinksSurviveKills) {
  // Streaming appends into a Parquet and a CSV sink (one file per epoch); 40
  // triggers of 1,500 events. Merge sinks: MergeSinks... below. (Streams into
  // keyed_write targets are refused by `thund check`: docs/keyed-writes.md.)
  const Case c{"sink",
               "CREATE PIPELINE ck_sink;\n" + Generator("bids", "nexmark_bid", 9, 1500) + R"sql(
CREATE SINK cheap USING parquet LOCATION '{out}/cheap';
CREATE FLOW to_cheap WITH (mode = 'incremental', output_mode = 'append') AS
INSERT INTO cheap BY NAME
SELECT auction, bidder, price, channel, date_time FROM STREAM(bids) WHERE price % 3 = 0;
CREATE SINK partner USING csv LOCATION '{out}/partner';
CREATE FLOW to_partner WITH (mode = 'incremental', output_mode = 'append') AS
INSERT INTO partner BY NAME
SELECT auction, bidder, price FROM STREAM(bids) WHERE channel = 'partner';
)sql",
               {"bids"},
               {{"cheap", "cheap/*.parquet"}, {"partner", "partner/*.csv"}}};
  KillAndCompare(c, kKills);
  const Store ref = At(Path("reference"), root());
  ExpectSame("cheap",
             "(SELECT auction, bidder, price, channel, date_time FROM " + Ref("bids") +
                 " WHERE price % 3 = 0)",
             Relation(ref, c.sinks[0]));
  ExpectSame("partner",
             "(SELECT auction, bidder, price FROM " + Ref("bids") + " WHERE channel = 'partner')",
             Relation(ref, c.sinks[1]));
}

// Merge sinks fed by incremental flows lose rows on any restart, killed or
// not (see the next test), so this kill test is disabled until that is
// fixed: AUTO CDC into a merge sink, and an Update aggregation into one.
TEST_F(CheckpointKillTest, MergeSinksSurviveKills) {
  WriteChanges([&](const std::string& f, const std::string& t) { WriteFile(f, t); });
  const Case c{"merge", "CREATE PIPELINE ck_merge;" + std::string(kChanges) + R"sql(
CREATE SINK live USING parquet LOCATION '{out}/live' WITH (write_mode = 'merge', merge_keys = (id));
CREATE FLOW live_cdc WITH (mode = 'incremental') AS AUTO CDC INTO live FROM STREAM(changes)
KEYS (id) APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, n);
CREATE SINK per_id USING parquet LOCATION '{out}/per_id'
WITH (write_mode = 'merge', merge_keys = (id));
CREATE FLOW to_per_id WITH (mode = 'incremental', output_mode = 'update') AS
INSERT INTO per_id BY NAME
SELECT id, count(*) AS changes, sum(amount) AS amount FROM STREAM(changes) GROUP BY id;
)sql",
               {"changes"},
               {},
               {"live", "per_id"}};
  KillAndCompare(c, kKills);
  const std::string all = "(SELECT * FROM read_csv(" + QuoteString(Path("data") + "/*.csv") + "))";
  ExpectSame("live", Scd1Oracle(all), Table(Path("reference") + "/out/live"));
  ExpectSame("per_id",
             "(SELECT id, count(*) AS changes, sum(amount) AS amount FROM " + all + " GROUP BY id)",
             Table(Path("reference") + "/out/per_id"));
}

// An incremental Update (or AUTO CDC) flow into a merge sink replaces the
// sink with its result at every epoch, and after a restart that result holds
// only the keys the flow touched since the restart: every other key vanishes
// from the sink. No kill needed: `--max-triggers 6`, then a second run.
// (Recompute mode keeps every key.) Enable once fixed.
TEST_F(CheckpointKillTest, MergeSinkKeepsEveryKeyAcrossARestart) {
  const std::string out = Path("totals");
  WriteFile("merge.sql", Fill(R"sql(CREATE PIPELINE merge_restart;
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(
  kind => 'keyed_events', seed => 1, rows_per_batch => 10, total_rows => 100, keys => '100');
CREATE SINK totals USING parquet LOCATION 'OUT' WITH (write_mode = 'merge', merge_keys = (key));
CREATE FLOW to_totals WITH (mode = 'incremental', output_mode = 'update') AS
INSERT INTO totals BY NAME
SELECT key, count(*) AS n, sum(value) AS total FROM STREAM(ev) GROUP BY key;
)sql",
                              "OUT", out));
  const std::string sql = Path("merge.sql");
  const std::string run = std::string(THUND_BINARY) + " run " + ::thund::testing::ShellQuote(sql) +
                          " --storage " + ::thund::testing::ShellQuote(root()) + " --events none";
  ASSERT_EQ(::thund::testing::RunCommand(run + " --max-triggers 6").exit_code, 0);
  ASSERT_EQ(::thund::testing::RunCommand(run).exit_code, 0);
  ExpectSame("totals",
             "(SELECT key, count(*) AS n, sum(value) AS total FROM " + Ref("ev") + " GROUP BY key)",
             Table(out));
}

// Not a crash: the incremental first row per key ignores DESC. The plan
// reads a window function's ORDER BY direction as "ORDER_DESCENDING", while
// DuckDB 1.4.4 serializes it as "DESCENDING" (src/sql/plan_expr.cc), so
// `row_number() OVER (PARTITION BY k ORDER BY seq DESC) = 1` keeps each key's
// lowest seq. Enable once fixed.
TEST_F(CheckpointKillTest, LastRowPerKeyIsTheBatchQuerysInIncrementalMode) {
  WriteFile("last.sql", R"sql(CREATE PIPELINE last_row;
CREATE STREAMING TABLE ev AS SELECT * FROM STREAM read_generator(
  kind => 'keyed_events', seed => 1, rows_per_batch => 1000, total_rows => 1000, keys => '5');
CREATE STREAMING TABLE last_inc WITH (mode = 'incremental') AS
SELECT key, value, seq FROM (
  SELECT *, row_number() OVER (PARTITION BY key ORDER BY seq DESC) AS rn FROM STREAM(ev)
) AS ranked WHERE rn = 1;
)sql");
  Store s = At(Path("last"), root());
  s.sql = Path("last.sql");
  fs::create_directories(s.base);
  ASSERT_EQ(RunOnce(s, nullptr).exit_code, 0);
  ExpectSame("last_inc",
             "(SELECT key, value, seq FROM (SELECT *, row_number() OVER (PARTITION BY key ORDER"
             " BY seq DESC) AS rn FROM " + Ref("ev") + ") WHERE rn = 1)",
             Ref("last_inc"));
}

}  // namespace
}  // namespace thund::native::testing
