// ThreadPool: the one pool of threads for the engine's own parallel work
// (keyed writes' reads, filters, key loading and file encoding; the batch
// runner's Parquet part writers). Nothing in src/engine starts a std::thread
// per call; it asks this pool for help instead.
//
// Contract: helping, so that no wait can deadlock.
//   * Pool threads only ever *help*. Every piece of work that a caller waits
//     for can also be done by the caller itself: RunWithHelpers runs the
//     caller's share on the calling thread, and the helpers' share only when a
//     pool thread is free. If every pool thread is busy (or blocked in a task
//     that itself waits), the caller still finishes the work alone. A task
//     that waits for a nested task (a ParallelFor inside a ParallelFor) runs
//     the nested work itself, so nesting never deadlocks.
//   * A helper that starts after its caller finished does nothing (the work is
//     closed); the caller waits only for helpers that are running its work.
//   * Spawn's tasks must not wait for other Spawn'd tasks to start.
//
// Sizing rule (documented in docs/keyed-writes.md, "Threads"): the engine
// pool has cores - 1 threads (at least 1), so that with the calling thread a
// parallel step keeps every core busy and no more. Arrow is called with
// use_threads=false by the engine's readers (its CPU pool stays idle during
// engine steps), and a DuckDB session's threads run while the engine step
// that drives it waits for its result, so the three do not stack up.
// THUND_ENGINE_THREADS (a positive integer) overrides the size.
//
// Thread-safety: every member is thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace thund::engine {

class ThreadPool {
 public:
  // A pool of `threads` (>= 1) threads, started now.
  explicit ThreadPool(int64_t threads);
  // Runs the tasks still queued, then joins the threads.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // The engine's pool, made on first use (EngineThreads() threads); lives
  // until the process exits.
  static ThreadPool& Engine();
  // The engine pool's size by the rule above.
  static int64_t EngineThreads();

  // Runs `task` on a pool thread, in FIFO order with other tasks. A task that
  // throws is caught (and dropped): wrap work that can fail (RunWithHelpers
  // does).
  void Spawn(std::function<void()> task);

  int64_t size() const { return static_cast<int64_t>(threads_.size()); }

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool closing_ = false;
  std::vector<std::thread> threads_;
};

// Runs `caller_work` on the calling thread and `helper_work` on up to
// `helpers` threads of `pool` (as they become free), and returns once
// caller_work returned and every helper that started has returned.
// REQUIRES: caller_work completes the whole job even when no helper ever
// runs, and once it returns, helper_work returns promptly (it finds nothing
// left to do). Both must not throw (wrap them: see CatchAll).
void RunWithHelpers(ThreadPool& pool, int64_t helpers, const std::function<void()>& helper_work,
                    const std::function<void()>& caller_work);

}  // namespace thund::engine
