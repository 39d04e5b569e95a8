// Arrow >= 21 registers most compute kernels (filter, or, invert, ...) only
// when arrow::compute::Initialize() has been called. Call this before using
// arrow::compute; it is cheap after the first call. Thread-safe.
#pragma once

#include <arrow/status.h>

namespace thund::engine::batch {

arrow::Status EnsureComputeInitialized();

}  // namespace thund::engine::batch
