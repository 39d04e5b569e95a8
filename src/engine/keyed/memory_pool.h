// The Arrow memory pool of keyed writes.
//
// Keyed writes allocate and free a row group's worth of buffers per unit of
// work. With the wheel's default pool (mimalloc) those blocks went back to the
// kernel as transparent huge pages and came back zeroed 2 MiB at a time: on
// the 18.9M-row benchmark (bench/README.md) that cost about twice the system
// time of the same run on the system allocator (3.3 s vs 1.7 s), for the same
// user time. So keyed writes use the system pool.
#pragma once

#include <arrow/compute/exec.h>
#include <arrow/io/interfaces.h>
#include <arrow/memory_pool.h>

namespace thund::engine::keyed {

arrow::MemoryPool* KeyedMemoryPool();
// An ExecContext for arrow::compute calls (Cast, Filter) on that pool.
arrow::compute::ExecContext* KeyedExecContext();
arrow::io::IOContext KeyedIoContext();

}  // namespace thund::engine::keyed
