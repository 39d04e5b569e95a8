#include "engine/keyed/key_hash.h"

// The xxHash bundled with Arrow, compiled inline here (its symbols are not
// exported by libarrow).
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <arrow/vendored/xxhash/xxhash.h>

namespace thund::engine::keyed {

Hash128 HashBytes128(const void* data, size_t size) {
  XXH128_hash_t h = XXH3_128bits(data, size);
  return Hash128{h.low64, h.high64};
}

}  // namespace thund::engine::keyed
