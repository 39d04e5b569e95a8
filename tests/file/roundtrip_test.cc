// Lossless round trip of the pipeline file over generated pipelines:
// Parse(Format(p)) == p and Format(Parse(Format(p))) == Format(p).
#include <arrow/type.h>
#include <arrow/util/key_value_metadata.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "testing/random_pipeline.h"
#include "thund/pipeline_file.h"

namespace thund {
namespace {

std::string DiagText(const Diagnostics& diags) {
  std::string out;
  for (const auto& d : diags) out += d.ToString() + "\n";
  return out;
}

// Seed from THUND_TEST_SEED when set (to replay a failure), else fixed.
uint64_t BaseSeed() {
  if (const char* s = std::getenv("THUND_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20240611;
}

// What the generated pipelines covered, so the property cannot pass vacuously.
struct Coverage {
  std::set<std::string> seen;
  void Note(const Pipeline& p) {
    for (const auto& d : p.datasets) {
      seen.insert(std::string("kind:") + Name(d.kind));
      seen.insert(std::string("materialization:") + Name(d.materialization));
      if (d.schema.declared()) {
        seen.insert("schema");
        const auto& md = d.schema.arrow->metadata();
        if (md && md->size() > 0) seen.insert("schema-metadata");
        for (const auto& f : d.schema.arrow->fields()) {
          seen.insert("type:" + std::to_string(f->type()->id()));
          if (f->HasMetadata()) seen.insert("column-metadata");
          if (!f->nullable()) seen.insert("not-null");
        }
      }
      for (const auto& e : d.expectations) seen.insert(std::string("action:") + Name(e.action));
      if (!d.storage.empty()) seen.insert("storage");
      if (d.storage.mode) seen.insert(std::string("write_mode:") + Name(*d.storage.mode));
      if (!d.storage.merge_keys.empty()) seen.insert("merge_keys");
      if (d.keyed_write.enabled()) seen.insert("keyed_write");
    }
    for (const auto& f : p.flows) {
      if (f.source) seen.insert("source:" + SourceKindName(*f.source));
      if (f.once) seen.insert("once");
      if (f.cdc) seen.insert("cdc:scd" + std::to_string(f.cdc->scd_type));
      if (f.name != f.target) seen.insert("flow-name-differs");
      if (!f.streaming) continue;
      seen.insert(std::string("mode:") +
                  (f.streaming->mode ? Name(*f.streaming->mode) : "unset"));
      if (!f.streaming->late_rows.empty()) seen.insert("late_rows");
      seen.insert(std::string("trigger:") + Name(f.streaming->trigger.kind));
      seen.insert(std::string("output:") + Name(f.streaming->output_mode));
      if (f.streaming->watermark) {
        seen.insert(f.streaming->watermark->idle_timeout_ms ? "watermark+idle" : "watermark");
      }
      if (f.streaming->window)
        seen.insert(std::string("window:") + Name(f.streaming->window->kind));
    }
  }
};

TEST(PipelineFileRoundTrip, GeneratedPipelinesSurviveFormatThenParse) {
  const uint64_t seed = BaseSeed();
  constexpr int kPipelines = 1500;
  SCOPED_TRACE("base seed " + std::to_string(seed) +
               " (replay with THUND_TEST_SEED=" + std::to_string(seed) + ")");
  Coverage coverage;
  for (int i = 0; i < kPipelines; ++i) {
    testing::RandomPipelineGenerator gen(seed + static_cast<uint64_t>(i));
    const Pipeline p = gen.Next();
    coverage.Note(p);
    const std::string text = FormatPipelineFile(p);
    const ParseResult parsed = ParsePipelineFile(text, "generated.yaml");
    ASSERT_TRUE(parsed.ok()) << "pipeline seed " << seed + i << "\n"
                             << DiagText(parsed.diagnostics) << "--- YAML ---\n"
                             << text;
    ASSERT_TRUE(parsed.pipeline == p) << "pipeline seed " << seed + i << "\n--- YAML ---\n"
                                      << text << "--- expected ---\n"
                                      << p.ToString() << "--- got ---\n"
                                      << parsed.pipeline.ToString();
    ASSERT_EQ(FormatPipelineFile(parsed.pipeline), text) << "pipeline seed " << seed + i;
  }
  for (const char* want : {"kind:table",
                           "kind:streaming_table",
                           "kind:materialized_view",
                           "kind:view",
                           "kind:temporary_view",
                           "kind:sink",
                           "schema",
                           "schema-metadata",
                           "column-metadata",
                           "not-null",
                           "materialization:incremental",
                           "action:warn",
                           "action:drop",
                           "action:fail",
                           "storage",
                           "write_mode:append",
                           "write_mode:overwrite",
                           "write_mode:merge",
                           "merge_keys",
                           "keyed_write",
                           "source:files",
                           "source:file_drop",
                           "source:generator",
                           "source:memory",
                           "source:kafka",
                           "once",
                           "cdc:scd1",
                           "cdc:scd2",
                           "flow-name-differs",
                           "mode:recompute",
                           "mode:incremental",
                           "mode:unset",
                           "late_rows",
                           "trigger:once",
                           "trigger:available_now",
                           "trigger:processing_time",
                           "output:append",
                           "output:update",
                           "output:complete",
                           "watermark",
                           "watermark+idle",
                           "window:tumbling",
                           "window:hopping",
                           "window:session"}) {
    EXPECT_TRUE(coverage.seen.count(want)) << "the generator never produced " << want;
  }
  EXPECT_GE(coverage.seen.size(), 50u);
}

}  // namespace
}  // namespace thund
