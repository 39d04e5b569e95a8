// Column pruning for stream views (NativeRunOptions::prune_columns, `thund run
// --no-prune-columns`) against its plain twin: when the readers of a stream
// view over a Parquet file drop use only some of its columns, the drop reads
// only those; every reader must store the same rows either way, the rows an
// independent DuckDB computes from the files, and a file whose unread columns
// do not fit the stream must still be refused, with the same error.
#include <arrow/api.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "backend/batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/io/parquet_io.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using engine::testing::TablesEqualUnordered;

// One drop file's rows: ids from `first_id`, event times rising by 10 ms a
// row from `first_id` * 10 ms (each file later than the one before), a wide
// string column no reader uses, and with `nested` a list column (a file with
// nested columns is read whole: its leaf columns are not one per field).
std::shared_ptr<arrow::Table> DropRows(std::mt19937& rng, int n, int64_t first_id, bool nested,
                                       bool note_as_int = false) {
  arrow::Int64Builder id;
  arrow::Int32Builder k;
  arrow::DoubleBuilder price;
  arrow::StringBuilder note;
  arrow::Int64Builder note_int;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO),
                             arrow::default_memory_pool());
  auto tag_values = std::make_shared<arrow::Int32Builder>();
  arrow::ListBuilder tags(arrow::default_memory_pool(), tag_values);
  for (int r = 0; r < n; ++r) {
    const int64_t i = first_id + r;
    EXPECT_TRUE(id.Append(i).ok());
    EXPECT_TRUE(
        (rng() % 10 == 0 ? k.AppendNull() : k.Append(static_cast<int32_t>(rng() % 5))).ok());
    EXPECT_TRUE((rng() % 10 == 0 ? price.AppendNull()
                                 : price.Append(static_cast<double>(rng() % 10000) / 4))
                    .ok());
    const std::string text(20 + rng() % 40, static_cast<char>('a' + rng() % 26));
    EXPECT_TRUE(note.Append(text).ok());
    EXPECT_TRUE(note_int.Append(static_cast<int64_t>(rng())).ok());
    EXPECT_TRUE(ts.Append(1'700'000'000'000'000 + i * 10'000).ok());
    EXPECT_TRUE(tags.Append().ok());
    for (int t = static_cast<int>(rng() % 3); t > 0; --t) {
      EXPECT_TRUE(tag_values->Append(static_cast<int32_t>(rng() % 9)).ok());
    }
  }
  arrow::FieldVector fields = {arrow::field("id", arrow::int64()),
                               arrow::field("k", arrow::int32()),
                               arrow::field("price", arrow::float64()),
                               arrow::field("note", note_as_int ? arrow::int64() : arrow::utf8()),
                               arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO))};
  arrow::ArrayVector columns(fields.size());
  EXPECT_TRUE(id.Finish(&columns[0]).ok());
  EXPECT_TRUE(k.Finish(&columns[1]).ok());
  EXPECT_TRUE(price.Finish(&columns[2]).ok());
  EXPECT_TRUE((note_as_int ? note_int.Finish(&columns[3]) : note.Finish(&columns[3])).ok());
  EXPECT_TRUE(ts.Finish(&columns[4]).ok());
  if (nested) {
    fields.push_back(arrow::field("tags", arrow::list(arrow::int32())));
    columns.emplace_back();
    EXPECT_TRUE(tags.Finish(&columns.back()).ok());
  }
  return arrow::Table::Make(arrow::schema(fields), columns, n);
}

// Readers that use some of the view's columns each (a filter, windowed and
// keyed aggregations with a watermark, a join of the view with itself),
// one that uses them all through `*`, and one that only counts rows.
// {drop} is the directory.
constexpr const char* kPipeline = R"sql(
CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_files('{drop}', format => 'parquet',
  max_files_per_trigger => '1');

CREATE STREAMING TABLE cheap AS SELECT id, price FROM STREAM(v) WHERE price < 1000;

CREATE STREAMING TABLE per_window AS
SELECT k, window.start AS ws, count(*) AS n, sum(price) AS total
FROM STREAM(v) WATERMARK ts DELAY OF INTERVAL 1 SECOND GROUP BY window(ts, '2 seconds'), k;

CREATE STREAMING TABLE per_key WITH (output_mode = 'update') AS
SELECT k, count(*) AS n, max(id) AS last FROM STREAM(v) GROUP BY k;

CREATE STREAMING TABLE counted AS SELECT 1 AS one FROM STREAM(v);
)sql";

constexpr const char* kStarReader = R"sql(
CREATE STREAMING TABLE everything AS SELECT * FROM STREAM(v) WHERE k = 1;
)sql";

class StreamPruneColumnsTest : public BatchFixture {
 protected:
  std::string Instantiate(const std::string& drop, bool star) const {
    std::string sql = std::string(kPipeline) + (star ? kStarReader : "");
    const std::string key = "{drop}";
    sql.replace(sql.find(key), key.size(), drop);
    return sql;
  }
  std::shared_ptr<arrow::Table> Stored(const std::string& store, const std::string& dataset) {
    return Oracle("SELECT * FROM read_parquet(" +
                  QuoteString(store + "/" + dataset + "/current/*.parquet") + ")");
  }
  void Write(const std::string& drop, int index, const std::shared_ptr<arrow::Table>& rows) {
    std::filesystem::create_directories(drop);
    char name[32];
    std::snprintf(name, sizeof name, "/part-%03d.parquet", index);
    ASSERT_TRUE(engine::WriteParquetFile(*rows, drop + name).ok());
  }
};

