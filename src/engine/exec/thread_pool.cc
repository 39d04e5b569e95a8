#include "engine/exec/thread_pool.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace thund::engine {

ThreadPool::ThreadPool(int64_t threads) {
  threads = std::max<int64_t>(1, threads);
  for (int64_t t = 0; t < threads; ++t) threads_.emplace_back([this] { Loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
}

int64_t ThreadPool::EngineThreads() {
  if (const char* env = std::getenv("THUND_ENGINE_THREADS")) {
    char* end = nullptr;
    const long long v = std::strtoll(env, &end, 10);
    if (end != env && *end == '\0' && v > 0 && v <= 1024) return v;
  }
  const int64_t cores = std::max<int64_t>(1, std::thread::hardware_concurrency());
  return std::max<int64_t>(1, cores - 1);
}

ThreadPool& ThreadPool::Engine() {
  // Never destroyed: pool threads may still be finishing a helper task that
  // found its work closed while static destructors run.
  static ThreadPool* pool = new ThreadPool(EngineThreads());
  return *pool;
}

void ThreadPool::Spawn(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

void ThreadPool::Loop() {
  while (true) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return closing_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // closing and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      task();
    } catch (...) {
      // Spawn's contract: tasks report their own errors; never terminate.
    }
  }
}

namespace {

// What a caller and its helpers share; helpers hold it by shared_ptr, so a
// helper that starts after the caller returned finds it closed.
struct HelpState {
  std::mutex mu;
  std::condition_variable cv;
  bool closed = false;
  int64_t running = 0;
  const std::function<void()>* work = nullptr;  // valid while !closed or running > 0
};

}  // namespace

void RunWithHelpers(ThreadPool& pool, int64_t helpers, const std::function<void()>& helper_work,
                    const std::function<void()>& caller_work) {
  auto state = std::make_shared<HelpState>();
  state->work = &helper_work;
  for (int64_t h = 0; h < helpers; ++h) {
    pool.Spawn([state] {
      {
        std::lock_guard<std::mutex> lock(state->mu);
        if (state->closed) return;
        ++state->running;
      }
      (*state->work)();
      std::lock_guard<std::mutex> lock(state->mu);
      if (--state->running == 0) state->cv.notify_all();
    });
  }
  caller_work();
  std::unique_lock<std::mutex> lock(state->mu);
  state->closed = true;
  state->cv.wait(lock, [&] { return state->running == 0; });
}

}  // namespace thund::engine
