// engine::batch::MergeTable: upserts and deletes by composite keys checked
// against DuckDB's own INSERT OR REPLACE on a PRIMARY KEY table, replays of
// applied epochs, the schema and NULL-key errors, and a fault injected at
// every write of an Apply.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>

#include <arrow/builder.h>
#include <arrow/filesystem/localfs.h>

#include "engine/batch/merge_table.h"
#include "engine/batch/version_manifest.h"
#include "engine/duckdb/duckdb_session.h"
#include "engine/fs/atomic_write.h"
#include "engine/fs/fault_injection_fs.h"
#include "engine/table_compare.h"

namespace thund::engine::batch {
namespace {

namespace fs = std::filesystem;
using engine::testing::RowStrings;
using engine::testing::TablesEqualOrdered;
using engine::testing::TablesEqualUnordered;

constexpr const char* kColumns = "k1 INTEGER, k2 VARCHAR, v BIGINT, s VARCHAR, d DOUBLE";

std::shared_ptr<arrow::ChunkedArray> Int64Column(const std::vector<int64_t>& values) {
  arrow::Int64Builder b;
  EXPECT_TRUE(b.AppendValues(values).ok());
  return std::make_shared<arrow::ChunkedArray>(b.Finish().ValueOrDie());
}

class MergeTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    local_ = std::make_shared<arrow::fs::LocalFileSystem>();
    auto oracle = DuckDbSession::Open();
    ASSERT_TRUE(oracle.ok()) << oracle.status().ToString();
    oracle_ = std::move(*oracle);
  }
  std::string Loc() const { return dir_.File("out/table"); }
  MergeTable OpenTable(std::shared_ptr<arrow::fs::FileSystem> fs = nullptr,
                       std::vector<std::string> keys = {"k1", "k2"}) {
    auto t = MergeTable::Open(fs ? fs : local_, Loc(), std::move(keys));
    EXPECT_TRUE(t.ok()) << t.status().ToString();
    return std::move(t).ValueOrDie();
  }
  // Rows from a DuckDB query, in its order.
  std::shared_ptr<arrow::Table> Rows(const std::string& sql) {
    auto t = oracle_->Query(sql);
    EXPECT_TRUE(t.ok()) << t.status().ToString() << "\n" << sql;
    return t.ok() ? *t : nullptr;
  }
  std::shared_ptr<arrow::Table> ReadTable(const MergeTable& t) {
    auto r = t.Read();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : nullptr;
  }

  engine::testing::TempDir dir_;
  std::shared_ptr<arrow::fs::FileSystem> local_;
  std::unique_ptr<DuckDbSession> oracle_;
};

// ------------------------------------------------- random oracle test ----

struct Batch {
  std::string values_sql;  // SELECT rn, k1, k2, v, s, d ... (typed)
  std::set<std::pair<int, std::string>> keys;
};

class RandomBatches {
 public:
  explicit RandomBatches(uint32_t seed) : rng_(seed) {}

  // Up to `max_rows` rows of the six columns; keys from a small domain, so
  // batches repeat keys among themselves and with the table.
  Batch Next(int max_rows, bool key_columns_only = false) {
    const int n = Uniform(0, max_rows);
    Batch b;
    std::string values;
    for (int i = 0; i < n; ++i) {
      const int k1 = Uniform(0, 4);
      const std::string k2 = kK2[Uniform(0, 4)];
      b.keys.insert({k1, k2});
      values += (i ? ", " : "") + std::string("(") + std::to_string(i) + ", " +
                std::to_string(k1) + ", '" + k2 + "', " + Maybe(std::to_string(Uniform(-50, 50))) +
                ", " + Maybe("'s" + std::to_string(Uniform(0, 9)) + "'") + ", " +
                Maybe(std::to_string(Uniform(0, 100)) + ".25") + ")";
    }
    const std::string columns = " t(rn, k1, k2, v, s, d)";
    const std::string from = n == 0 ? "(VALUES (0, 0, 'a', NULL, NULL, NULL))" + columns +
                                          " WHERE false"
                                    : "(VALUES " + values + ")" + columns;
    b.values_sql = std::string("SELECT rn::BIGINT AS rn, k1::INTEGER AS k1, k2::VARCHAR AS k2") +
                   (key_columns_only ? ""
                                     : ", v::BIGINT AS v, s::VARCHAR AS s, d::DOUBLE AS d") +
                   " FROM " + from;
    return b;
  }
  int Uniform(int lo, int hi) { return lo + static_cast<int>(rng_() % (hi - lo + 1)); }

