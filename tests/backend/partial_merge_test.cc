// The incremental aggregate's C++ fast paths (backend/native/partial_merge.h)
// against their plain twins written as DuckDB SQL here: the merge of partials
// (UNION ALL, GROUP BY), the expansion of panes (a cross join with a range),
// and the closed-window flag (a comparison of the window end).
#include "backend/native/partial_merge.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/duckdb/duckdb_session.h"
#include "engine/table_compare.h"

namespace thund::native {
namespace {

using engine::testing::TablesEqualUnordered;

constexpr int64_t kSec = 1000000;
const auto kTs = arrow::timestamp(arrow::TimeUnit::MICRO, "UTC");

std::shared_ptr<arrow::DataType> WindowType() {
  return arrow::struct_({arrow::field("start", kTs), arrow::field("end", kTs)});
}

// One column of random values drawn from a few distinct ones (so groups
// repeat), NULL with probability 1/8.
class Columns {
 public:
  explicit Columns(uint32_t seed) : rng_(seed) {}
  int Pick(int n) { return static_cast<int>(rng_() % n); }
  bool Null() { return Pick(8) == 0; }

  std::shared_ptr<arrow::Array> Make(const std::shared_ptr<arrow::DataType>& type, int64_t n,
                                     int distinct) {
    switch (type->id()) {
      case arrow::Type::INT64: {
        arrow::Int64Builder b;
        for (int64_t i = 0; i < n; ++i) {
          Null() ? (void)b.AppendNull() : (void)b.Append(Pick(distinct) - distinct / 3);
        }
        return b.Finish().ValueOrDie();
      }
      case arrow::Type::DOUBLE: {
        arrow::DoubleBuilder b;
        for (int64_t i = 0; i < n; ++i) {
          if (Null()) {
            (void)b.AppendNull();
          } else if (Pick(20) == 0) {
            (void)b.Append(std::nan(""));
          } else {
            (void)b.Append(Pick(distinct) - 2.0);  // whole numbers: sums are exact
          }
        }
        return b.Finish().ValueOrDie();
      }
      case arrow::Type::BOOL: {
        arrow::BooleanBuilder b;
        for (int64_t i = 0; i < n; ++i) {
          Null() ? (void)b.AppendNull() : (void)b.Append(Pick(2) == 1);
        }
        return b.Finish().ValueOrDie();
      }
      case arrow::Type::STRING: {
        arrow::StringBuilder b;
        const char* words[] = {"", "a", "ab", "b", "\xc3\xa9t\xc3\xa9", "zz", "A"};
        for (int64_t i = 0; i < n; ++i) {
          Null() ? (void)b.AppendNull() : (void)b.Append(words[Pick(std::min(distinct, 7))]);
        }
        return b.Finish().ValueOrDie();
      }
      case arrow::Type::DATE32: {
        arrow::Date32Builder b;
        for (int64_t i = 0; i < n; ++i) {
          Null() ? (void)b.AppendNull() : (void)b.Append(19000 + Pick(distinct));
        }
        return b.Finish().ValueOrDie();
      }
      case arrow::Type::TIMESTAMP: {
        arrow::TimestampBuilder b(type, arrow::default_memory_pool());
        for (int64_t i = 0; i < n; ++i) {
          Null() ? (void)b.AppendNull() : (void)b.Append(Pick(distinct) * 2 * kSec);
        }
        return b.Finish().ValueOrDie();
      }
      case arrow::Type::DECIMAL128: {
        arrow::Decimal128Builder b(type);
        for (int64_t i = 0; i < n; ++i) {
          if (Null()) {
            (void)b.AppendNull();
          } else {
            (void)b.Append(arrow::Decimal128(Pick(distinct) * 12345 - 20000));
          }
        }
        return b.Finish().ValueOrDie();
      }
      case arrow::Type::STRUCT: {
        // A window: start on a 2 s grid, end = start + 4 s; some NULL windows.
        auto start = std::static_pointer_cast<arrow::TimestampArray>(Make(kTs, n, distinct));
        arrow::TimestampBuilder s(kTs, arrow::default_memory_pool()),
            e(kTs, arrow::default_memory_pool());
        std::vector<uint8_t> valid(n);
        for (int64_t i = 0; i < n; ++i) {
          valid[i] = start->IsValid(i);
          if (start->IsValid(i)) {
            (void)s.Append(start->Value(i));
            (void)e.Append(start->Value(i) + 4 * kSec);
          } else {
            (void)s.AppendNull();
            (void)e.AppendNull();
          }
        }
        arrow::BooleanBuilder v;
        for (uint8_t x : valid) (void)v.Append(x);
        auto bitmap = std::static_pointer_cast<arrow::BooleanArray>(v.Finish().ValueOrDie());
        return arrow::StructArray::Make({s.Finish().ValueOrDie(), e.Finish().ValueOrDie()},
                                        type->fields(), bitmap->values())
            .ValueOrDie();
      }
      default:
        ADD_FAILURE() << "no generator for " << type->ToString();
        return nullptr;
    }
  }

