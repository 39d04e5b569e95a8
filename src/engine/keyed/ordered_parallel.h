// RunOrdered: process units 0..n-1 on `threads` worker threads and consume the
// results in unit order on the calling thread.
//
// `process(i)` runs on a worker (any order, concurrently); `consume(i, value)`
// runs on the caller, strictly in order 0, 1, 2, ... At most `window` units are
// processed ahead of the consumer, which bounds memory. The first error (from
// either side) stops the workers after their current unit and is returned;
// later units are not consumed.
#pragma once

#include <arrow/result.h>
#include <arrow/status.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace thund::engine::keyed {

template <typename T>
arrow::Status RunOrdered(int64_t n, int64_t threads, int64_t window,
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

  auto worker = [&] {
    while (true) {
      int64_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return stop || next >= n || next < consumed + window; });
        if (stop || next >= n) return;
        i = next++;
      }
      arrow::Result<T> r = process(i);
      std::lock_guard<std::mutex> lock(mu);
      done.emplace(i, std::move(r));
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t) pool.emplace_back(worker);

  arrow::Status status;
  for (int64_t i = 0; i < n && status.ok(); ++i) {
    arrow::Result<T> r = arrow::Status::UnknownError("unset");
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done.count(i) > 0; });
      auto it = done.find(i);
      r = std::move(it->second);
      done.erase(it);
    }
    status = r.ok() ? consume(i, std::move(r).ValueUnsafe()) : r.status();
    std::lock_guard<std::mutex> lock(mu);
    consumed = i + 1;
    if (!status.ok()) stop = true;
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    cv.notify_all();
  }
  for (auto& t : pool) t.join();
  return status;
}

}  // namespace thund::engine::keyed

namespace thund::engine::keyed {

// Runs fn(i) for i in [0, n) on up to `threads` threads (any order). Returns the
// first error; after an error no new index is started.
inline arrow::Status ParallelFor(int64_t n, int64_t threads,
                                 const std::function<arrow::Status(int64_t)>& fn) {
  if (n <= 0) return arrow::Status::OK();
  threads = std::max<int64_t>(1, std::min(threads, n));
  std::mutex mu;
  int64_t next = 0;
  arrow::Status first_error;
  auto worker = [&] {
    while (true) {
      int64_t i;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!first_error.ok() || next >= n) return;
        i = next++;
      }
      arrow::Status st = fn(i);
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(mu);
        if (first_error.ok()) first_error = st;
      }
    }
  };
  std::vector<std::thread> pool;
  for (int64_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return first_error;
}

}  // namespace thund::engine::keyed