 private:
  std::string Maybe(const std::string& v) { return Uniform(0, 3) == 0 ? "NULL" : v; }
  static constexpr const char* kK2[] = {"a", "b", "it''s", "", "x y"};
  std::mt19937 rng_;
};

TEST_F(MergeTableTest, RandomUpsertsAndDeletesMatchDuckDbInsertOrReplace) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    fs::remove_all(Loc());
    THUND_ASSERT_OK(oracle_->Execute("CREATE OR REPLACE TABLE t (" + std::string(kColumns) +
                                     ", PRIMARY KEY (k1, k2))"));
    RandomBatches gen(seed);
    MergeTable table = OpenTable();
    EXPECT_EQ(table.applied_epoch(), 0);
    for (int64_t epoch = 1; epoch <= 30; ++epoch) {
      SCOPED_TRACE("epoch " + std::to_string(epoch));
      const bool replace = gen.Uniform(0, 9) == 0;
      const bool with_deletes = !replace && gen.Uniform(0, 2) != 0;
      const Batch up = gen.Next(12);
      const Batch del = gen.Next(4, /*key_columns_only=*/true);
      auto rows = Rows("SELECT k1, k2, v, s, d FROM (" + up.values_sql + ") ORDER BY rn");
      auto deleted = Rows("SELECT k2, k1 FROM (" + del.values_sql + ")");  // any column order
      ASSERT_TRUE(rows && deleted);
      const std::string in_up = "EXISTS (SELECT 1 FROM (" + up.values_sql +
                                ") u WHERE u.k1 = t.k1 AND u.k2 = t.k2)";
      const std::string in_del = "EXISTS (SELECT 1 FROM (" + del.values_sql +
                                 ") x WHERE x.k1 = t.k1 AND x.k2 = t.k2)";
      const int64_t before = *oracle_->QueryInt64("SELECT count(*) FROM t");
      const int64_t held = *oracle_->QueryInt64("SELECT count(*) FROM t WHERE " + in_up);
      const int64_t gone = *oracle_->QueryInt64(
          "SELECT count(*) FROM t WHERE " +
          (replace ? "NOT " + in_up : with_deletes ? in_del + " AND NOT " + in_up : "false"));

      arrow::Result<MergeResult> r = replace ? table.Replace(epoch, rows, "run")
                                             : table.Apply(epoch, rows,
                                                           with_deletes ? deleted : nullptr, "run");
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      // The oracle: DuckDB's own upsert on a PRIMARY KEY table (the last row of a key wins).
      const std::string last = "SELECT k1, k2, v, s, d FROM (" + up.values_sql +
                               ") QUALIFY row_number() OVER (PARTITION BY k1, k2 ORDER BY rn "
                               "DESC) = 1";
      if (replace) THUND_ASSERT_OK(oracle_->Execute("DELETE FROM t"));
      if (with_deletes) THUND_ASSERT_OK(oracle_->Execute("DELETE FROM t WHERE " + in_del));
      THUND_ASSERT_OK(oracle_->Execute("INSERT OR REPLACE INTO t " + last));

      const int64_t after = *oracle_->QueryInt64("SELECT count(*) FROM t");
      EXPECT_FALSE(r->skipped_replay);
      EXPECT_EQ(r->updated, held);
      EXPECT_EQ(r->inserted, static_cast<int64_t>(up.keys.size()) - held);
      EXPECT_EQ(r->deleted, gone);
      EXPECT_EQ(r->rows, after);
      EXPECT_EQ(after, before + r->inserted - r->deleted);
      auto expected = Rows("SELECT * FROM t");
      auto actual = ReadTable(table);
      ASSERT_TRUE(expected && actual);
      EXPECT_TRUE(TablesEqualUnordered(*expected, *actual, /*check_types=*/false));

      // A replay of this epoch or an earlier one, with other rows, changes nothing.
      const int64_t replayed = epoch - gen.Uniform(0, static_cast<int>(epoch - 1));
      const int64_t version = table.version();
      auto again = gen.Uniform(0, 1) == 0
                       ? table.Apply(replayed, Rows(gen.Next(5).values_sql + " ORDER BY rn")
                                                   ->RemoveColumn(0)
                                                   .ValueOrDie(),
                                     deleted, "replay")
                       : table.Replace(replayed, nullptr, "replay");
      ASSERT_TRUE(again.ok()) << again.status().ToString();
      EXPECT_TRUE(again->skipped_replay);
      EXPECT_EQ(again->version, version);
      EXPECT_EQ(again->rows, after);
      EXPECT_EQ(table.version(), version);
      auto unchanged = ReadTable(table);
      ASSERT_TRUE(unchanged);
      EXPECT_TRUE(TablesEqualOrdered(*actual, *unchanged));
      if (gen.Uniform(0, 4) == 0) table = OpenTable();  // the epoch is read from disk
      EXPECT_EQ(table.applied_epoch(), epoch);
    }
  }
}

