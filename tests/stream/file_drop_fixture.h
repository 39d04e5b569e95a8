// Shared by the file-drop source tests: writing files, and a fixture that
// makes a file-drop source over its temporary directory.
#pragma once

#include <arrow/filesystem/filesystem.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "engine/stream/stream_source.h"
#include "engine/table_compare.h"

namespace thund::engine::testing {

// Writes `text` to `path` (parents created, file replaced).
inline void WriteText(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

class FileDropFixture : public ::testing::Test {
 protected:
  // A source reading `format` files from `path` (default: the temporary
  // directory) into the streaming table "events"; `file_drop` false reads the
  // path once, as a batch read would.
  arrow::Result<std::unique_ptr<stream::StreamSource>> Make(
      std::string format, StringMap options = {}, std::string path = "", bool file_drop = true,
      std::shared_ptr<arrow::fs::FileSystem> filesystem = nullptr) {
    FileSource spec{path.empty() ? dir_.path().string() : path, ParseFileFormat(format), file_drop,
                    std::move(options)};
    flow_ = Flow::FromSource("ingest", "events", spec);
    stream::StreamSourceContext ctx;
    ctx.flow = &flow_;
    ctx.target = &target_;
    ctx.filesystem = std::move(filesystem);
    return stream::MakeStreamSource(*flow_.source, ctx);
  }

  TempDir dir_;
  Flow flow_;
  Dataset target_ = Dataset::StreamingTable("events");
};

}  // namespace thund::engine::testing
