#include "engine/keyed/zeroed_array.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <sstream>
#include <string>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older kernels answer EINVAL
#endif

namespace thund::engine::keyed {
namespace {

constexpr size_t kBigBlock = size_t{2} << 20;
constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kLine = 64;  // tables probe a cache line at a time: never straddle two

std::string ReadSmallFile(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether huge pages may be asked for at all (THP "always" or "madvise").
bool HugePagesEnabled() {
  static const bool enabled = [] {
    if (sysconf(_SC_PAGESIZE) != 4096) return false;  // buddyinfo orders assume 4 KiB
    const std::string mode = ReadSmallFile("/sys/kernel/mm/transparent_hugepage/enabled");
    return mode.find("[always]") != std::string::npos ||
           mode.find("[madvise]") != std::string::npos;
  }();
  return enabled;
}

// Huge-page bytes being faulted in by AllocateZeroed calls right now, so that
// blocks allocated at once (a table's shards) share what is free; the mutex
// makes reading buddyinfo and claiming one step.
std::mutex g_claim_mu;
int64_t g_claimed_huge = 0;  // guarded by g_claim_mu

void* MapSmall(size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                 -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

}  // namespace

void* MapHugePrefix(size_t bytes, size_t huge_bytes) {
  const size_t span = bytes + kHugePage;
  void* q = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (q == MAP_FAILED) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(q);
  const uintptr_t aligned = (start + kHugePage - 1) & ~uintptr_t{kHugePage - 1};
  // Only [aligned, aligned + bytes) stays mapped (to the end of its last
  // page), so FreeZeroed's munmap fits.
  if (aligned > start) munmap(q, aligned - start);
  const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t end = (aligned + bytes + page - 1) & ~(page - 1);
  if (start + span > end) munmap(reinterpret_cast<void*>(end), start + span - end);
  void* p = reinterpret_cast<void*>(aligned);
  // A refusal leaves small pages: still correct.
  if (huge_bytes > 0) madvise(p, std::min(huge_bytes, bytes), MADV_HUGEPAGE);
  // Written (not merely read) up front, as MAP_POPULATE does for small pages.
  if (madvise(p, bytes, MADV_POPULATE_WRITE) != 0) {
    if (errno != EINVAL) {  // out of memory: say so now, not at a later fault
      munmap(p, bytes);
      return nullptr;
    }
    std::memset(p, 0, bytes);  // a kernel before 5.14
  }
  return p;
}

size_t HugePrefixBytes(size_t bytes, int64_t free_huge, int64_t claimed) {
  const int64_t left = std::max<int64_t>(0, free_huge - claimed);
  size_t prefix = std::min(bytes, static_cast<size_t>(left / 2));
  prefix &= ~(kHugePage - 1);
  return prefix >= bytes / 8 && prefix > 0 ? prefix : 0;
}

int64_t FreeHugePageBytes(std::string_view buddyinfo) {
  // Lines: "Node 0, zone   Normal  n0 n1 ... n10": n_k free blocks of 2^k pages.
  constexpr int kHugeOrder = 9;  // 2^9 pages of 4 KiB = 2 MiB
  int64_t bytes = 0;
  std::istringstream lines{std::string(buddyinfo)};
  std::string line;
  while (std::getline(lines, line)) {
    const size_t zone = line.find("zone");
    if (zone == std::string::npos) continue;
    std::istringstream fields(line.substr(zone + 4));
    std::string name;
    fields >> name;
    int64_t count = 0;
    for (int order = 0; fields >> count; ++order) {
      if (order >= kHugeOrder) bytes += count * (int64_t{4096} << order);
    }
  }
  return bytes;
}

namespace {
std::atomic<int64_t> g_fail_after{0};  // FailZeroedAllocationAfter's countdown (0: off)
}  // namespace

void FailZeroedAllocationAfter(int64_t n) { g_fail_after.store(n); }

void* AllocateZeroed(size_t bytes, PageSize pages) {
  if (bytes == 0) return nullptr;
  if (g_fail_after.load(std::memory_order_relaxed) > 0 && g_fail_after.fetch_sub(1) == 1) {
    throw std::bad_alloc();  // the test hook: as if out of memory
  }
  void* p = nullptr;
  if (bytes < kBigBlock) {
    const size_t rounded = (bytes + kLine - 1) / kLine * kLine;
    p = std::aligned_alloc(kLine, rounded);
    if (p != nullptr) std::memset(p, 0, rounded);
  } else {
    // Faulted in, writable, up front: one call instead of a trap per page, and
    // no page is ever mapped to the shared zero page first. (A table read
    // before it is written maps the zero page, and the first write then
    // replaces it and flushes every CPU's TLB: on the 2-vCPU benchmark VM
    // those IPIs were ~17% of a run's samples.)
    //
    // kHugeIfFree: huge pages only as far as the kernel has free 2 MiB
    // blocks to hand out without compacting memory (which costs 1.2 to 2.4 s
    // per GiB on the benchmark VM); the rest of the block on small pages.
    size_t huge = pages == PageSize::kHuge ? bytes : 0;
    int64_t claimed = 0;
    if (pages == PageSize::kHugeIfFree && HugePagesEnabled()) {
      std::lock_guard<std::mutex> lock(g_claim_mu);
      huge = HugePrefixBytes(bytes, FreeHugePageBytes(ReadSmallFile("/proc/buddyinfo")),
                             g_claimed_huge);
      claimed = static_cast<int64_t>(huge);
      g_claimed_huge += claimed;
    }
    p = huge == 0 ? MapSmall(bytes) : MapHugePrefix(bytes, huge);
    if (claimed > 0) {
      std::lock_guard<std::mutex> lock(g_claim_mu);
      g_claimed_huge -= claimed;
    }
  }
  if (p == nullptr) throw std::bad_alloc();  // like std::vector: out of memory is fatal
  return p;
}

void FreeZeroed(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kBigBlock) {
    std::free(p);
  } else {
    munmap(p, bytes);
  }
}

}  // namespace thund::engine::keyed
