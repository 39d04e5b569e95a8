#include "engine/batch/compute_init.h"

#include <mutex>

#include <arrow/compute/initialize.h>

namespace thund::engine::batch {

arrow::Status EnsureComputeInitialized() {
  static std::once_flag once;
  static arrow::Status status;
  std::call_once(once, [] { status = arrow::compute::Initialize(); });
  return status;
}

}  // namespace thund::engine::batch