TEST_F(StreamPruneColumnsTest, ReadersStoreTheSameRowsWithAndWithoutPruning) {
  for (const bool nested : {false, true}) {
    for (const bool star : {false, true}) {
      for (uint32_t seed : {1u, 2u}) {
        SCOPED_TRACE("seed " + std::to_string(seed) + (nested ? ", nested" : ", flat") +
                     (star ? ", with a * reader" : ""));
        const std::string tag = std::to_string(seed) + (nested ? "n" : "f") + (star ? "s" : "");
        const std::string drop = Path("drop" + tag);
        std::mt19937 rng(seed);
        int64_t next = 0;
        for (int f = 0; f < 5; ++f) {
          const int n = 1 + static_cast<int>(rng() % 400);
          Write(drop, f, DropRows(rng, n, next, nested));
          next += n;
        }
        std::map<bool, std::string> stores;
        for (const bool prune : {true, false}) {
          const std::string store = Path("store" + tag + (prune ? "p" : "w"));
          RunOptions o;
          o.storage_root = store;
          o.native.prune_columns = prune;
          RunSummary sum = Run(ParsePipeline(Instantiate(drop, star)), o);
          ASSERT_EQ(sum.status, RunPhase::kCompleted) << sum.ToString();
          stores[prune] = store;
        }
        std::vector<std::string> datasets = {"cheap", "per_window", "per_key", "counted"};
        if (star) datasets.push_back("everything");
        for (const auto& dataset : datasets) {
          SCOPED_TRACE(dataset);
          auto pruned = Stored(stores[true], dataset), whole = Stored(stores[false], dataset);
          ASSERT_TRUE(pruned && whole);
          EXPECT_TRUE(TablesEqualUnordered(*whole, *pruned, /*check_types=*/true));
        }
        // The independent oracle: DuckDB over the files.
        const std::string in = "read_parquet(" + QuoteString(drop + "/*.parquet") + ")";
        EXPECT_TRUE(TablesEqualUnordered(
            *Oracle("SELECT id, price FROM " + in + " WHERE price < 1000"),
            *Stored(stores[true], "cheap"), /*check_types=*/false));
        EXPECT_TRUE(TablesEqualUnordered(
            *Oracle("SELECT k, count(*) AS n, max(id) AS last FROM " + in + " GROUP BY k"),
            *Stored(stores[true], "per_key"), /*check_types=*/false));
        EXPECT_TRUE(TablesEqualUnordered(*Oracle("SELECT 1 AS one FROM " + in),
                                         *Stored(stores[true], "counted"),
                                         /*check_types=*/false));
        if (star) {
          EXPECT_TRUE(TablesEqualUnordered(*Oracle("SELECT * FROM " + in + " WHERE k = 1"),
                                           *Stored(stores[true], "everything"),
                                           /*check_types=*/false));
        }
      }
    }
  }
}

// A later file whose unread column has another type, or lacks it, is refused
// as it is without pruning, naming the file; the committed rows stay.
TEST_F(StreamPruneColumnsTest, AFileWhoseUnreadColumnsDoNotFitIsStillRefused) {
  for (const char* bad : {"retyped", "missing"}) {
    SCOPED_TRACE(bad);
    std::map<bool, std::string> errors;
    for (const bool prune : {true, false}) {
      const std::string tag = std::string(bad) + (prune ? "p" : "w");
      const std::string drop = Path("drop" + tag), store = Path("store" + tag);
      std::mt19937 rng(7);
      Write(drop, 0, DropRows(rng, 50, 0, false));
      RunOptions o;
      o.storage_root = store;
      o.native.prune_columns = prune;
      RunSummary first = Run(ParsePipeline(Instantiate(drop, false)), o);
      ASSERT_EQ(first.status, RunPhase::kCompleted) << first.ToString();
      auto later = std::string(bad) == "retyped"
                       ? DropRows(rng, 30, 50, false, /*note_as_int=*/true)
                       : DropRows(rng, 30, 50, false)->RemoveColumn(3).ValueOrDie();
      Write(drop, 1, later);
      RunSummary second = Run(ParsePipeline(Instantiate(drop, false)), o);
      ASSERT_EQ(second.status, RunPhase::kFailed) << second.ToString();
      const std::string text = second.ToString();
      EXPECT_NE(text.find("part-001.parquet"), std::string::npos) << text;
      EXPECT_NE(text.find("note"), std::string::npos) << text;
      std::string error = second.error;  // with the drop directory's name, which differs
      for (size_t at; (at = error.find(drop)) != std::string::npos;) {
        error.replace(at, drop.size(), "DROP");
      }
      errors[prune] = error;
      // What the first run committed is still there.
      auto expected = Oracle("SELECT id, price FROM read_parquet(" +
                             QuoteString(drop + "/part-000.parquet") + ") WHERE price < 1000");
      EXPECT_TRUE(TablesEqualUnordered(*expected, *Stored(store, "cheap"), /*check_types=*/false));
    }
    EXPECT_EQ(errors[true], errors[false]);
  }
}

}  // namespace
}  // namespace thund::native::testing
