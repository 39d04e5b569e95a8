// The engine thread pool (engine/exec/thread_pool.h) and the parallel loops
// on it (engine/keyed/ordered_parallel.h): every index once, consumption in
// order, the first error returned, exceptions turned into errors naming the
// step, and no deadlock when tasks wait for nested tasks or the pool's
// threads are all blocked.
#include "engine/exec/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "engine/keyed/ordered_parallel.h"

namespace thund::engine {
namespace {

using keyed::ParallelFor;
using keyed::RunOrdered;

// Runs `fn`; when it has not finished after 60 s (a deadlock), ends the test
// binary with a message instead of hanging until ctest's timeout.
void WithinAMinute(const std::function<void()>& fn) {
  auto promise = std::make_shared<std::promise<void>>();
  std::future<void> done = promise->get_future();
  std::thread([fn, promise] {
    fn();
    promise->set_value();
  }).detach();
  if (done.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
    std::fprintf(stderr, "deadlock: the work did not finish within 60 s\n");
    std::abort();
  }
}

TEST(ThreadPoolTest, SpawnedTasksAllRunAndTheDestructorRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    ThreadPool pool(3);
    EXPECT_EQ(pool.size(), 3);
    for (int i = 0; i < 200; ++i) pool.Spawn([&] { ++ran; });
    pool.Spawn([] { throw std::runtime_error("a task that throws is dropped, not fatal"); });
  }
  EXPECT_EQ(ran.load(), 200);
  EXPECT_GE(ThreadPool::EngineThreads(), 1);
  EXPECT_EQ(ThreadPool::Engine().size(), ThreadPool::EngineThreads());
}

TEST(ThreadPoolTest, TheCallerFinishesAloneWhenEveryPoolThreadIsBlocked) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  ThreadPool pool(1);  // declared last: joined before what its task uses goes
  pool.Spawn([&] {  // occupies the pool's only thread until released
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
  });
  std::atomic<int> next{0}, done{0};
  std::function<void()> work = [&] {
    while (next.fetch_add(1) < 1000) ++done;
  };
  WithinAMinute([&] { RunWithHelpers(pool, 4, work, work); });
  EXPECT_EQ(done.load(), 1000);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  // The helpers that start now find the work closed and do nothing.
}

TEST(ParallelForTest, EveryIndexOnceAndNestedLoopsDoNotDeadlock) {
  WithinAMinute([] {
    std::vector<std::atomic<int>> hits(300);
    std::atomic<int> inner{0};
    const arrow::Status st = ParallelFor("outer", 300, 8, [&](int64_t i) -> arrow::Status {
      ++hits[static_cast<size_t>(i)];
      // Each task waits for a nested loop, which waits for another: with more
      // tasks than pool threads this deadlocks unless callers help.
      return ParallelFor("inner", 4, 4, [&](int64_t) {
        return ParallelFor("innermost", 3, 3, [&](int64_t) {
          ++inner;
          return arrow::Status::OK();
        });
      });
    });
    ASSERT_TRUE(st.ok()) << st.ToString();
    for (const auto& h : hits) EXPECT_EQ(h.load(), 1);
    EXPECT_EQ(inner.load(), 300 * 4 * 3);
  });
}

TEST(ParallelForTest, TheFirstErrorStopsNewWorkAndExceptionsNameTheStep) {
  std::atomic<int> started{0};
  arrow::Status st = ParallelFor("failing step", 10000, 4, [&](int64_t i) {
    ++started;
    if (i == 10) return arrow::Status::IOError("disk gone at ", i);
    return arrow::Status::OK();
  });
  EXPECT_TRUE(st.IsIOError()) << st.ToString();
  EXPECT_LT(started.load(), 10000);

  st = ParallelFor("building the row index", 50, 4, [&](int64_t i) -> arrow::Status {
    if (i == 7) throw std::bad_alloc();
    return arrow::Status::OK();
  });
  EXPECT_TRUE(st.IsOutOfMemory()) << st.ToString();
  EXPECT_NE(st.message().find("out of memory while building the row index"), std::string::npos)
      << st.ToString();

  st = ParallelFor("decoding", 5, 2, [&](int64_t) -> arrow::Status {
    throw std::runtime_error("a library said no");
  });
  EXPECT_TRUE(st.IsUnknownError()) << st.ToString();
  EXPECT_NE(st.message().find("decoding: a library said no"), std::string::npos) << st.ToString();
}

