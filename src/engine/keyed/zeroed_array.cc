#include "engine/keyed/zeroed_array.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <new>

namespace thund::engine::keyed {
namespace {

constexpr size_t kBigBlock = size_t{2} << 20;
constexpr size_t kLine = 64;  // tables probe a cache line at a time: never straddle two

}  // namespace

void* AllocateZeroed(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  if (bytes < kBigBlock) {
    const size_t rounded = (bytes + kLine - 1) / kLine * kLine;
    p = std::aligned_alloc(kLine, rounded);
    if (p != nullptr) std::memset(p, 0, rounded);
  } else {
    // Faulted in, writable, by mmap itself: one call instead of a trap per
    // 4 KiB page, and no page is ever mapped to the shared zero page first. (A
    // table read before it is written maps the zero page, and the first write
    // then replaces it and flushes every CPU's TLB: on this 2-vCPU VM those
    // IPIs were ~17% of a run's samples.) Huge pages are not asked for: their
    // first use in a VM can cost seconds per GiB, for a ~2% faster probe.
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1,
             0);
    if (p == MAP_FAILED) p = nullptr;
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
