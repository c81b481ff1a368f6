// Background /v1/responses jobs (responses_background.h): replay from an index while the job
// runs, cancellation waiting for the job's end, and which finished jobs stay findable.
#include "api/server/responses_background.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace vllm::api {
namespace {

using namespace std::chrono_literals;

TEST(BackgroundResponses, ReplayFollowsTheJobAndCancelWaitsForIt) {
  BackgroundResponses bg;
  std::atomic<bool> stopped{false};
  auto job = bg.start("r1", true, [&](BackgroundJob& j) {
    j.append({"e0", "e1"});
    j.append({"e2"});
    while (!j.cancelled()) std::this_thread::sleep_for(1ms);
    j.append({"e3"});
    stopped = true;
  });
  ASSERT_EQ(bg.find("r1"), job);
  std::vector<std::string> got;
  std::thread reader([&] {
    EXPECT_TRUE(job->replay(1, [&](const std::string& e) {
      got.push_back(e);
      return true;
    }));
  });
  std::this_thread::sleep_for(20ms);
  bg.cancel("r1");  // returns once the job's function returned
  EXPECT_TRUE(stopped);
  reader.join();
  EXPECT_EQ(got, (std::vector<std::string>{"e1", "e2", "e3"}));
  // A finished streamed job stays for replay; a reader that says stop gets false.
  ASSERT_EQ(bg.find("r1"), job);
  int n = 0;
  EXPECT_FALSE(job->replay(0, [&](const std::string&) { return ++n < 2; }));
  EXPECT_EQ(n, 2);
}

TEST(BackgroundResponses, FinishedJobsKeptOnlyWhenStreamed) {
  BackgroundResponses bg(1);
  auto wait_done = [](const std::shared_ptr<BackgroundJob>& j) {
    j->replay(1u << 30, [](const std::string&) { return true; });
  };
  auto plain = bg.start("p", false, [](BackgroundJob&) {});
  wait_done(plain);
  for (int i = 0; i < 100 && bg.find("p"); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(bg.find("p"), nullptr);
  auto s1 = bg.start("s1", true, [](BackgroundJob& j) { j.append({"a"}); });
  wait_done(s1);
  for (int i = 0; i < 100 && !bg.find("s1"); ++i) std::this_thread::sleep_for(1ms);
  auto s2 = bg.start("s2", true, [](BackgroundJob& j) { j.append({"b"}); });
  wait_done(s2);
  for (int i = 0; i < 100 && bg.find("s1"); ++i) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(bg.find("s1"), nullptr);  // only the newest finished one is kept
  EXPECT_EQ(bg.find("s2"), s2);
  bg.cancel("unknown");  // a no-op
}

TEST(BackgroundResponses, CancelAllStopsEveryJob) {
  std::atomic<int> ended{0};
  {
    BackgroundResponses bg;
    for (int i = 0; i < 4; ++i)
      bg.start("j" + std::to_string(i), i % 2 == 0, [&](BackgroundJob& j) {
        while (!j.cancelled()) std::this_thread::sleep_for(1ms);
        ++ended;
      });
  }  // the destructor cancels and waits
  EXPECT_EQ(ended, 4);
}

}  // namespace
}  // namespace vllm::api
