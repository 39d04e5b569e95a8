#include "engine/keyed/memory_pool.h"

namespace thund::engine::keyed {

arrow::MemoryPool* KeyedMemoryPool() { return arrow::system_memory_pool(); }

arrow::compute::ExecContext* KeyedExecContext() {
  static arrow::compute::ExecContext context(KeyedMemoryPool());  // stateless: thread-safe
  return &context;
}

arrow::io::IOContext KeyedIoContext() { return arrow::io::IOContext(KeyedMemoryPool()); }

}  // namespace thund::engine::keyed