TEST(RunOrderedTest, ConsumesInOrderWhateverOrderUnitsFinishIn) {
  WithinAMinute([] {
    std::vector<int64_t> order;
    std::atomic<int> in_flight{0}, max_in_flight{0};
    const arrow::Status st = RunOrdered<int64_t>(
        "ordered", 500, 4, 8,
        [&](int64_t i) -> arrow::Result<int64_t> {
          const int now = ++in_flight;
          int seen = max_in_flight.load();
          while (now > seen && !max_in_flight.compare_exchange_weak(seen, now)) {
          }
          std::mt19937 rng(static_cast<uint32_t>(i));
          std::this_thread::sleep_for(std::chrono::microseconds(rng() % 300));
          --in_flight;
          return i * i;
        },
        [&](int64_t i, int64_t v) {
          EXPECT_EQ(v, i * i);
          order.push_back(i);
          return arrow::Status::OK();
        });
    ASSERT_TRUE(st.ok()) << st.ToString();
    ASSERT_EQ(order.size(), 500u);
    for (int64_t i = 0; i < 500; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
    EXPECT_LE(max_in_flight.load(), 4);
  });
}

TEST(RunOrderedTest, ErrorsFromEitherSideStopItAndLaterUnitsAreNotConsumed) {
  std::vector<int64_t> consumed;
  arrow::Status st = RunOrdered<int64_t>(
      "reading units", 100, 3, 6,
      [](int64_t i) -> arrow::Result<int64_t> {
        if (i == 40) return arrow::Status::Invalid("unit ", i, " is corrupt");
        return i;
      },
      [&](int64_t i, int64_t) {
        consumed.push_back(i);
        return arrow::Status::OK();
      });
  EXPECT_TRUE(st.IsInvalid()) << st.ToString();
  EXPECT_EQ(consumed.size(), 40u);

  consumed.clear();
  st = RunOrdered<int64_t>(
      "writing units", 100, 3, 6, [](int64_t i) -> arrow::Result<int64_t> { return i; },
      [&](int64_t i, int64_t) -> arrow::Status {
        if (i == 5) throw std::bad_alloc();
        consumed.push_back(i);
        return arrow::Status::OK();
      });
  EXPECT_TRUE(st.IsOutOfMemory()) << st.ToString();
  EXPECT_NE(st.message().find("out of memory while writing units"), std::string::npos);
  EXPECT_EQ(consumed.size(), 5u);

  st = RunOrdered<int64_t>(
      "processing", 20, 2, 2,
      [](int64_t i) -> arrow::Result<int64_t> {
        if (i == 3) throw std::bad_alloc();
        return i;
      },
      [](int64_t, int64_t) { return arrow::Status::OK(); });
  EXPECT_TRUE(st.IsOutOfMemory()) << st.ToString();
}

TEST(RunOrderedTest, NestedInsideParallelForOnABusyPoolFinishes) {
  WithinAMinute([] {
    std::atomic<int64_t> sum{0};
    const arrow::Status st = ParallelFor("outer", 16, 16, [&](int64_t) {
      return RunOrdered<int64_t>(
          "inner", 50, 4, 4, [](int64_t i) -> arrow::Result<int64_t> { return i; },
          [&](int64_t, int64_t v) {
            sum += v;
            return arrow::Status::OK();
          });
    });
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(sum.load(), 16 * (49 * 50 / 2));
  });
}

}  // namespace
}  // namespace thund::engine
