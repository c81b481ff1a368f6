// The one persistent thread pool every kernel runs on. Workers spin briefly between
// jobs (a decode step issues hundreds of small jobs) and then sleep on a futex.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>

namespace vt {

class ThreadPool {
 public:
  // n_threads <= 0: one per hardware thread (or VT_NUM_THREADS, read once by global()).
  explicit ThreadPool(int n_threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return n_threads_; }

  // Runs fn(thread_index, n_threads) once on every thread; the caller is thread 0.
  // Returns when all are done. Not re-entrant.
  template <class F>
  void run(F&& fn) {
    using Fn = std::remove_reference_t<F>;
    run_impl([](void* ctx, int i, int n) { (*static_cast<Fn*>(ctx))(i, n); },
             const_cast<void*>(static_cast<const void*>(&fn)));
  }

  // Splits [0, n) into contiguous chunks, one per thread: fn(begin, end).
  // The split depends only on n and the thread count.
  template <class F>
  void parallel_for(int64_t n, F&& fn) {
    if (n <= 0) return;
    if (n_threads_ == 1 || n == 1) {
      fn(int64_t{0}, n);
      return;
    }
    run([&](int i, int nt) {
      int64_t begin = n * i / nt, end = n * (i + 1) / nt;
      if (begin < end) fn(begin, end);
    });
  }

  static ThreadPool& global();

 private:
  using Call = void (*)(void*, int, int);
  void run_impl(Call call, void* ctx);
  void worker(int index);

  int n_threads_;
  std::vector<std::thread> threads_;
  Call call_ = nullptr;
  void* ctx_ = nullptr;
  alignas(64) std::atomic<uint32_t> generation_{0};
  alignas(64) std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
};

}  // namespace vt