 private:
  std::mt19937 rng_;
};

struct Partial {
  std::string sql;   // the merge as the SQL twin writes it
  std::string merge;
  std::shared_ptr<arrow::DataType> type;
};

class PartialMergeTest : public ::testing::Test {
 protected:
  void SetUp() override { session_ = engine::DuckDbSession::Open().ValueOrDie(); }

  std::shared_ptr<arrow::Table> Sql(const std::string& sql) {
    auto t = session_->Query(sql);
    EXPECT_TRUE(t.ok()) << t.status().ToString() << "\n" << sql;
    return t.ok() ? *t : nullptr;
  }

  std::unique_ptr<engine::DuckDbSession> session_;
};

TEST_F(PartialMergeTest, MergeEqualsTheSqlMergeForRandomKeysValuesAndNulls) {
  const std::vector<std::shared_ptr<arrow::DataType>> key_types = {
      arrow::int64(), arrow::utf8(), kTs, WindowType(), arrow::boolean(), arrow::date32(),
      arrow::decimal128(18, 2)};
  const std::vector<Partial> partials = {
      {"sum", "sum", arrow::int64()},          {"sum", "sum", arrow::decimal128(38, 0)},
      {"sum", "sum", arrow::float64()},        {"min", "min", arrow::int64()},
      {"max", "max", arrow::int64()},          {"min", "min", arrow::utf8()},
      {"max", "max", arrow::utf8()},           {"min", "min", kTs},
      {"max", "max", kTs},                     {"min", "min", arrow::float64()},
      {"max", "max", arrow::float64()},        {"bool_and", "bool_and", arrow::boolean()},
      {"bool_or", "bool_or", arrow::boolean()}, {"max", "max", arrow::decimal128(18, 2)},
      {"min", "min", arrow::date32()},
  };
  Columns gen(7);
  for (int c = 0; c < 150; ++c) {
    const int n_keys = gen.Pick(3);  // 0 = one global group
    const int n_vals = 1 + gen.Pick(4);
    const int distinct = 2 + gen.Pick(12);
    arrow::FieldVector fields;
    std::vector<std::string> merge;
    std::string keys, folds;
    for (int i = 0; i < n_keys; ++i) {
      const std::string name = "__g" + std::to_string(i);
      fields.push_back(arrow::field(name, key_types[gen.Pick(key_types.size())]));
      keys += (i ? ", " : "") + name;
    }
    for (int j = 0; j < n_vals; ++j) {
      const Partial& p = partials[gen.Pick(partials.size())];
      const std::string name = "__p" + std::to_string(j);
      fields.push_back(arrow::field(name, p.type));
      merge.push_back(p.merge);
      folds += p.sql + "(" + name + ") AS " + name + ", ";
    }
    auto schema = arrow::schema(fields);
    auto table = [&](int64_t rows) {
      std::vector<std::shared_ptr<arrow::Array>> cols;
      for (const auto& f : fields) cols.push_back(gen.Make(f->type(), rows, distinct));
      return arrow::Table::Make(schema, cols, rows);
    };
    const bool no_state = gen.Pick(5) == 0;
    std::shared_ptr<arrow::Table> state = no_state ? nullptr : table(gen.Pick(60));
    // Several chunks, as states built over triggers have.
    if (state && state->num_rows() > 10) {
      state = arrow::ConcatenateTables({state->Slice(0, 5), state->Slice(5)}).ValueOrDie();
    }
    SCOPED_TRACE("case " + std::to_string(c) + ": " + schema->ToString());
    // Three triggers through one merger (its grouper and buffers reused),
    // each trigger's state the previous result; the first also by the
    // one-call MergePartials.
    auto merger = PartialMerger::Make(schema, n_keys, merge);
    ASSERT_TRUE(merger.ok()) << merger.status().ToString();
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE("round " + std::to_string(round));
      auto partial = table(1 + gen.Pick(60));
      auto fast = (*merger)->Merge(state, partial);
      ASSERT_TRUE(fast.ok()) << fast.status().ToString();
      if (round == 0) {
        auto once = MergePartials(state, partial, n_keys, merge);
        ASSERT_TRUE(once.ok()) << once.status().ToString();
        EXPECT_TRUE(TablesEqualUnordered(**once, **fast, /*check_types=*/true));
      }
      ASSERT_TRUE(session_->RegisterArrow("p", partial).ok());
      std::string from = "SELECT *, true AS __new FROM p";
      if (state) {
        std::vector<int> own(schema->num_fields());
        for (int i = 0; i < schema->num_fields(); ++i) own[i] = i;
        ASSERT_TRUE(session_->RegisterArrow("s", state->SelectColumns(own).ValueOrDie()).ok());
        from = "SELECT *, false AS __new FROM s UNION ALL " + from;
      }
      auto twin = Sql("SELECT " + (keys.empty() ? "" : keys + ", ") + folds +
                      "bool_or(__new) AS __touched FROM (" + from + ")" +
                      (keys.empty() ? "" : " GROUP BY " + keys));
      ASSERT_TRUE(twin);
      EXPECT_TRUE(TablesEqualUnordered(*twin, **fast, /*check_types=*/false));
      // The next trigger's state. Odd cases: this result as it is, some
      // groups closed through Keep (the merger then hashes only the new
      // partials); even ones: a copy without __touched (loaded afresh).
      if (c % 2 == 1) {
        arrow::BooleanBuilder leave;
        for (int64_t r = 0; r < (*fast)->num_rows(); ++r) {
          ASSERT_TRUE(leave.Append(gen.Pick(3) == 0).ok());
        }
        auto left = std::make_shared<arrow::ChunkedArray>(leave.Finish().ValueOrDie());
        auto stay = arrow::compute::Filter(*fast, arrow::compute::Invert(left).ValueOrDie())
                        .ValueOrDie()
                        .table();
        (*merger)->Keep(*fast, left, stay);
        state = stay;
      } else {
        auto next = (*fast)->RemoveColumn((*fast)->num_columns() - 1).ValueOrDie();
        state = arrow::Table::Make(schema, next->columns(), next->num_rows());
      }
    }
  }
}

TEST_F(PartialMergeTest, SumsThatLeaveTheirTypeFailAsTheSqlCastDoes) {
  auto schema = arrow::schema({arrow::field("__g0", arrow::int64()),
                               arrow::field("__p0", arrow::int64())});
  arrow::Int64Builder k, v;
  ASSERT_TRUE(k.AppendValues({1, 1}).ok());
  ASSERT_TRUE(v.AppendValues({INT64_MAX, 1}).ok());
  auto t = arrow::Table::Make(schema, {k.Finish().ValueOrDie(), v.Finish().ValueOrDie()});
  auto r = MergePartials(nullptr, t, 1, {"sum"});
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsInvalid()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("overflows"), std::string::npos);
  // The SQL twin refuses the same sum.
  ASSERT_TRUE(session_->RegisterArrow("t", t).ok());
  EXPECT_FALSE(session_->Query("SELECT CAST(sum(__p0) AS BIGINT) FROM t GROUP BY __g0").ok());
}

