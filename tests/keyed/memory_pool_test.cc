// RecyclingMemoryPool: large blocks come back for reuse (same pointer), small
// ones and over-aligned ones pass through, reallocation keeps the contents,
// the cache stays within its bound, and the accounting adds up.
#include "engine/keyed/memory_pool.h"

#include <gtest/gtest.h>

#include <cstring>

namespace thund::engine::keyed {
namespace {

constexpr int64_t kBig = RecyclingMemoryPool::kMinBytes;

TEST(RecyclingMemoryPoolTest, FreedLargeBlocksAreReusedAndSmallOnesPassThrough) {
  RecyclingMemoryPool pool(arrow::system_memory_pool(), 4 * kBig);
  uint8_t* a = nullptr;
  ASSERT_TRUE(pool.Allocate(kBig + 10, &a).ok());
  EXPECT_EQ(pool.bytes_allocated(), 2 * kBig);  // rounded up to a power of two
  pool.Free(a, kBig + 10);
  EXPECT_EQ(pool.bytes_allocated(), 0);
  EXPECT_EQ(pool.cached_bytes(), 2 * kBig);
  uint8_t* b = nullptr;
  ASSERT_TRUE(pool.Allocate(2 * kBig - 5, &b).ok());  // same class
  EXPECT_EQ(b, a);
  EXPECT_EQ(pool.cached_bytes(), 0);
  pool.Free(b, 2 * kBig - 5);

  uint8_t* small = nullptr;
  ASSERT_TRUE(pool.Allocate(100, &small).ok());
  EXPECT_EQ(pool.bytes_allocated(), 100);
  pool.Free(small, 100);
  EXPECT_EQ(pool.cached_bytes(), 2 * kBig);  // small blocks are not cached
}

TEST(RecyclingMemoryPoolTest, ReallocateKeepsContentsAndTheBlockWhenItFits) {
  RecyclingMemoryPool pool(arrow::system_memory_pool(), 8 * kBig);
  uint8_t* p = nullptr;
  ASSERT_TRUE(pool.Allocate(1000, &p).ok());
  std::memset(p, 0x5a, 1000);
  ASSERT_TRUE(pool.Reallocate(1000, kBig + 1, &p).ok());  // small -> large: moves
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], 0x5a) << i;
  uint8_t* before = p;
  ASSERT_TRUE(pool.Reallocate(kBig + 1, 2 * kBig, &p).ok());  // same class: stays
  EXPECT_EQ(p, before);
  ASSERT_TRUE(pool.Reallocate(2 * kBig, 4 * kBig, &p).ok());  // next class: moves
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[i], 0x5a) << i;
  EXPECT_EQ(pool.bytes_allocated(), 4 * kBig);
  pool.Free(p, 4 * kBig);
  EXPECT_EQ(pool.bytes_allocated(), 0);
  EXPECT_GE(pool.max_memory(), 4 * kBig);
}

TEST(RecyclingMemoryPoolTest, TheCacheStaysWithinItsBound) {
  RecyclingMemoryPool pool(arrow::system_memory_pool(), 3 * kBig);
  std::vector<uint8_t*> blocks(5);
  for (auto& b : blocks) ASSERT_TRUE(pool.Allocate(kBig, &b).ok());
  for (auto* b : blocks) pool.Free(b, kBig);
  EXPECT_EQ(pool.cached_bytes(), 3 * kBig);
  pool.ReleaseUnused();
  EXPECT_EQ(pool.cached_bytes(), 0);
  uint8_t* aligned = nullptr;  // over-aligned: passes through, never cached
  ASSERT_TRUE(pool.Allocate(kBig, 4096, &aligned).ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(aligned) % 4096, 0u);
  pool.Free(aligned, kBig, 4096);
  EXPECT_EQ(pool.cached_bytes(), 0);
}

}  // namespace
}  // namespace thund::engine::keyed
