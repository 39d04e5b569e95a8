// Test helpers for ParseSql: parse expecting success, or expecting exactly
// one error, with the rendered diagnostics in the failure message.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "thund/sql_pipeline.h"

namespace thund::testing {

inline std::string Render(const Diagnostics& ds, const std::string& text) {
  std::string out;
  for (const auto& d : ds) out += RenderDiagnostic(d, text);
  return out;
}

inline Pipeline Parse(const std::string& sql) {
  ParseResult r = ParseSql(sql, "test.sql");
  EXPECT_TRUE(r.ok()) << Render(r.diagnostics, sql);
  return r.pipeline;
}

inline Diagnostic OnlyError(const std::string& sql) {
  ParseResult r = ParseSql(sql, "test.sql");
  Diagnostics errors;
  for (const auto& d : r.diagnostics) {
    if (d.severity == Severity::kError) errors.push_back(d);
  }
  EXPECT_EQ(errors.size(), 1u) << Render(r.diagnostics, sql);
  return errors.empty() ? Diagnostic{} : errors[0];
}

}  // namespace thund::testing
