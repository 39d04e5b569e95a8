#include "engine/table_compare.h"

#include <arrow/compute/api.h>
#include <arrow/compute/initialize.h>
#include <arrow/scalar.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <sstream>

namespace thund::engine::testing {
namespace {

// Arrow >= 21 registers most compute kernels only after compute::Initialize().
class ArrowComputeEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_TRUE(arrow::compute::Initialize().ok()); }
};
[[maybe_unused]] ::testing::Environment* const kArrowCompute =
    ::testing::AddGlobalTestEnvironment(new ArrowComputeEnvironment);

std::string Cell(const arrow::ChunkedArray& column, int64_t row) {
  auto scalar = column.GetScalar(row);
  if (!scalar.ok()) return "<error: " + scalar.status().ToString() + ">";
  if (!(*scalar)->is_valid) return "∅";
  return (*scalar)->ToString();
}

::testing::AssertionResult SameColumns(const arrow::Table& expected, const arrow::Table& actual,
                                       bool check_types) {
  const auto& e = *expected.schema();
  const auto& a = *actual.schema();
  if (e.num_fields() != a.num_fields()) {
    return ::testing::AssertionFailure() << "column count differs\n  expected: " << e.ToString()
                                         << "\n  actual:   " << a.ToString();
  }
  for (int i = 0; i < e.num_fields(); ++i) {
    if (e.field(i)->name() != a.field(i)->name() ||
        (check_types && !e.field(i)->type()->Equals(*a.field(i)->type()))) {
      return ::testing::AssertionFailure()
             << "column " << i << " differs: expected " << e.field(i)->ToString() << ", actual "
             << a.field(i)->ToString();
    }
  }
  return ::testing::AssertionSuccess();
}

void ListRows(std::ostringstream& out, const char* title, const std::vector<std::string>& rows) {
  if (rows.empty()) return;
  out << "\n  " << title << " (" << rows.size() << "):";
  for (size_t i = 0; i < rows.size() && i < 12; ++i) out << "\n    " << rows[i];
  if (rows.size() > 12) out << "\n    ...";
}

}  // namespace

std::vector<std::string> RowStrings(const arrow::Table& table) {
  std::vector<std::string> rows(static_cast<size_t>(table.num_rows()));
  for (int c = 0; c < table.num_columns(); ++c) {
    const auto& column = *table.column(c);
    for (int64_t r = 0; r < table.num_rows(); ++r) {
      auto& row = rows[static_cast<size_t>(r)];
      if (c > 0) row += " | ";
      row += Cell(column, r);
    }
  }
  return rows;
}

::testing::AssertionResult TablesEqualUnordered(const arrow::Table& expected,
                                                const arrow::Table& actual, bool check_types) {
  auto columns = SameColumns(expected, actual, check_types);
  if (!columns) return columns;
  std::map<std::string, int64_t> balance;  // +1 per expected row, -1 per actual row
  for (const auto& row : RowStrings(expected)) ++balance[row];
  for (const auto& row : RowStrings(actual)) --balance[row];
  std::vector<std::string> missing, extra;
  for (const auto& [row, n] : balance) {
    for (int64_t i = 0; i < n; ++i) missing.push_back(row);
    for (int64_t i = 0; i < -n; ++i) extra.push_back(row);
  }
  if (missing.empty() && extra.empty()) return ::testing::AssertionSuccess();
  std::ostringstream out;
  out << "row sets differ: expected " << expected.num_rows() << " rows, actual "
      << actual.num_rows();
  ListRows(out, "only in expected", missing);
  ListRows(out, "only in actual", extra);
  return ::testing::AssertionFailure() << out.str();
}

::testing::AssertionResult TablesEqualOrdered(const arrow::Table& expected,
                                              const arrow::Table& actual) {
  auto columns = SameColumns(expected, actual, /*check_types=*/true);
  if (!columns) return columns;
  if (expected.Equals(actual)) return ::testing::AssertionSuccess();
  std::ostringstream out;
  out << "tables differ: expected " << expected.num_rows() << " rows, actual " << actual.num_rows();
  const int64_t rows = std::min(expected.num_rows(), actual.num_rows());
  int shown = 0;
  for (int64_t r = 0; r < rows && shown < 10; ++r) {
    for (int c = 0; c < expected.num_columns() && shown < 10; ++c) {
      const std::string e = Cell(*expected.column(c), r);
      const std::string a = Cell(*actual.column(c), r);
      if (e != a) {
        out << "\n  row " << r << ", column '" << expected.schema()->field(c)->name()
            << "': expected " << e << ", actual " << a;
        ++shown;
      }
    }
  }
  return ::testing::AssertionFailure() << out.str();
}

std::shared_ptr<arrow::Table> CastTo(const std::shared_ptr<arrow::Table>& table,
                                     const std::shared_ptr<arrow::Schema>& schema) {
  std::vector<std::shared_ptr<arrow::ChunkedArray>> columns;
  for (int i = 0; i < table->num_columns(); ++i) {
    auto cast = arrow::compute::Cast(table->column(i), schema->field(i)->type());
    EXPECT_TRUE(cast.ok()) << "cast of column " << i << " to " << schema->field(i)->ToString()
                           << ": " << cast.status().ToString();
    if (!cast.ok()) return table;
    columns.push_back(cast->chunked_array());
  }
  return arrow::Table::Make(schema, std::move(columns), table->num_rows());
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("thund_test_" + std::to_string(rd()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace thund::engine::testing
