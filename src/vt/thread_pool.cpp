// Thread pool: generation counter to publish a job, a countdown to join it.
#include "vt/thread_pool.h"

#include <immintrin.h>

#include <cstdlib>

namespace vt {

namespace {
constexpr int kSpinIterations = 20000;
}

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::thread::hardware_concurrency());
  if (n_threads <= 0) n_threads = 1;
  n_threads_ = n_threads;
  for (int i = 1; i < n_threads_; ++i) threads_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  stop_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void ThreadPool::run_impl(Call call, void* ctx) {
  if (n_threads_ == 1) {
    call(ctx, 0, 1);
    return;
  }
  call_ = call;
  ctx_ = ctx;
  pending_.store(n_threads_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  call(ctx, 0, n_threads_);
  // Spin briefly (the common case: workers finish within microseconds), then yield so a
  // descheduled worker gets the core when the machine is oversubscribed.
  for (int spin = 0; pending_.load(std::memory_order_acquire) != 0; ++spin) {
    if (spin < kSpinIterations / 4)
      _mm_pause();
    else
      std::this_thread::yield();
  }
}

void ThreadPool::worker(int index) {
  uint32_t seen = 0;
  for (;;) {
    uint32_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < kSpinIterations; ++spin) {
      if (spin < kSpinIterations / 2)
        _mm_pause();
      else
        std::this_thread::yield();
      g = generation_.load(std::memory_order_acquire);
    }
    if (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      continue;
    }
    seen = g;
    if (stop_.load(std::memory_order_acquire)) return;
    call_(ctx_, index, n_threads_);
    pending_.fetch_sub(1, std::memory_order_acq_rel);
  }
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool([] {
    const char* env = std::getenv("VT_NUM_THREADS");
    return env ? std::atoi(env) : 0;
  }());
  return pool;
}

}  // namespace vt