// ------------------------------------------------------- semantics ----

TEST_F(MergeTableTest, LastRowOfAKeyWinsAndDeletesComeFirst) {
  MergeTable table = OpenTable(nullptr, {"k"});
  auto r = table.Apply(1,
                       Rows("SELECT * FROM (VALUES (1, 'a'), (2, 'b'), (1, 'c'), (3, NULL)) "
                            "t(k, v)"),
                       nullptr, "r1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->inserted, 3);
  EXPECT_EQ(r->rows, 3);
  EXPECT_EQ(RowStrings(*ReadTable(table)),
            (std::vector<std::string>{"2 | b", "1 | c", "3 | ∅"}));
  // Key 2 is deleted and upserted (the row wins), 3 deleted, 7 (absent) deleted: no error.
  r = table.Apply(2, Rows("SELECT 2 AS k, 'B' AS v"),
                  Rows("SELECT * FROM (VALUES (2), (3), (7)) t(k)"), "r2");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->inserted, 0);
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(r->deleted, 1);
  EXPECT_EQ(RowStrings(*ReadTable(table)), (std::vector<std::string>{"1 | c", "2 | B"}));
  // Only deletes.
  r = table.Apply(3, nullptr, Rows("SELECT 1 AS k"), "r3");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->deleted, 1);
  EXPECT_EQ(RowStrings(*ReadTable(table)), (std::vector<std::string>{"2 | B"}));
}

TEST_F(MergeTableTest, ReplayOfAnAppliedEpochChangesNothing) {
  MergeTable table = OpenTable(nullptr, {"k"});
  ASSERT_TRUE(table.Apply(1, Rows("SELECT 1 AS k, 'one' AS v"), nullptr, "r1").ok());
  ASSERT_TRUE(table.Apply(2, Rows("SELECT 2 AS k, 'two' AS v"), nullptr, "r2").ok());
  const auto before = ReadTable(table);
  const std::vector<std::string> listing = [&] {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(Loc())) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }();
  // A crash after the sink's commit: the restarted stream replays epoch 2.
  MergeTable reopened = OpenTable(nullptr, {"k"});
  EXPECT_EQ(reopened.applied_epoch(), 2);
  auto r = reopened.Apply(2, Rows("SELECT 2 AS k, 'two' AS v"), nullptr, "r2-again");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->skipped_replay);
  EXPECT_EQ(r->version, 2);
  EXPECT_EQ(r->rows, 2);
  r = reopened.Replace(1, Rows("SELECT 9 AS k, 'nine' AS v"), "old");
  ASSERT_TRUE(r.ok() && r->skipped_replay);
  EXPECT_TRUE(TablesEqualOrdered(*before, *ReadTable(reopened)));
  std::vector<std::string> now;
  for (const auto& e : fs::directory_iterator(Loc())) now.push_back(e.path().filename());
  std::sort(now.begin(), now.end());
  EXPECT_EQ(now, listing);  // nothing written
  // The epoch is in the version's manifest; other versions' manifests have none.
  auto text = ReadWholeFile(*local_, Loc() + "/v-000002/_manifest.json");
  ASSERT_TRUE(text.ok());
  auto m = VersionManifest::Parse(*text, "m");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->epoch, 2);
  VersionManifest plain;
  EXPECT_EQ(plain.ToJson().find("epoch"), std::string::npos);
  EXPECT_FALSE(VersionManifest::Parse(plain.ToJson(), "plain")->epoch.has_value());
  // The layout users read.
  auto via_duckdb = Rows("SELECT * FROM read_parquet('" + Loc() + "/current/*.parquet')");
  ASSERT_TRUE(via_duckdb);
  EXPECT_TRUE(TablesEqualUnordered(*before, *via_duckdb, /*check_types=*/false));
}

