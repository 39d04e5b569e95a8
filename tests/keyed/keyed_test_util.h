// Helpers for the keyed-write tests: status assertions, scratch directories,
// and DuckDB as the independent oracle (data generation and result checks run
// as plain DuckDB SQL over the files, never through the code under test).
#pragma once

#include <arrow/filesystem/localfs.h>
#include <arrow/result.h>
#include <arrow/status.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/duckdb/duckdb_session.h"
#include "engine/keyed/keyed_copy.h"

#define KEYED_ASSERT_OK(expr)                \
  do {                                       \
    const ::arrow::Status _st = (expr);      \
    ASSERT_TRUE(_st.ok()) << _st.ToString(); \
  } while (0)
#define KEYED_CONCAT_INNER_(a, b) a##b
#define KEYED_CONCAT_(a, b) KEYED_CONCAT_INNER_(a, b)
#define KEYED_ASSIGN_IMPL_(tmp, lhs, expr)          \
  auto tmp = (expr);                                \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString(); \
  lhs = std::move(tmp).ValueUnsafe()
#define KEYED_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  KEYED_ASSIGN_IMPL_(KEYED_CONCAT_(_keyed_result_, __LINE__), lhs, expr)

namespace thund::engine::keyed::testing {

// The whole contents of a file ("" when it cannot be read).
std::string ReadBytes(const std::string& path);

// A fresh directory, removed on destruction.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// An in-process DuckDB for generating inputs and checking outputs.
class Oracle {
 public:
  Oracle();
  // Runs statements; fails the test on error.
  void Exec(const std::string& sql);
  // The single integer a query returns (e.g. count(*)); -1 and a test failure on error.
  int64_t Int(const std::string& sql);
  // "" when the two queries return the same multiset of rows, else a description
  // of the difference (counts and a few rows on each side).
  std::string Diff(const std::string& expected_sql, const std::string& actual_sql);
  DuckDbSession& session() { return *session_; }

 private:
  std::unique_ptr<DuckDbSession> session_;
};

// DuckDB's reader over every file of a directory written by a keyed write.
std::string ReadTarget(const std::string& dir, FileFormat format = FileFormat::kParquet);

// Runs RunKeyedCopy on the local filesystem, collecting events.
struct CopyRun {
  arrow::Result<KeyedCopyResult> result = arrow::Status::UnknownError("not run");
  std::vector<KeyedEvent> events;
  bool HasEvent(KeyedEvent::Kind kind, const std::string& substring = "") const;
  std::string EventsText() const;
};
CopyRun Copy(const KeyedCopyOptions& options);

// Options for copying `source` (one source named "src") into `target` by `keys`.
KeyedCopyOptions Options(const std::string& source, const std::string& target,
                         std::vector<std::string> keys);

}  // namespace thund::engine::keyed::testing