TEST_F(PartialMergeTest, TypesOutsideTheFastPathAreRefusedUpFront) {
  auto keyed = [](std::shared_ptr<arrow::DataType> key, std::shared_ptr<arrow::DataType> val) {
    return arrow::schema({arrow::field("__g0", key), arrow::field("__p0", val)});
  };
  EXPECT_TRUE(CanMergePartials(*keyed(arrow::int64(), arrow::int64()), 1, {"sum"}).ok());
  // SQL groups -0.0 with 0.0; the hash of the bytes would not.
  EXPECT_TRUE(CanMergePartials(*keyed(arrow::float64(), arrow::int64()), 1, {"sum"})
                  .IsNotImplemented());
  EXPECT_TRUE(CanMergePartials(*keyed(arrow::list(arrow::int64()), arrow::int64()), 1, {"sum"})
                  .IsNotImplemented());
  EXPECT_TRUE(CanMergePartials(*keyed(arrow::int64(), arrow::utf8()), 1, {"sum"})
                  .IsNotImplemented());
  EXPECT_TRUE(CanMergePartials(*keyed(arrow::int64(), kTs), 1, {"sum"}).IsNotImplemented());
  EXPECT_TRUE(CanMergePartials(*keyed(arrow::int64(), arrow::int64()), 1, {"median"})
                  .IsNotImplemented());
  EXPECT_TRUE(CanMergePartials(*keyed(arrow::int64(), arrow::int64()), 2, {"sum"}).IsInvalid());
}

