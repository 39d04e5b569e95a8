// docs/pipeline-file.md and examples/pipelines/ stay true: every ```yaml / ```json
// block of the reference parses without errors, every key the reader accepts
// is documented, and the example pipelines parse, validate and round-trip.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "authoring/file/decode.h"
#include "test_util.h"
#include "thund/validate.h"

namespace thund {
namespace {

using file_test::DiagText;
using file_test::ReadSourceFile;

struct Block {
  std::string lang;
  std::string text;
  int line;  // of the opening fence, 1-based
};

std::vector<Block> FencedBlocks(const std::string& markdown) {
  std::vector<Block> out;
  std::istringstream in(markdown);
  std::string line;
  int n = 0;
  Block* open = nullptr;
  while (std::getline(in, line)) {
    ++n;
    if (line.rfind("```", 0) == 0) {
      if (open == nullptr) {
        out.push_back({line.substr(3), "", n});
        open = &out.back();
      } else {
        open = nullptr;
      }
      continue;
    }
    if (open != nullptr) open->text += line + "\n";
  }
  return out;
}

TEST(PipelineFileDocs, EveryYamlAndJsonBlockParses) {
  const std::string doc = ReadSourceFile("docs/pipeline-file.md");
  ASSERT_FALSE(doc.empty());
  int checked = 0;
  for (const Block& b : FencedBlocks(doc)) {
    if (b.lang != "yaml" && b.lang != "json") continue;
    ++checked;
    ParseResult r =
        ParsePipelineFile(b.text, "pipeline-file.md block at line " + std::to_string(b.line));
    EXPECT_TRUE(r.ok()) << DiagText(r.diagnostics) << b.text;
    // The examples are meant to be copied: they are valid pipelines, not just valid files.
    Diagnostics problems = Validate(r.pipeline);
    EXPECT_FALSE(HasErrors(problems)) << DiagText(problems) << b.text;
    // And each is stable under fmt.
    const std::string canonical = FormatPipelineFile(r.pipeline);
    ParseResult again = ParsePipelineFile(canonical);
    EXPECT_TRUE(again.ok() && again.pipeline == r.pipeline) << canonical;
  }
  EXPECT_GE(checked, 9);  // one per feature example, plus the intro, schema metadata and JSON
}

// The "Errors" section shows a bad file and what the reader says about it.
TEST(PipelineFileDocs, ErrorExampleShowsTheRealOutput) {
  const auto blocks = FencedBlocks(ReadSourceFile("docs/pipeline-file.md"));
  int found = 0;
  for (size_t i = 0; i + 1 < blocks.size(); ++i) {
    if (!blocks[i].lang.empty() || blocks[i].text.rfind("name: shop\n", 0) != 0) continue;
    ++found;
    ParseResult r = ParsePipelineFile(blocks[i].text, "orders.yaml");
    std::string got;
    for (const auto& d : r.diagnostics) got += d.ToString() + "\n";
    EXPECT_EQ(got, blocks[i + 1].text);
  }
  EXPECT_EQ(found, 1);
}

TEST(PipelineFileDocs, EveryAcceptedKeyIsDocumented) {
  const std::string doc = ReadSourceFile("docs/pipeline-file.md");
  using file::kCdcKeys, file::kColumnKeys, file::kDatasetKeys, file::kExpectationKeys,
      file::kFlowKeys, file::kKeyedWriteKeys, file::kPipelineKeys, file::kSchemaKeys,
      file::kStorageKeys, file::kStreamingKeys, file::kWatermarkKeys, file::kWindowKeys;
  for (const auto* keys :
       {&kPipelineKeys, &kDatasetKeys, &kSchemaKeys, &kColumnKeys, &kExpectationKeys, &kStorageKeys,
        &kKeyedWriteKeys, &kFlowKeys, &kStreamingKeys, &kWatermarkKeys, &kWindowKeys, &kCdcKeys}) {
    for (std::string_view k : *keys) {
      EXPECT_NE(doc.find("`" + std::string(k) + "`"), std::string::npos)
          << "undocumented key " << k;
    }
  }
  for (const char* k : {"bootstrap_servers", "starting_offsets", "rows_per_batch", "total_rows",
                        "events_per_second", "out_of_orderness", "processing_time", "file_drop"}) {
    EXPECT_NE(doc.find("`" + std::string(k) + "`"), std::string::npos) << "undocumented key " << k;
  }
}

std::vector<std::string> ExamplePipelines() {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(THUND_SOURCE_DIR) + "/examples/pipelines")) {
    if (e.path().extension() == ".yaml" || e.path().extension() == ".json")
      out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ExamplePipelines, ParseValidateAndRoundTrip) {
  const auto paths = ExamplePipelines();
  ASSERT_GE(paths.size(), 3u);
  for (const auto& path : paths) {
    SCOPED_TRACE(path);
    ParseResult r = LoadPipelineFile(path);
    ASSERT_TRUE(r.ok()) << DiagText(r.diagnostics);
    EXPECT_GE(r.pipeline.flows.size(), 2u);
    Diagnostics problems = Validate(r.pipeline);
    EXPECT_TRUE(problems.empty()) << DiagText(problems);
    // Flow SQL parses with DuckDB's parser and reads only declared datasets.
    for (const Flow& f : r.pipeline.flows) {
      if (f.sql.empty()) continue;
      auto inputs = FlowInputs(r.pipeline, f);
      ASSERT_TRUE(inputs.ok()) << f.name << ": " << inputs.status().ToString();
      EXPECT_FALSE(inputs->empty() && f.sql.find("read_") == std::string::npos) << f.name;
      for (const auto& in : *inputs)
        EXPECT_NE(r.pipeline.FindDataset(in), nullptr) << f.name << " reads " << in;
    }
    ParseResult again = ParsePipelineFile(FormatPipelineFile(r.pipeline));
    ASSERT_TRUE(again.ok()) << DiagText(again.diagnostics);
    EXPECT_TRUE(again.pipeline == r.pipeline);
  }
}

}  // namespace
}  // namespace thund
