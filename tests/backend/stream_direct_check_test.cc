// The direct check (NativeRunOptions::direct_check, `thund run
// --no-direct-check`) against its plain twin: rows of datasets without
// expectations taken as Arrow must store exactly what the round trip through a
// DuckDB query stores, for every Arrow type a source can hand over, and both
// must hold the input's rows (read back by an independent DuckDB).
#include <arrow/api.h>
#include <arrow/compute/cast.h>
#include <arrow/io/file.h>
#include <gtest/gtest.h>
#include <parquet/arrow/reader.h>

#include <filesystem>
#include <random>

#include "backend/batch_fixture.h"
#include "engine/duckdb/sql_quote.h"
#include "engine/io/parquet_io.h"

namespace thund::native::testing {
namespace {

using engine::QuoteString;
using engine::testing::TablesEqualUnordered;

// A batch of `n` random rows: with `stable_types`, only types DuckDB hands
// back unchanged (the fast path takes them); else also ones it changes
// (dictionary, large strings, nanosecond timestamps), which take the twin.
std::shared_ptr<arrow::RecordBatch> RandomBatch(std::mt19937& rng, int n, bool stable_types,
                                                int64_t first_id) {
  auto coin = [&](int pct) { return static_cast<int>(rng() % 100) < pct; };
  arrow::Int64Builder id;
  arrow::Int8Builder i8;
  arrow::UInt32Builder u32;
  arrow::DoubleBuilder f64;
  arrow::StringBuilder s;
  arrow::BinaryBuilder bin;
  arrow::BooleanBuilder b;
  arrow::Date32Builder day;
  arrow::TimestampBuilder ts(arrow::timestamp(arrow::TimeUnit::MICRO),
                             arrow::default_memory_pool());
  arrow::Decimal128Builder dec(arrow::decimal128(18, 4));
  auto list_values = std::make_shared<arrow::Int32Builder>();
  arrow::ListBuilder list(arrow::default_memory_pool(), list_values);
  const char* words[] = {"", "a", "Grüße", "日本語", "emoji \xF0\x9F\x98\x80", "x,y\n\"z\""};
  const double floats[] = {0.0, -0.0, 1.5, -2.25, 1e300, std::numeric_limits<double>::infinity(),
                           std::nan("")};
  for (int r = 0; r < n; ++r) {
    EXPECT_TRUE(id.Append(first_id + r).ok());  // never NULL: the row's identity
    EXPECT_TRUE((coin(15) ? i8.AppendNull() : i8.Append(static_cast<int8_t>(rng()))).ok());
    EXPECT_TRUE((coin(15) ? u32.AppendNull() : u32.Append(static_cast<uint32_t>(rng()))).ok());
    EXPECT_TRUE((coin(15) ? f64.AppendNull() : f64.Append(floats[rng() % 7])).ok());
    EXPECT_TRUE((coin(15) ? s.AppendNull() : s.Append(words[rng() % 6])).ok());
    const std::string raw(rng() % 5, static_cast<char>(rng() % 256));
    EXPECT_TRUE((coin(15) ? bin.AppendNull() : bin.Append(raw)).ok());
    EXPECT_TRUE((coin(15) ? b.AppendNull() : b.Append(rng() % 2 == 0)).ok());
    EXPECT_TRUE((coin(15) ? day.AppendNull() : day.Append(static_cast<int32_t>(rng() % 40000))).ok());
    EXPECT_TRUE((coin(15) ? ts.AppendNull()
                          : ts.Append(1'700'000'000'000'000 + static_cast<int64_t>(rng())))
                    .ok());
    EXPECT_TRUE((coin(15) ? dec.AppendNull()
                          : dec.Append(arrow::Decimal128(static_cast<int64_t>(rng()) - (1 << 30))))
                    .ok());
    if (coin(15)) {
      EXPECT_TRUE(list.AppendNull().ok());
    } else {
      EXPECT_TRUE(list.Append().ok());
      for (int k = static_cast<int>(rng() % 3); k > 0; --k) {
        EXPECT_TRUE((coin(20) ? list_values->AppendNull()
                              : list_values->Append(static_cast<int32_t>(rng() % 100)))
                        .ok());
      }
    }
  }
  arrow::FieldVector fields = {
      arrow::field("id", arrow::int64(), /*nullable=*/false),
      arrow::field("i8", arrow::int8()),
      arrow::field("u32", arrow::uint32()),
      arrow::field("f64", arrow::float64()),
      arrow::field("s", arrow::utf8()),
      arrow::field("bin", arrow::binary()),
      arrow::field("b", arrow::boolean()),
      arrow::field("day", arrow::date32()),
      arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MICRO)),
      arrow::field("dec", arrow::decimal128(18, 4)),
      arrow::field("l", arrow::list(arrow::int32()))};
  arrow::ArrayVector columns(fields.size());
  EXPECT_TRUE(id.Finish(&columns[0]).ok());
  EXPECT_TRUE(i8.Finish(&columns[1]).ok());
  EXPECT_TRUE(u32.Finish(&columns[2]).ok());
  EXPECT_TRUE(f64.Finish(&columns[3]).ok());
  EXPECT_TRUE(s.Finish(&columns[4]).ok());
  EXPECT_TRUE(bin.Finish(&columns[5]).ok());
  EXPECT_TRUE(b.Finish(&columns[6]).ok());
  EXPECT_TRUE(day.Finish(&columns[7]).ok());
  EXPECT_TRUE(ts.Finish(&columns[8]).ok());
  EXPECT_TRUE(dec.Finish(&columns[9]).ok());
  EXPECT_TRUE(list.Finish(&columns[10]).ok());
  if (!stable_types) {
    // The same strings dictionary-encoded and as large strings, and the
    // timestamps in nanoseconds: DuckDB hands each back in another type.
    fields.push_back(arrow::field("sd", arrow::dictionary(arrow::int32(), arrow::utf8())));
    columns.push_back(
        arrow::compute::Cast(columns[4], arrow::dictionary(arrow::int32(), arrow::utf8()))
            .ValueOrDie()
            .make_array());
    fields.push_back(arrow::field("sl", arrow::large_utf8()));
    columns.push_back(arrow::compute::Cast(*columns[4], arrow::large_utf8()).ValueOrDie());
    fields.push_back(arrow::field("tsn", arrow::timestamp(arrow::TimeUnit::NANO)));
    columns.push_back(
        arrow::compute::Cast(*columns[8], arrow::timestamp(arrow::TimeUnit::NANO)).ValueOrDie());
  }
  return arrow::RecordBatch::Make(arrow::schema(fields), n, columns);
}

class StreamDirectCheckTest : public BatchFixture {
 protected:
  // The Arrow schema of the Parquet files a dataset holds (the types as
  // stored, which a DuckDB read would normalise).
  std::shared_ptr<arrow::Schema> StoredSchema(const std::string& store,
                                              const std::string& dataset) {
    for (const auto& e : std::filesystem::directory_iterator(store + "/" + dataset + "/current")) {
      if (e.path().extension() != ".parquet") continue;
      auto file = arrow::io::ReadableFile::Open(e.path().string()).ValueOrDie();
      auto reader = parquet::arrow::OpenFile(file, arrow::default_memory_pool()).ValueOrDie();
      std::shared_ptr<arrow::Schema> schema;
      EXPECT_TRUE(reader->GetSchema(&schema).ok());
      return schema->RemoveMetadata();
    }
    return nullptr;
  }
  std::shared_ptr<arrow::Table> Stored(const std::string& store, const std::string& dataset) {
    return Oracle("SELECT * FROM read_parquet(" +
                  QuoteString(store + "/" + dataset + "/current/*.parquet") + ")");
  }
};

constexpr const char* kPipeline = R"sql(
CREATE STREAMING TABLE t AS SELECT * FROM STREAM read_memory('feed');
CREATE STREAMING TABLE narrow WITH (mode = 'incremental') AS
SELECT id, s, ts, l, dec * 2 AS dec2 FROM STREAM(t) WHERE id % 3 <> 0;
CREATE STREAMING TABLE whole WITH (mode = 'recompute') AS SELECT * FROM STREAM(t);
CREATE TEMPORARY VIEW v AS SELECT * FROM STREAM read_memory('feed');
CREATE STREAMING TABLE from_view WITH (mode = 'incremental') AS SELECT * FROM STREAM(v);
)sql";

TEST_F(StreamDirectCheckTest, RowsTakenAsArrowEqualTheirRoundTripThroughDuckDb) {
  for (const bool stable_types : {true, false}) {
    for (uint32_t seed : {1u, 2u, 3u}) {
      SCOPED_TRACE("seed " + std::to_string(seed) + (stable_types ? ", stable" : ", changing") +
                   " types");
      std::mt19937 rng(seed);
      std::vector<std::shared_ptr<arrow::RecordBatch>> feed;
      int64_t next = 0;
      for (int i = 0; i < 4; ++i) {
        const int n = static_cast<int>(rng() % 300);  // an empty trigger too, now and then
        feed.push_back(RandomBatch(rng, n, stable_types, next));
        next += n;
      }
      std::map<bool, std::string> stores;
      for (const bool direct : {true, false}) {
        const std::string store = Path(std::string("store_") + (direct ? "direct" : "plain") +
                                       std::to_string(seed) + (stable_types ? "s" : "c"));
        RunOptions o;
        o.storage_root = store;
        o.memory_streams["feed"] = feed;
        o.native.direct_check = direct;
        RunSummary sum = Run(ParsePipeline(kPipeline), o);
        ASSERT_EQ(sum.status, RunPhase::kCompleted) << sum.ToString();
        stores[direct] = store;
      }
      // The input, as an independent DuckDB reads it back from Parquet.
      const std::string input = Path("input" + std::to_string(seed) + ".parquet");
      ASSERT_TRUE(engine::WriteParquetFile(*arrow::Table::FromRecordBatches(feed).ValueOrDie(),
                                           input)
                      .ok());
      const std::string in = "read_parquet(" + QuoteString(input) + ")";
      for (const char* dataset : {"t", "narrow", "whole", "from_view"}) {
        SCOPED_TRACE(dataset);
        auto direct = StoredSchema(stores[true], dataset);
        auto plain = StoredSchema(stores[false], dataset);
        ASSERT_TRUE(direct && plain);
        EXPECT_TRUE(direct->Equals(*plain)) << direct->ToString() << "\nvs\n" << plain->ToString();
        auto a = Stored(stores[true], dataset), b = Stored(stores[false], dataset);
        ASSERT_TRUE(a && b);
        EXPECT_TRUE(TablesEqualUnordered(*b, *a, /*check_types=*/true));
        // (Recompute finds its new rows by a set difference, in which -0.0
        // is 0.0: `whole` holds 0.0 where the input has -0.0, either way.)
        const std::string name = dataset;
        const std::string expected =
            name == "narrow" ? "SELECT id, s, ts, l, dec * 2 AS dec2 FROM " + in +
                                   " WHERE id % 3 <> 0"
            : name == "whole" ? "SELECT * REPLACE (f64 + 0.0 AS f64) FROM " + in
                              : "SELECT * FROM " + in;
        EXPECT_TRUE(TablesEqualUnordered(*Oracle(expected), *a, /*check_types=*/false));
      }
    }
  }
}

}  // namespace
}  // namespace thund::native::testing
