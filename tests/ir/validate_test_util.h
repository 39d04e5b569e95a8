// Helpers shared by the validate / topo-order tests: a clean base pipeline and
// lookups over diagnostics.
#pragma once

#include <arrow/type.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "thund/ir.h"
#include "thund/validate.h"

namespace thund::testing {

inline std::string Dump(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags) out += "  [" + d.code + "] " + d.ToString() + "\n";
  return out.empty() ? "  (no diagnostics)\n" : out;
}

// Copies (not pointers), so calling it on a temporary is safe.
inline std::vector<Diagnostic> WithCode(const Diagnostics& diags, const std::string& code) {
  std::vector<Diagnostic> out;
  for (const auto& d : diags) {
    if (d.code == code) out.push_back(d);
  }
  return out;
}

inline bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// Exactly one diagnostic with `code`; returns a copy of it (an empty one after
// a test failure so callers can keep going).
inline Diagnostic One(const Diagnostics& diags, const std::string& code) {
  auto found = WithCode(diags, code);
  EXPECT_EQ(found.size(), 1u) << "code " << code << " in:\n" << Dump(diags);
  return found.empty() ? Diagnostic{} : found.front();
}

inline void ExpectNo(const Diagnostics& diags, const std::string& code) {
  EXPECT_TRUE(WithCode(diags, code).empty()) << "unexpected " << code << " in:\n" << Dump(diags);
}

inline std::shared_ptr<arrow::Schema> EventSchema() {
  return arrow::schema({arrow::field("id", arrow::int64(), false),
                        arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MILLI)),
                        arrow::field("amount", arrow::float64()),
                        arrow::field("customer", arrow::utf8())});
}

// A pipeline exercising most features that Validate() accepts without a
// single diagnostic:
//   events   streaming_table <- memory source (flow "events")
//   clean    materialized_view <- SELECT ... FROM events (expectation)
//   per_user materialized_view <- GROUP BY over clean
//   windowed streaming_table <- windowed aggregate over STREAM(events)
//   out      sink (csv) <- SELECT * FROM per_user
inline Pipeline BasePipeline() {
  Pipeline p("base");
  p.Add(Dataset::StreamingTable("events").WithSchema(EventSchema()));
  p.Add(Flow::FromSource("events", "events", MemorySource{"events"}));
  p.AddQuery(Dataset::MaterializedView("clean").WithExpectation(
                 {"positive", "amount >= 0", ExpectationAction::kDrop, {}}),
             "SELECT id, ts, amount, customer FROM events WHERE amount IS NOT NULL");
  p.AddQuery(Dataset::MaterializedView("per_user"),
             "SELECT customer, sum(amount) AS total FROM clean GROUP BY customer");
  StreamingSpec spec;
  spec.watermark = Watermark{"ts", 5000, std::nullopt};
  spec.window = WindowSpec::Tumbling("ts", 60000);
  p.Add(Dataset::StreamingTable("windowed")
            .WithSchema(arrow::schema(
                {arrow::field("window_start", arrow::timestamp(arrow::TimeUnit::MILLI)),
                 arrow::field("ts", arrow::timestamp(arrow::TimeUnit::MILLI)),
                 arrow::field("total", arrow::float64())})));
  p.Add(Flow("windowed", "windowed",
             "SELECT window_start, max(ts) AS ts, sum(amount) AS total FROM STREAM(events) "
             "GROUP BY window_start")
            .WithStreaming(spec));
  StorageSpec storage;
  storage.format = FileFormat::kCsv;
  storage.location = "/tmp/out";
  p.Add(Dataset::Sink("out").WithStorage(storage));
  p.Add(Flow("out", "out", "SELECT * FROM per_user"));
  return p;
}

inline Flow* FindFlowMut(Pipeline& p, const std::string& name) {
  for (auto& f : p.flows) {
    if (f.name == name) return &f;
  }
  ADD_FAILURE() << "no flow " << name;
  return &p.flows.front();
}

inline Dataset* FindDatasetMut(Pipeline& p, const std::string& name) {
  for (auto& d : p.datasets) {
    if (d.name == name) return &d;
  }
  ADD_FAILURE() << "no dataset " << name;
  return &p.datasets.front();
}

}  // namespace thund::testing