TEST_F(MergeTableTest, LaterRowsAreConformedToTheFirstSchema) {
  MergeTable table = OpenTable(nullptr, {"id"});
  ASSERT_TRUE(table
                  .Apply(1, Rows("SELECT 1::BIGINT AS id, 'a' AS name, 1.5::DOUBLE AS score"),
                         nullptr, "r1")
                  .ok());
  const auto schema = ReadTable(table)->schema();
  // Other column order, other case, an int that casts, a missing nullable column.
  auto r = table.Apply(2, Rows("SELECT 'b' AS NAME, 2::INTEGER AS id"), nullptr, "r2");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  auto t = ReadTable(table);
  EXPECT_TRUE(t->schema()->Equals(*schema));
  EXPECT_EQ(RowStrings(*t), (std::vector<std::string>{"1 | a | 1.5", "2 | b | ∅"}));

  auto extra = table.Apply(3, Rows("SELECT 3::BIGINT AS id, 'c' AS name, 1 AS extra"), nullptr,
                           "r3");
  ASSERT_FALSE(extra.ok());
  EXPECT_NE(extra.status().message().find("column 'extra'"), std::string::npos)
      << extra.status().message();
  auto bad_type = table.Apply(3, Rows("SELECT 'x' AS id"), nullptr, "r3");
  ASSERT_FALSE(bad_type.ok());
  EXPECT_NE(bad_type.status().message().find("column 'id' is bigint in the table but string"),
            std::string::npos)
      << bad_type.status().message();
  // Nothing was committed by the failed calls; the epoch can still be applied.
  EXPECT_EQ(table.version(), 2);
  EXPECT_EQ(table.applied_epoch(), 2);
  EXPECT_TRUE(table.Apply(3, Rows("SELECT 3 AS id"), nullptr, "r3").ok());
}

TEST_F(MergeTableTest, NotNullColumnsMustBePresent) {
  auto schema = arrow::schema({arrow::field("id", arrow::int64(), false),
                               arrow::field("v", arrow::int64(), false)});
  auto first = arrow::Table::Make(schema, {Int64Column({1}), Int64Column({2})});
  MergeTable table = OpenTable(nullptr, {"id"});
  ASSERT_TRUE(table.Apply(1, first, nullptr, "r1").ok());
  EXPECT_TRUE(ReadTable(table)->schema()->Equals(*schema));
  auto missing = table.Apply(2, Rows("SELECT 5::BIGINT AS id"), nullptr, "r2");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no column 'v', which is NOT NULL"),
            std::string::npos)
      << missing.status().message();
  auto null_value = table.Apply(2, Rows("SELECT 5::BIGINT AS id, NULL::BIGINT AS v"), nullptr,
                                "r2");
  ASSERT_FALSE(null_value.ok());
  EXPECT_NE(null_value.status().message().find("column 'v' is NOT NULL"), std::string::npos)
      << null_value.status().message();
}

TEST_F(MergeTableTest, NullKeysAreErrorsNamingTheRow) {
  MergeTable table = OpenTable();
  auto r = table.Apply(1,
                       Rows("SELECT * FROM (VALUES (1, 'a', 1), (2, 'b', 2), (3, NULL, 3)) "
                            "t(k1, k2, v)"),
                       nullptr, "r1");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("row 3 of the new rows"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("key column 'k2'"), std::string::npos);
  EXPECT_EQ(table.version(), 0);
  ASSERT_TRUE(table.Apply(1, Rows("SELECT 1 AS k1, 'a' AS k2, 1 AS v"), nullptr, "r1").ok());
  auto d = table.Apply(2, nullptr, Rows("SELECT NULL::INTEGER AS k1, 'a' AS k2"), "r2");
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("row 1 of the deleted keys"), std::string::npos)
      << d.status().message();
  auto no_key = table.Apply(2, nullptr, Rows("SELECT 1 AS k1"), "r2");
  ASSERT_FALSE(no_key.ok());
  EXPECT_NE(no_key.status().message().find("no key column 'k2'"), std::string::npos)
      << no_key.status().message();
}

