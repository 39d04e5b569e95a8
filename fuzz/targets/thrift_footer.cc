// Fuzz target: the Parquet footer joiner and its Thrift compact codec
// (engine/keyed/parquet_join.h, thrift_compact.h), on mutated real footers.
// The first byte chooses how many copies of the footer are joined (1-3) and
// how far their pages move; the rest is the footer (a serialized
// FileMetaData). Invariants: no crash; and when Arrow's own reader accepts the
// footer and ours joins it, Arrow accepts the joined footer, with the rows
// and row groups summed, and finds every part's row groups in it with their
// page offsets moved by the part's shift (CheckJoinedAsArrowReadsIt, the
// check WriteJoinedParquet makes before writing).
#include <parquet/exception.h>
#include <parquet/metadata.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/keyed/parquet_join.h"
#include "fuzz_target.h"

namespace keyed = thund::engine::keyed;
using thund::fuzz::FuzzCheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t control = data[0];
  const std::string_view footer(reinterpret_cast<const char*>(data + 1), size - 1);
  const int copies = 1 + (control & 3) % 3;
  std::vector<keyed::JoinPart> parts;
  for (int i = 0; i < copies; ++i) {
    parts.push_back(keyed::JoinPart{footer, static_cast<int64_t>(i) * (control >> 2) * 4096});
  }
  auto joined = keyed::JoinFooters(parts);
  if (!joined.ok()) return 0;
  std::shared_ptr<parquet::FileMetaData> original;
  try {
    original = parquet::FileMetaData::Make(footer.data(), static_cast<int64_t>(footer.size()));
  } catch (const std::exception&) {
    return 0;  // not a footer Arrow reads: nothing to compare with
  }
  std::shared_ptr<parquet::FileMetaData> result;
  try {
    const std::string& bytes = joined->bytes;
    result = parquet::FileMetaData::Make(bytes.data(), static_cast<int64_t>(bytes.size()));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "joined footer does not parse: %s\n", e.what());
    FuzzCheck(false, "Arrow reads the footer but not the joined one");
  }
  FuzzCheck(result->num_rows() == joined->rows && joined->rows == copies * original->num_rows(),
            "joined footer's row count is not the sum");
  // Every row group where Arrow sees it, its page offsets moved by its shift
  // (unless Arrow refuses the part's own footer when reading it whole).
  const arrow::Status seen = keyed::CheckJoinedAsArrowReadsIt(parts, *joined);
  const bool part_unreadable =
      seen.message().find("a file's footer is not one Arrow's reader reads whole") !=
      std::string::npos;
  if (!seen.ok() && !part_unreadable) std::fprintf(stderr, "%s\n", seen.ToString().c_str());
  FuzzCheck(seen.ok() || part_unreadable, "Arrow reads the joined footer otherwise than the parts");
  FuzzCheck(result->num_row_groups() == joined->row_groups &&
                joined->row_groups == copies * original->num_row_groups(),
            "joined footer's row group count is not the sum");
  return 0;
}
