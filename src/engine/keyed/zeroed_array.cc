#include "engine/keyed/zeroed_array.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace thund::engine::keyed {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

void* AllocateZeroed(size_t bytes, bool huge_pages) {
  if (bytes == 0) return nullptr;
  void* p = nullptr;
  if (bytes < kHugePage) {
    p = std::calloc(1, bytes);
  } else {
    // Memory filled front to back (arenas) is faulted in by mmap itself: one
    // call instead of a trap per 4 KiB page, which halved the system time of a
    // run set's arena here. Tables probed at random ask for huge pages instead.
    const int populate = huge_pages ? 0 : MAP_POPULATE;
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | populate, -1, 0);
    if (p == MAP_FAILED) {
      p = nullptr;
    } else if (huge_pages && std::getenv("THUND_NO_THP") == nullptr) {
      (void)madvise(p, bytes, MADV_HUGEPAGE);  // advisory; ignored where THP is off
    }
  }
  if (p == nullptr) throw std::bad_alloc();  // like std::vector: out of memory is fatal
  return p;
}

void FreeZeroed(void* p, size_t bytes) {
  if (p == nullptr) return;
  if (bytes < kHugePage) {
    std::free(p);
  } else {
    munmap(p, bytes);
  }
}

}  // namespace thund::engine::keyed