TEST_F(MergeTableTest, BadArgumentsAreRefused) {
  EXPECT_FALSE(MergeTable::Open(local_, Loc(), {}).ok());
  EXPECT_FALSE(MergeTable::Open(local_, Loc(), {"a", "a"}).ok());
  EXPECT_FALSE(MergeTable::Open(local_, Loc(), {"__THUND_ROW"}).ok());
  EXPECT_FALSE(MergeTable::Open(local_, dir_.File("_hidden"), {"a"}).ok());
  EXPECT_FALSE(MergeTable::Open(local_, "s3://bucket", {"a"}).ok());  // no table prefix
  EXPECT_FALSE(MergeTable::Open(local_, "gs://bucket/t", {"a"}).ok());
  MergeTable table = OpenTable(nullptr, {"id"});
  EXPECT_FALSE(table.Apply(0, Rows("SELECT 1 AS id"), nullptr, "r").ok());
  auto no_key = table.Apply(1, Rows("SELECT 1 AS other"), nullptr, "r");
  ASSERT_FALSE(no_key.ok());
  EXPECT_NE(no_key.status().message().find("key column 'id' is not in the new rows"),
            std::string::npos)
      << no_key.status().message();
  // Nothing to write and no schema yet: nothing happens.
  auto empty = table.Apply(1, nullptr, nullptr, "r");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->version, 0);
  auto read = table.Read();
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, nullptr);
  // A file: location works too.
  auto uri = MergeTable::Open(local_, "file://" + Loc(), {"id"});
  ASSERT_TRUE(uri.ok()) << uri.status().ToString();
  EXPECT_EQ(uri->path(), Loc());
}

TEST_F(MergeTableTest, KeysOfManyTypesAndNonKeyValuesKeepTheirExactTypes) {
  // Nanosecond timestamps (DuckDB would truncate them), decimals, lists and
  // structs as keys; nested non-key values with NULLs inside.
  const std::string first =
      "SELECT * FROM (VALUES "
      "(1, 'a'::VARCHAR, [1, 2], {'x': 1, 'y': NULL}, 1.50::DECIMAL(10,2), [NULL, 'p']), "
      "(2, 'a', [1], {'x': 1, 'y': 'q'}, 2.00, NULL), "
      "(3, NULL, NULL, NULL, NULL, []))"
      " t(n, k, l, st, dec, tags)";
  auto base = Rows(first);
  ASSERT_TRUE(base);
  // Add two nanosecond timestamps one nanosecond apart as the first key.
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::NANO),
                             arrow::default_memory_pool());
  const std::vector<int64_t> nanos = {1'000'000'000'000'000'001, 1'000'000'000'000'000'002,
                                      1'000'000'000'000'000'001};
  ASSERT_TRUE(ts.AppendValues(nanos).ok());
  auto ts_array = ts.Finish().ValueOrDie();
  auto rows = base->AddColumn(0, arrow::field("ts", ts_array->type()),
                              std::make_shared<arrow::ChunkedArray>(ts_array))
                  .ValueOrDie();
  MergeTable table = OpenTable(nullptr, {"ts", "l", "st"});
  // Row 3 has NULL keys l and st.
  auto refused = table.Apply(1, rows, nullptr, "r1");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("row 3"), std::string::npos);
  rows = rows->Slice(0, 2);
  auto r = table.Apply(1, rows, nullptr, "r1");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->inserted, 2);
  // The same keys again (equal struct with a NULL field, equal list): updates.
  r = table.Apply(2, rows->Slice(0, 1), nullptr, "r2");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->updated, 1);
  EXPECT_EQ(r->inserted, 0);
  auto t = ReadTable(table);
  EXPECT_TRUE(t->schema()->Equals(*rows->schema())) << t->schema()->ToString();
  EXPECT_EQ(t->num_rows(), 2);
  // (Parquet names list items "element"; the types are equal, the printed forms differ.)
  rows = engine::testing::CastTo(rows, t->schema());
  EXPECT_TRUE(TablesEqualUnordered(*rows, *t));
  // Deleting by the nanosecond key removes exactly that row.
  auto del = rows->SelectColumns({0, 3, 4}).ValueOrDie()->Slice(1, 1);
  r = table.Apply(3, nullptr, del, "r3");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->deleted, 1);
  EXPECT_TRUE(TablesEqualUnordered(*rows->Slice(0, 1), *ReadTable(table)));
}