TEST_F(PartialMergeTest, PanesExpandToTheWindowsThatHoldThemAsTheCrossJoinDoes) {
  Columns gen(11);
  for (int c = 0; c < 40; ++c) {
    const int64_t n = gen.Pick(30);
    const int64_t count = 2 + gen.Pick(4);
    const int64_t slide = (1 + gen.Pick(3)) * kSec;
    const bool as_struct = gen.Pick(2) == 0;
    std::shared_ptr<arrow::Table> t;
    WindowKeys keys;
    std::string twin;
    auto k = gen.Make(arrow::int64(), n, 5);
    auto v = gen.Make(arrow::int64(), n, 50);
    const std::string shift = " - to_microseconds(r.i * " + std::to_string(slide) + ")";
    if (as_struct) {
      t = arrow::Table::Make(arrow::schema({arrow::field("__g0", WindowType()),
                                            arrow::field("__g1", arrow::int64()),
                                            arrow::field("__p0", arrow::int64())}),
                             {gen.Make(WindowType(), n, 9), k, v}, n);
      keys.struct_key = 0;
      twin = "SELECT CASE WHEN __g0 IS NULL THEN NULL ELSE {'start': __g0.start" + shift +
             ", 'end': __g0.end" + shift + "} END AS __g0, __g1, __p0 FROM t, range(" +
             std::to_string(count) + ") r(i)";
    } else {
      auto start = gen.Make(kTs, n, 9);
      t = arrow::Table::Make(arrow::schema({arrow::field("__g0", arrow::int64()),
                                            arrow::field("__g1", kTs),
                                            arrow::field("__g2", kTs),
                                            arrow::field("__p0", arrow::int64())}),
                             {k, start, start, v}, n);
      keys.start_key = 1;
      keys.end_key = 2;
      twin = "SELECT __g0, __g1" + shift + " AS __g1, __g2" + shift + " AS __g2, __p0 FROM t, "
             "range(" + std::to_string(count) + ") r(i)";
    }
    SCOPED_TRACE("case " + std::to_string(c));
    auto fast = ExpandPanes(t, keys, count, slide);
    ASSERT_TRUE(fast.ok()) << fast.status().ToString();
    ASSERT_TRUE(session_->RegisterArrow("t", t).ok());
    auto expected = Sql(twin);
    ASSERT_TRUE(expected);
    EXPECT_TRUE(TablesEqualUnordered(*expected, **fast, /*check_types=*/false));
  }
}

TEST_F(PartialMergeTest, ClosedFlagsEqualTheWindowEndQuery) {
  Columns gen(13);
  for (int c = 0; c < 40; ++c) {
    const int64_t n = gen.Pick(40);
    const int64_t w = gen.Pick(20) * kSec;
    const bool strict = gen.Pick(2) == 0, all = gen.Pick(6) == 0;
    const int form = gen.Pick(3);  // struct, end column, start + size
    WindowKeys keys;
    std::shared_ptr<arrow::Table> t;
    std::string end;
    if (form == 0) {
      t = arrow::Table::Make(arrow::schema({arrow::field("__g0", WindowType())}),
                             {gen.Make(WindowType(), n, 9)}, n);
      keys.struct_key = 0;
      end = "__g0.end";
    } else {
      t = arrow::Table::Make(arrow::schema({arrow::field("__g0", kTs)}), {gen.Make(kTs, n, 9)},
                             n);
      if (form == 1) {
        keys.end_key = 0;
        end = "__g0";
      } else {
        keys.start_key = 0;
        keys.size_us = 3 * kSec;
        end = "__g0 + to_microseconds(" + std::to_string(3 * kSec) + ")";
      }
    }
    SCOPED_TRACE("case " + std::to_string(c));
    auto fast = WindowClosed(t, keys, w, strict, all, "__closed");
    ASSERT_TRUE(fast.ok()) << fast.status().ToString();
    ASSERT_TRUE(session_->RegisterArrow("t", t).ok());
    const std::string cond = all ? "TRUE"
                                 : "epoch_us(" + end + ") " + (strict ? "<" : "<=") + " " +
                                       std::to_string(w);
    auto expected = Sql("SELECT *, coalesce(" + cond + ", false) AS __closed FROM t");
    ASSERT_TRUE(expected);
    EXPECT_TRUE(TablesEqualUnordered(*expected, **fast, /*check_types=*/false));
  }
}

}  // namespace
}  // namespace thund::native
