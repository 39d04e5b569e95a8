// CatchAll: runs work that may throw (a library's exception, std::bad_alloc
// from a growing table) and turns what it throws into a Status naming the
// step, so that no exception ever leaves a worker thread (which would end
// the process in std::terminate).
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <exception>
#include <new>
#include <string_view>
#include <type_traits>

namespace thund::engine {

// `fn()` returns arrow::Status or arrow::Result<T>; so does CatchAll.
//   std::bad_alloc  -> OutOfMemory("out of memory while <step>; ...")
//   std::exception  -> UnknownError("<step>: <what()>")
//   anything else   -> UnknownError("<step>: an unknown exception")
template <typename F>
auto CatchAll(std::string_view step, F&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const std::bad_alloc&) {
    return arrow::Status::OutOfMemory(
        "out of memory while ", step,
        "; free memory, lower --threads / keyed_write.threads, or use key_match=hash for long "
        "keys");
  } catch (const std::exception& e) {
    return arrow::Status::UnknownError(step, ": ", e.what());
  } catch (...) {
    return arrow::Status::UnknownError(step, ": an unknown exception");
  }
}

}  // namespace thund::engine
