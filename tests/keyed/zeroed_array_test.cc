// ZeroedArray's allocation: zero-filled, aligned memory on either page size,
// and the count of free huge-page blocks it decides with.
#include "engine/keyed/zeroed_array.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace thund::engine::keyed {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

// A /proc/buddyinfo line for `zone` with these free-block counts (order 0 up).
std::string BuddyLine(int node, const std::string& zone, const std::vector<int64_t>& counts) {
  std::string line = "Node " + std::to_string(node) + ", zone " + zone;
  for (int64_t c : counts) line += "  " + std::to_string(c);
  return line + "\n";
}

// What those counts hold in blocks of 2 MiB or more: 4 KiB << order per block.
int64_t HugeBytes(const std::vector<int64_t>& counts) {
  int64_t bytes = 0;
  for (size_t order = 9; order < counts.size(); ++order)
    bytes += counts[order] * (int64_t{4096} << order);
  return bytes;
}

TEST(FreeHugePageBytesTest, CountsBlocksOfOrderNineAndUpInEveryZone) {
  const std::vector<int64_t> dma = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 3};
  const std::vector<int64_t> dma32 = {44, 192, 183, 147, 128, 90, 65, 48, 33, 43, 707};
  const std::vector<int64_t> normal = {7471, 20116, 12405, 11846, 920, 13609,
                                       4199, 1453,  340,   241,   447};
  const std::string text =
      BuddyLine(0, "DMA", dma) + BuddyLine(0, "DMA32", dma32) + BuddyLine(0, "Normal", normal);
  EXPECT_EQ(FreeHugePageBytes(text), HugeBytes(dma) + HugeBytes(dma32) + HugeBytes(normal));
  // 447 blocks of 4 MiB and 241 of 2 MiB in Normal alone:
  EXPECT_EQ(HugeBytes(normal), (447 * 4 + 241 * 2) * static_cast<int64_t>(kMiB));
}

TEST(FreeHugePageBytesTest, EmptyOrForeignTextCountsNothing) {
  EXPECT_EQ(FreeHugePageBytes(""), 0);
  EXPECT_EQ(FreeHugePageBytes("no such file\n"), 0);
  // Too few orders to reach 2 MiB blocks (a kernel with smaller MAX_ORDER).
  EXPECT_EQ(FreeHugePageBytes(BuddyLine(0, "Normal", {5, 4, 3, 2, 1, 1, 1, 1, 1})), 0);
}

// Every byte is zero, the block is aligned, and all of it can be written.
void ExpectUsable(void* p, size_t bytes, size_t alignment) {
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
  const auto* words = static_cast<const uint64_t*>(p);
  uint64_t any = 0;
  for (size_t i = 0; i < bytes / 8; ++i) any |= words[i];
  EXPECT_EQ(any, 0u);
  auto* bytes_p = static_cast<unsigned char*>(p);
  for (size_t i = 0; i < bytes; i += 4096) bytes_p[i] = static_cast<unsigned char>(i >> 12);
  bytes_p[bytes - 1] = 0xAB;
  for (size_t i = 0; i < bytes; i += 4096) {
    ASSERT_EQ(bytes_p[i], static_cast<unsigned char>(i >> 12)) << "offset " << i;
  }
  EXPECT_EQ(bytes_p[bytes - 1], 0xAB);
}

TEST(HugePrefixBytesTest, HalfOfWhatIsFreeInWholeHugePagesAndNothingWhenTooLittle) {
  const size_t gib = 1024 * kMiB;
  // Plenty free: the whole block.
  EXPECT_EQ(HugePrefixBytes(gib, 8 * static_cast<int64_t>(gib), 0), gib);
  // Half of what is free, rounded down to whole 2 MiB pages.
  EXPECT_EQ(HugePrefixBytes(gib, static_cast<int64_t>(gib + 5 * kMiB), 0), 512 * kMiB + 2 * kMiB);
  // What other blocks are claiming right now is not counted as free.
  EXPECT_EQ(HugePrefixBytes(gib, static_cast<int64_t>(gib), static_cast<int64_t>(gib / 2)),
            256 * kMiB);
  // Under 1/8 of the block, or claims above what is free: small pages only.
  EXPECT_EQ(HugePrefixBytes(gib, static_cast<int64_t>(gib / 8), 0), 0u);
  EXPECT_EQ(HugePrefixBytes(gib, static_cast<int64_t>(gib), 2 * static_cast<int64_t>(gib)), 0u);
  EXPECT_EQ(HugePrefixBytes(gib, 0, 0), 0u);
  EXPECT_EQ(HugePrefixBytes(3 * kMiB, static_cast<int64_t>(3 * kMiB), 0), 0u);  // < one page
}

