// RunOrdered and ParallelFor: the engine's parallel loops, on the engine
// thread pool (engine/exec/thread_pool.h), with the caller helping, so that
// they finish even when no pool thread is free and nest without deadlock.
//
// RunOrdered: process units 0..n-1 on up to `threads` threads (the caller and
// threads - 1 pool helpers) and consume the results in unit order on the
// calling thread. `process(i)` runs on any of them (any order, concurrently);
// `consume(i, value)` runs on the caller, strictly in order 0, 1, 2, ... At
// most `window` units are processed ahead of the consumer, which bounds
// memory. While the next unit to consume is not done, the caller processes
// another unit of the window itself rather than wait. The first error (from
// either side) stops the work after the units in progress and is returned;
// later units are not consumed.
//
// Exceptions (std::bad_alloc from a growing table, a library's exception)
// never leave a thread: they become an error naming `step` (CatchAll).
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/exec/catch_all.h"
#include "engine/exec/thread_pool.h"

namespace thund::engine::keyed {

template <typename T>
arrow::Status RunOrdered(std::string_view step, int64_t n, int64_t threads, int64_t window,
                         const std::function<arrow::Result<T>(int64_t)>& process,
                         const std::function<arrow::Status(int64_t, T)>& consume) {
  if (n <= 0) return arrow::Status::OK();
  threads = std::max<int64_t>(1, std::min(threads, n));
  window = std::max(window, threads);
  std::mutex mu;
  std::condition_variable cv;
  std::map<int64_t, arrow::Result<T>> done;
  int64_t next = 0;      // next unit to hand out
  int64_t consumed = 0;  // units consumed so far
  bool stop = false;
  auto run_one = [&](int64_t i) {
    arrow::Result<T> r = CatchAll(step, [&] { return process(i); });
    std::lock_guard<std::mutex> lock(mu);
    done.emplace(i, std::move(r));
    cv.notify_all();
  };
  auto helper = [&] {
    while (true) {
      int64_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || next >= n || next < consumed + window; });
        if (stop || next >= n) return;
        i = next++;
      }
      run_one(i);
    }
  };
  arrow::Status status;
  auto caller = [&] {
    for (int64_t i = 0; i < n && status.ok(); ++i) {
      arrow::Result<T> r = arrow::Status::UnknownError("unset");
      while (true) {
        std::unique_lock<std::mutex> lock(mu);
        auto it = done.find(i);
        if (it != done.end()) {
          r = std::move(it->second);
          done.erase(it);
          break;
        }
        if (next < n && next < consumed + window) {  // help instead of waiting
          const int64_t j = next++;
          lock.unlock();
          run_one(j);
          continue;
        }
        cv.wait(lock);
      }
      status = r.ok() ? CatchAll(step, [&] { return consume(i, std::move(r).ValueUnsafe()); })
                      : r.status();
      std::lock_guard<std::mutex> lock(mu);
      consumed = i + 1;
      if (!status.ok()) stop = true;
      cv.notify_all();
    }
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  };
  RunWithHelpers(ThreadPool::Engine(), threads - 1, helper, caller);
  return status;
}

// Runs fn(i) for i in [0, n) on up to `threads` threads (the caller and
// threads - 1 pool helpers; any order). Returns the first error; after an
// error no new index is started. Exceptions become errors naming `step`.
inline arrow::Status ParallelFor(std::string_view step, int64_t n, int64_t threads,
                                 const std::function<arrow::Status(int64_t)>& fn) {
  if (n <= 0) return arrow::Status::OK();
  threads = std::max<int64_t>(1, std::min(threads, n));
  std::mutex mu;
  int64_t next = 0;
  arrow::Status first_error;
  std::function<void()> work = [&] {
    while (true) {
      int64_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error.ok() || next >= n) return;
        i = next++;
      }
      arrow::Status st = CatchAll(step, [&] { return fn(i); });
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = st;
      }
    }
  };
  RunWithHelpers(ThreadPool::Engine(), threads - 1, work, work);
  return first_error;
}

}  // namespace thund::engine::keyed
