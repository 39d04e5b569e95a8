#include <gtest/gtest.h>

#include <arrow/type.h>

#include "thund/duration.h"
#include "thund/ir.h"
#include "thund/type_names.h"

namespace thund {
namespace {

TEST(Duration, FormatParseRoundTrip) {
  for (int64_t v : {0LL, 1LL, 999LL, 1000LL, 1500LL, 60000LL, 3600000LL, 86400000LL, 90061001LL,
                    -5000LL}) {
    auto parsed = ParseDuration(FormatDuration(v));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, v) << FormatDuration(v);
  }
  EXPECT_EQ(*ParseDuration("10 seconds"), 10000);
  EXPECT_EQ(*ParseDuration("5 MINUTES"), 300000);
  EXPECT_EQ(*ParseDuration("250"), 250);
  EXPECT_FALSE(ParseDuration("ten seconds").ok());
  EXPECT_FALSE(ParseDuration("10 fortnights").ok());
  EXPECT_FALSE(ParseDuration("").ok());
}

// Found by fuzzing under UBSan: a second sign made from_chars read a
// negative number whose scaling overflowed.
TEST(Duration, OneSignAtMostAndNoOverflow) {
  EXPECT_FALSE(ParseDuration("--5s").ok());
  EXPECT_FALSE(ParseDuration("--9223372036854775808m").ok());
  EXPECT_FALSE(ParseDuration("-+5s").ok());
  EXPECT_FALSE(ParseDuration("9223372036854775807m").ok());
  EXPECT_FALSE(ParseDuration("- 5s").ok());
  EXPECT_EQ(*ParseDuration("-5s"), -5000);
  EXPECT_EQ(*ParseDuration("+5s"), 5000);
}

TEST(TypeNames, RoundTripAndAliases) {
  for (const char* t : {"bigint", "string", "decimal(12,3)", "array<int>", "map<string,bigint>",
                        "struct<a: int, b: array<string>>", "timestamp", "timestamp_ltz",
                        "timestamp(ms)", "timestamp(ns, tz=Europe/Oslo)", "date", "boolean"}) {
    auto parsed = ParseTypeName(t);
    ASSERT_TRUE(parsed.ok()) << t << ": " << parsed.status();
    EXPECT_EQ(FormatTypeName(**parsed), t);
  }
  EXPECT_TRUE((*ParseTypeName("INT64"))->Equals(arrow::int64()));
  EXPECT_TRUE((*ParseTypeName("varchar"))->Equals(arrow::utf8()));
  EXPECT_FALSE(ParseTypeName("strnig").ok());
  EXPECT_FALSE(ParseTypeName("array<int").ok());
}

TEST(Ir, EqualityIgnoresLocationButNotFields) {
  Pipeline a("p");
  a.AddQuery(Dataset::MaterializedView("x").WithComment("c"), "SELECT 1");
  Pipeline b = a;
  b.datasets[0].location = {"f.yaml", 3, 4};
  EXPECT_EQ(a, b);
  b.datasets[0].comment = "d";
  EXPECT_NE(a, b);
  Pipeline c = a;
  c.flows[0].streaming = StreamingSpec{};
  EXPECT_NE(a, c);
}

}  // namespace
}  // namespace thund
