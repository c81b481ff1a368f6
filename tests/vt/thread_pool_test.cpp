#include "vt/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

TEST(ThreadPool, EveryThreadRunsEveryJob) {
  vt::ThreadPool pool(2);
  std::vector<int> hits(2, 0);
  for (int job = 0; job < 1000; ++job) pool.run([&](int i, int n) { hits[i] += (n == 2); });
  for (int h : hits) EXPECT_EQ(h, 1000);
}

TEST(ThreadPool, ParallelForCoversRangeOnce) {
  vt::ThreadPool pool(2);
  std::vector<std::atomic<int>> seen(1001);
  pool.parallel_for(1001, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) seen[i]++;
  });
  for (auto& s : seen) EXPECT_EQ(s.load(), 1);
}