TEST(AllocateZeroedTest, ABlockPartlyOnHugePagesIsZeroedAlignedAndWritable) {
  for (size_t bytes : {8 * kMiB, 10 * kMiB + 4096 + 64}) {
    for (size_t huge : {2 * kMiB, 4 * kMiB, 8 * kMiB}) {
      SCOPED_TRACE(testing::Message() << bytes << " bytes, " << huge << " on huge pages");
      void* p = MapHugePrefix(bytes, huge);
      ASSERT_NE(p, nullptr);
      ExpectUsable(p, bytes, 2 * kMiB);
      FreeZeroed(p, bytes);
    }
  }
}

TEST(AllocateZeroedTest, BigBlocksOnEveryPageSizeAreZeroedAlignedAndWritable) {
  // A whole number of huge pages, and one that ends part way into one.
  for (size_t bytes : {4 * kMiB, 6 * kMiB + 4096 + 64}) {
    for (PageSize pages : {PageSize::kSmall, PageSize::kHuge, PageSize::kHugeIfFree}) {
      SCOPED_TRACE(testing::Message() << bytes << " bytes, page size " << static_cast<int>(pages));
      void* p = AllocateZeroed(bytes, pages);
      ExpectUsable(p, bytes, pages == PageSize::kHuge ? 2 * kMiB : 64);
      FreeZeroed(p, bytes);
    }
  }
}

// Freeing gives back the whole mapping, also for a size that is not a whole
// number of pages. (A leak would be up to 2 MiB per block; the margin is for
// the heap growing under this test's own reads of /proc/self/maps.)
int64_t MappedBytes() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  uint64_t bytes = 0;
  while (std::getline(maps, line)) {  // "start-end perms ...", addresses in hex
    const size_t dash = line.find('-'), space = line.find(' ');
    bytes += std::stoull(line.substr(dash + 1, space - dash - 1), nullptr, 16) -
             std::stoull(line.substr(0, dash), nullptr, 16);
  }
  return static_cast<int64_t>(bytes);
}

TEST(AllocateZeroedTest, FreeingUnmapsTheWholeBlock) {
  for (PageSize pages : {PageSize::kSmall, PageSize::kHuge}) {
    const size_t bytes = 6 * kMiB + 4096 + 64;
    MappedBytes();  // the first read may grow the heap
    const int64_t before = MappedBytes();
    for (int i = 0; i < 8; ++i) FreeZeroed(AllocateZeroed(bytes, pages), bytes);
    EXPECT_LT(MappedBytes() - before, static_cast<int64_t>(kMiB))
        << "page size " << static_cast<int>(pages);
  }
}

TEST(AllocateZeroedTest, SmallBlocksAreZeroedAndLineAligned) {
  for (size_t bytes : {size_t{8}, size_t{100}, size_t{4096}, kMiB + 8}) {
    void* p = AllocateZeroed(bytes);
    ExpectUsable(p, bytes, 64);
    FreeZeroed(p, bytes);
  }
  EXPECT_EQ(AllocateZeroed(0), nullptr);
}

TEST(AllocateZeroedTest, ZeroedArrayHoldsItsElements) {
  ZeroedArray<uint64_t> a(3 * kMiB / 8 + 5);
  ASSERT_TRUE(a.ok());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i], 0u);
  for (size_t i = 0; i < a.size(); ++i) a[i] = i * 7;
  ZeroedArray<uint64_t> b = std::move(a);
  EXPECT_EQ(a.size(), 0u);
  for (size_t i = 0; i < b.size(); ++i) ASSERT_EQ(b[i], i * 7);
}

}  // namespace
}  // namespace thund::engine::keyed