// ---------------------------------------------------- fault injection ----

TEST_F(MergeTableTest, AFaultAtEveryWriteLeavesThePreviousVersionOrTheNewOne) {
  auto base = Rows(
      "SELECT i % 7 AS k1, 'g' || (i % 3) AS k2, i AS v, CASE WHEN i % 4 = 0 THEN NULL ELSE "
      "'s' || i END AS s FROM range(40) r(i)");
  auto more = Rows("SELECT 50 + i AS k1, 'g0' AS k2, i AS v, NULL AS s FROM range(5) r(i)");
  auto update = Rows(
      "SELECT i % 9 AS k1, 'g' || (i % 4) AS k2, 100 + i AS v, NULL::VARCHAR AS s "
      "FROM range(25) r(i) ORDER BY i");
  auto deletes = Rows("SELECT 0 AS k1, 'g0' AS k2 UNION ALL SELECT 5, 'g2'");
  ASSERT_TRUE(base && more && update && deletes);
  // Two versions before the faulty Apply, so that its commit also deletes
  // the oldest one (a write after the commit point).
  auto setup = [&] {
    fs::remove_all(Loc());
    MergeTable t = OpenTable();
    ASSERT_TRUE(t.Apply(1, base, nullptr, "r1").ok());
    ASSERT_TRUE(t.Apply(2, more, nullptr, "r2").ok());
  };
  // The expected result, and how many writes an Apply makes.
  int64_t writes = 0;
  std::shared_ptr<arrow::Table> want, old;
  {
    setup();
    old = ReadTable(OpenTable());
    auto counting = std::make_shared<FaultInjectingFileSystem>(local_);
    MergeTable c = OpenTable(counting);
    ASSERT_TRUE(c.Apply(3, update, deletes, "r3").ok());
    writes = counting->operations();
    want = ReadTable(c);
  }
  ASSERT_GT(writes, 4);
  int failed = 0, committed_despite_fault = 0;
  for (int64_t k = 1; k <= writes + 1; ++k) {
    SCOPED_TRACE("fault at write " + std::to_string(k) + " of " + std::to_string(writes));
    setup();
    auto faulty = std::make_shared<FaultInjectingFileSystem>(local_);
    faulty->FailAfter(k);
    auto r = OpenTable(faulty).Apply(3, update, deletes, "r3");
    // Afterwards (a fresh process): the previous version or the new one, whole.
    MergeTable after = OpenTable();
    auto now = ReadTable(after);
    ASSERT_TRUE(now);
    auto via_duckdb = Rows("SELECT * FROM read_parquet('" + Loc() + "/current/*.parquet')");
    ASSERT_TRUE(via_duckdb);
    if (!r.ok()) {
      ++failed;
      EXPECT_NE(r.status().message().find("injected fault"), std::string::npos)
          << r.status().message();
      EXPECT_EQ(after.applied_epoch(), 2);
      EXPECT_TRUE(TablesEqualOrdered(*old, *now));
      EXPECT_TRUE(TablesEqualUnordered(*old, *via_duckdb, /*check_types=*/false));
    } else {
      // No fault, or one after the commit point (garbage collection).
      if (faulty->tripped()) {
        ++committed_despite_fault;
        EXPECT_FALSE(r->notes.empty());
      }
      EXPECT_EQ(after.applied_epoch(), 3);
      EXPECT_TRUE(TablesEqualOrdered(*want, *now));
      EXPECT_TRUE(TablesEqualUnordered(*want, *via_duckdb, /*check_types=*/false));
    }
    // Retrying the same epoch gives the right table, whatever happened.
    auto retry = after.Apply(3, update, deletes, "r3-retry");
    ASSERT_TRUE(retry.ok()) << retry.status().ToString();
    EXPECT_EQ(retry->skipped_replay, r.ok());
    EXPECT_TRUE(TablesEqualOrdered(*want, *ReadTable(after)));
    EXPECT_TRUE(TablesEqualOrdered(*want, *ReadTable(OpenTable())));
  }
  RecordProperty("writes", static_cast<int>(writes));
  RecordProperty("failed_applies", failed);
  EXPECT_GT(failed, 3);                    // faults before the commit point
  EXPECT_GE(committed_despite_fault, 1);   // and after it
}

}  // namespace
}  // namespace thund::engine::batch
