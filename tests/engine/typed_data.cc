#include "engine/typed_data.h"

#include <arrow/api.h>
#include <arrow/compute/api.h>
#include <arrow/json/from_string.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <functional>

namespace thund::engine::testing {
namespace {

using Gen = std::function<std::string(int64_t)>;

struct Column {
  std::string name;
  std::shared_ptr<arrow::DataType> type;
  Gen json;  // JSON text of the value at a row (never null; nulls are added on top)
};

std::string Q(const std::string& s) { return "\"" + s + "\""; }
std::string N(int64_t v) { return std::to_string(v); }
std::string U(uint64_t v) { return std::to_string(v); }
std::string D(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}
// The decimal text of unscaled / 10^scale.
std::string Scaled(int64_t unscaled, int scale) {
  const bool neg = unscaled < 0;
  std::string digits = std::to_string(neg ? -unscaled : unscaled);
  if (static_cast<int>(digits.size()) <= scale) {
    digits.insert(0, static_cast<size_t>(scale) + 1 - digits.size(), '0');
  }
  digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  return Q((neg ? "-" : "") + digits);
}

const std::vector<std::string> kColors = {"red", "green", "blue", "cyan", "magenta"};

std::vector<Column> Columns() {
  using arrow::TimeUnit;
  auto ny = "America/New_York";
  return {
      {"i8", arrow::int8(), [](int64_t i) { return N(i * 37 % 256 - 128); }},
      {"i16", arrow::int16(), [](int64_t i) { return N(i * 1009 % 65536 - 32768); }},
      {"i32", arrow::int32(), [](int64_t i) { return N(i * 48271 % 2147483647 - 1073741823); }},
      {"i64", arrow::int64(), [](int64_t i) { return N((i - 8000) * 1000000007123); }},
      {"u8", arrow::uint8(), [](int64_t i) { return N(i % 256); }},
      {"u16", arrow::uint16(), [](int64_t i) { return N(i * 7 % 65536); }},
      {"u32", arrow::uint32(), [](int64_t i) { return N(i * 2654435761 % 4294967296); }},
      {"u64", arrow::uint64(),
       [](int64_t i) { return U(18446744073709551615ULL - static_cast<uint64_t>(i) * 1000003); }},
      {"f32", arrow::float32(), [](int64_t i) { return D((i - 500) * 0.25); }},
      {"f64", arrow::float64(), [](int64_t i) { return D((i - 7) / 8.0); }},
      {"flag", arrow::boolean(),
       [](int64_t i) { return std::string(i % 3 == 0 ? "true" : "false"); }},
      {"s", arrow::utf8(),
       [](int64_t i) {
         return Q(i % 5 == 0 ? "a longer string value #" + N(i) + " éß∑" : "s" + N(i));
       }},
      {"ls", arrow::large_utf8(), [](int64_t i) { return Q("L" + N(i)); }},
      {"vs", arrow::utf8_view(),
       [](int64_t i) {
         return Q(i % 4 == 0 ? "view string longer than twelve " + N(i) : "v" + N(i));
       }},
      {"bin", arrow::binary(), [](int64_t i) { return Q("b" + N(i * 13)); }},
      {"lbin", arrow::large_binary(), [](int64_t i) { return Q("lb" + N(i)); }},
      {"fsb", arrow::fixed_size_binary(4),
       [](int64_t i) {
         char buf[8];
         std::snprintf(buf, sizeof(buf), "%04d", static_cast<int>(i % 10000));
         return Q(buf);
       }},
      {"d32", arrow::date32(), [](int64_t i) { return N(i - 8000); }},
      {"ts_s", arrow::timestamp(TimeUnit::SECOND), [](int64_t i) { return N(i * 86399 - 50000); }},
      {"ts_ms", arrow::timestamp(TimeUnit::MILLI), [](int64_t i) { return N(i * 1234567); }},
      {"ts_us", arrow::timestamp(TimeUnit::MICRO), [](int64_t i) { return N(i * 1000003 - 9); }},
      {"ts_ns", arrow::timestamp(TimeUnit::NANO), [](int64_t i) { return N(i * 1000000007); }},
      {"ts_us_utc", arrow::timestamp(TimeUnit::MICRO, "UTC"), [](int64_t i) { return N(i * 999); }},
      {"ts_ns_ny", arrow::timestamp(TimeUnit::NANO, ny), [](int64_t i) { return N(i * 1234000); }},
      {"t64", arrow::time64(TimeUnit::MICRO),
       [](int64_t i) { return N(i * 5000017 % 86400000000); }},
      {"dec18", arrow::decimal128(18, 3), [](int64_t i) { return Scaled(i * 7919 - 50000000, 3); }},
      {"dec38", arrow::decimal128(38, 10),
       [](int64_t i) { return Scaled((i % 2 ? -1 : 1) * i * 123456789012345, 10); }},
      {"dec7", arrow::decimal32(7, 2), [](int64_t i) { return Scaled(i * 3 - 20000, 2); }},
      {"lst", arrow::list(arrow::int32()),
       [](int64_t i) {
         if (i % 5 == 1) return std::string("[]");
         return "[" + N(i) + (i % 3 == 0 ? ", null, " : ", ") + N(-i) + "]";
       }},
      {"llst", arrow::large_list(arrow::utf8()),
       [](int64_t i) { return "[" + Q("x" + N(i)) + ", " + Q("y") + "]"; }},
      {"fsl", arrow::fixed_size_list(arrow::int16(), 2),
       [](int64_t i) { return "[" + N(i % 1000) + ", " + (i % 4 == 0 ? "null" : N(7)) + "]"; }},
      {"st",
       arrow::struct_({arrow::field("a", arrow::int32()), arrow::field("b", arrow::utf8()),
                       arrow::field("c", arrow::list(arrow::int64()))}),
       [](int64_t i) {
         return "{\"a\": " + (i % 6 == 2 ? std::string("null") : N(i)) +
                ", \"b\": " + Q("n" + N(i)) + ", \"c\": [" + N(i) + "]}";
       }},
      {"mp", arrow::map(arrow::utf8(), arrow::int64()),
       [](int64_t i) {
         if (i % 4 == 3) return std::string("[]");
         return "[[\"a\", " + N(i) + "], [\"b\", " + (i % 2 ? std::string("null") : N(-i)) + "]]";
       }},
      {"ival", arrow::month_day_nano_interval(),
       [](int64_t i) { return "[" + N(i % 12) + ", " + N(i % 31) + ", " + N(i * 1000) + "]"; }},
  };
}

bool IsNull(int64_t row, size_t column) { return (row + static_cast<int64_t>(column)) % 7 == 0; }

std::shared_ptr<arrow::Array> FromJson(const std::shared_ptr<arrow::DataType>& type,
                                       const std::string& json) {
  auto array = arrow::json::ArrayFromJSONString(type, json);
  EXPECT_TRUE(array.ok()) << type->ToString() << ": " << array.status().ToString();
  return array.ok() ? *array : nullptr;
}

}  // namespace

std::shared_ptr<arrow::Schema> TypedSchema() {
  arrow::FieldVector fields;
  for (const auto& c : Columns()) fields.push_back(arrow::field(c.name, c.type));
  fields.push_back(arrow::field("dict", arrow::dictionary(arrow::int32(), arrow::utf8())));
  fields.push_back(arrow::field("ree", arrow::run_end_encoded(arrow::int32(), arrow::utf8())));
  return arrow::schema(fields);
}

std::shared_ptr<arrow::RecordBatch> MakeTypedBatch(int64_t first_row, int64_t num_rows) {
  const auto columns = Columns();
  std::vector<std::shared_ptr<arrow::Array>> arrays;
  for (size_t c = 0; c < columns.size(); ++c) {
    std::string json = "[";
    for (int64_t r = first_row; r < first_row + num_rows; ++r) {
      if (r > first_row) json += ",";
      json += IsNull(r, c) ? "null" : columns[c].json(r);
    }
    arrays.push_back(FromJson(columns[c].type, json + "]"));
  }
  // dict: indices into kColors; ree: runs of 100 equal strings.
  std::string indices = "[", plain = "[", colors = "[";
  for (size_t k = 0; k < kColors.size(); ++k) colors += (k ? "," : "") + Q(kColors[k]);
  for (int64_t r = first_row; r < first_row + num_rows; ++r) {
    const char* sep = r > first_row ? "," : "";
    indices += sep + (IsNull(r, columns.size()) ? std::string("null") : N(r * 3 % 5));
    plain += sep + (r % 300 == 150 ? std::string("null") : Q("run" + N(r / 100)));
  }
  auto dict = arrow::json::DictArrayFromJSONString(arrow::dictionary(arrow::int32(), arrow::utf8()),
                                                   indices + "]", colors + "]");
  EXPECT_TRUE(dict.ok()) << dict.status().ToString();
  arrays.push_back(*dict);
  auto ree = arrow::compute::RunEndEncode(FromJson(arrow::utf8(), plain + "]"),
                                          arrow::compute::RunEndEncodeOptions(arrow::int32()));
  EXPECT_TRUE(ree.ok()) << ree.status().ToString();
  arrays.push_back(ree->make_array());
  return arrow::RecordBatch::Make(TypedSchema(), num_rows, arrays);
}

std::vector<std::shared_ptr<arrow::RecordBatch>> MakeTypedBatches(
    const std::vector<int64_t>& sizes) {
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  int64_t row = 0;
  for (int64_t n : sizes) {
    batches.push_back(MakeTypedBatch(row, n));
    row += n;
  }
  return batches;
}

std::vector<std::shared_ptr<arrow::RecordBatch>> MakeTypedSlices(
    const std::vector<int64_t>& sizes) {
  int64_t total = 0;
  for (int64_t n : sizes) total += n;
  auto whole = MakeTypedBatch(0, total);
  std::vector<std::shared_ptr<arrow::RecordBatch>> batches;
  int64_t row = 0;
  for (int64_t n : sizes) {
    batches.push_back(whole->Slice(row, n));
    row += n;
  }
  return batches;
}

std::shared_ptr<arrow::Table> DecodedTable(
    const std::vector<std::shared_ptr<arrow::RecordBatch>>& batches) {
  auto table = arrow::Table::FromRecordBatches(TypedSchema(), batches).ValueOrDie();
  auto fields = table->schema()->fields();
  auto columns = table->columns();
  for (size_t i = 0; i < fields.size(); ++i) {
    const auto id = fields[i]->type()->id();
    if (id != arrow::Type::DICTIONARY && id != arrow::Type::RUN_END_ENCODED) continue;
    auto decoded = id == arrow::Type::DICTIONARY ? arrow::compute::Cast(columns[i], arrow::utf8())
                                                 : arrow::compute::RunEndDecode(columns[i]);
    EXPECT_TRUE(decoded.ok()) << decoded.status().ToString();
    columns[i] = decoded->chunked_array();
    fields[i] = arrow::field(fields[i]->name(), arrow::utf8());
  }
  return arrow::Table::Make(arrow::schema(fields), columns, table->num_rows());
}

}  // namespace thund::engine::testing
