// The engine's monotonic clock for durations (latency, back-off, progress).
// Never for event time or anything persisted: steady_clock's epoch is
// arbitrary and differs between processes.
#pragma once

#include <chrono>
#include <cstdint>

namespace thund {

inline int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace thund
