#include "keyed/keyed_test_util.h"

#include <arrow/scalar.h>
#include <arrow/table.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <mutex>
#include <random>

namespace thund::engine::keyed::testing {

std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

ScratchDir::ScratchDir() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  path_ = std::filesystem::temp_directory_path() /
          ("thund-keyed-" + std::to_string(::getpid()) + "-" + std::to_string(counter++) + "-" +
           std::to_string(rd() % 100000));
  std::filesystem::remove_all(path_);
  std::filesystem::create_directories(path_);
}

ScratchDir::~ScratchDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

Oracle::Oracle() {
  DuckDbSessionOptions o;
  o.threads = 2;
  auto s = DuckDbSession::Open(o);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  if (s.ok()) session_ = std::move(s).ValueUnsafe();
}

void Oracle::Exec(const std::string& sql) {
  auto st = session_->Execute(sql);
  EXPECT_TRUE(st.ok()) << st.ToString() << "\n  in: " << sql;
}

int64_t Oracle::Int(const std::string& sql) {
  auto t = session_->Query(sql);
  EXPECT_TRUE(t.ok()) << t.status().ToString() << "\n  in: " << sql;
  if (!t.ok() || (*t)->num_rows() != 1) return -1;
  auto scalar = (*t)->column(0)->GetScalar(0);
  if (!scalar.ok() || !(*scalar)->is_valid) return -1;
  auto cast = (*scalar)->CastTo(arrow::int64());
  if (!cast.ok()) return -1;
  return std::static_pointer_cast<arrow::Int64Scalar>(*cast)->value;
}

std::string Oracle::Diff(const std::string& expected_sql, const std::string& actual_sql) {
  const std::string missing = "(" + expected_sql + ") EXCEPT ALL (" + actual_sql + ")";
  const std::string extra = "(" + actual_sql + ") EXCEPT ALL (" + expected_sql + ")";
  const int64_t n_missing = Int("SELECT count(*) FROM (" + missing + ")");
  const int64_t n_extra = Int("SELECT count(*) FROM (" + extra + ")");
  if (n_missing == 0 && n_extra == 0) return "";
  std::string out = std::to_string(n_missing) + " expected rows missing, " +
                    std::to_string(n_extra) + " unexpected rows";
  for (const auto& [label, sql] : {std::pair{"missing", missing}, std::pair{"extra", extra}}) {
    auto t = session_->Query("SELECT * FROM (" + sql + ") LIMIT 3");
    if (t.ok()) out += "\n" + std::string(label) + ":\n" + (*t)->ToString();
  }
  return out;
}

std::string ReadTarget(const std::string& dir, FileFormat format) {
  switch (format) {
    case FileFormat::kParquet:
      return "SELECT * FROM read_parquet('" + dir + "/*.parquet')";
    case FileFormat::kCsv:
      return "SELECT * FROM read_csv('" + dir + "/*.csv')";
    case FileFormat::kJson:
      return "SELECT * FROM read_json('" + dir + "/*.json')";
    case FileFormat::kNoop:
      break;  // a noop sink leaves nothing to read
  }
  return "";
}

bool CopyRun::HasEvent(KeyedEvent::Kind kind, const std::string& substring) const {
  for (const auto& e : events) {
    if (e.kind == kind && e.message.find(substring) != std::string::npos) return true;
  }
  return false;
}

std::string CopyRun::EventsText() const {
  std::string out;
  for (const auto& e : events) out += std::string(Name(e.kind)) + ": " + e.message + "\n";
  return out;
}

CopyRun Copy(const KeyedCopyOptions& options) {
  CopyRun run;
  auto fs = std::make_shared<arrow::fs::LocalFileSystem>();
  run.result = RunKeyedCopy(fs, options, [&run](const KeyedEvent& e) {
    static std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    run.events.push_back(e);
  });
  return run;
}

KeyedCopyOptions Options(const std::string& source, const std::string& target,
                         std::vector<std::string> keys) {
  KeyedCopyOptions o;
  o.sources.push_back(CopySource{"src", source, std::nullopt});
  o.target = target;
  o.keyed.keys = std::move(keys);
  o.keyed.threads = 2;
  return o;
}

}  // namespace thund::engine::keyed::testing
