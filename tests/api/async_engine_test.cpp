// AsyncEngine over the paged fake model: many submitting threads get the outputs they would get
// alone, validation errors come back through the stream, aborts free KV blocks, the waiting
// queue is bounded, a reader that never reads stalls nobody, and shutdown closes every stream.
#include "engine/async_engine.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../engine/fake_executor.h"

namespace vllm::engine {
namespace {

using namespace std::chrono_literals;
using testing::bracket_streams;
using testing::Finished;
using testing::PagedFakeExecutor;
using testing::run_alone;

// The fake model behind a gate, so a test can hold the engine inside a step.
class GatedExecutor : public PagedFakeExecutor {
 public:
  using PagedFakeExecutor::PagedFakeExecutor;
  void execute(const vllm::model::ForwardBatch& b, float* logits) override {
    {
      std::unique_lock<std::mutex> lk(mu);
      ++entered;
      cv.notify_all();
      cv.wait(lk, [&] { return open || allowance > 0; });
      if (!open) --allowance;
    }
    PagedFakeExecutor::execute(b, logits);
  }
  void set_open(bool o) {
    std::lock_guard<std::mutex> lk(mu);
    open = o;
    cv.notify_all();
  }
  void allow(int n) {
    std::lock_guard<std::mutex> lk(mu);
    allowance += n;
    cv.notify_all();
  }
  void wait_entered(int n) {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return entered >= n; });
  }
  std::mutex mu;
  std::condition_variable cv;
  bool open = true;
  int allowance = 0;  // steps let through while closed
  int entered = 0;
};

SamplingParams greedy(int max_tokens) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = max_tokens;
  return p;
}

std::vector<int32_t> prompt_of(int n, int32_t first) {
  std::vector<int32_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = (first + i * 7) % 256;
  return p;
}

// Reads a stream to its end.
Finished drain(RequestStream& s, std::chrono::milliseconds limit = 20s) {
  Finished f;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  RequestOutput o;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = s.pop(o, 50ms);
    if (r == RequestStream::PopResult::kClosed) break;
    if (r == RequestStream::PopResult::kTimeout) continue;
    f.tokens.insert(f.tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
    f.text += o.text_delta;
    if (o.finished) {
      f.finished = true;
      f.finish_reason = o.finish_reason;
    }
  }
  return f;
}

EngineConfig roomy() {
  EngineConfig c;
  c.num_gpu_blocks = 512;
  c.block_size = 4;
  c.max_num_seqs = 8;
  return c;
}

bool wait_until(const std::function<bool()>& pred, std::chrono::milliseconds limit = 10s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

TEST(AsyncEngine, ConcurrentSubmittersGetTheOutputsTheyWouldGetAlone) {
  PagedFakeExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngine ae(eng);
  constexpr int kThreads = 6, kPerThread = 5;
  std::vector<std::vector<Finished>> got(kThreads);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const int k = t * kPerThread + i;
        auto s =
            ae.add_request("r" + std::to_string(k), prompt_of(5 + k % 9, k), greedy(6 + k % 5));
        EXPECT_EQ(s->wait_admitted(), "");
        got[t].push_back(drain(*s));
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(ex.error, "");
  for (int t = 0; t < kThreads; ++t)
    for (int i = 0; i < kPerThread; ++i) {
      const int k = t * kPerThread + i;
      Finished want = run_alone(prompt_of(5 + k % 9, k), greedy(6 + k % 5));
      const Finished& f = got[t][i];
      EXPECT_TRUE(f.finished) << k;
      EXPECT_EQ(f.tokens, want.tokens) << k;
      EXPECT_EQ(f.text, want.text) << k;
      EXPECT_EQ(f.finish_reason, "length") << k;
    }
  // The metrics are those of the last step, published after its outputs went out and after the
  // engine's idle malloc_trim: wait for the snapshot that has no request running (the one of the
  // step that finished the last request) before reading the cache usage from it, or a slow
  // engine thread would still show the step before.
  EXPECT_TRUE(wait_until(
      [&] { return ae.num_unfinished() == 0 && ae.metrics().num_requests_running == 0; }));
  EXPECT_EQ(ae.metrics().kv_cache_usage, 0.0f);
}

TEST(AsyncEngine, ValidationErrorsComeBackThroughTheStreamAndOthersRunOn) {
  // "good" is held inside its first step while the others are queued, and one more step is let
  // through to admit them, so it is still running when its duplicate id arrives however fast
  // the engine thread is.
  GatedExecutor ex(256, 64);
  ex.open = false;
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngine ae(eng);
  auto good = ae.add_request("good", prompt_of(4, 1), greedy(4));
  ASSERT_EQ(good->wait_admitted(), "");
  ex.wait_entered(1);
  auto too_long = ae.add_request("long", prompt_of(70, 1), greedy(4));
  SamplingParams bad_t = greedy(4);
  bad_t.temperature = -1.0f;
  auto bad = ae.add_request("bad", prompt_of(4, 1), bad_t);
  auto dup = ae.add_request("good", prompt_of(4, 1), greedy(4));
  ex.allow(1);
  EXPECT_NE(too_long->wait_admitted().find("maximum model length"), std::string::npos);
  EXPECT_NE(bad->wait_admitted().find("temperature"), std::string::npos);
  EXPECT_NE(dup->wait_admitted().find("already in use"), std::string::npos);
  ex.set_open(true);
  RequestOutput o;
  EXPECT_EQ(bad->pop(o, 10ms), RequestStream::PopResult::kClosed);
  EXPECT_EQ(drain(*good).tokens.size(), 4u);
  EXPECT_TRUE(wait_until([&] { return ae.num_unfinished() == 0; }));
}

TEST(AsyncEngine, AbortClosesTheStreamAndFreesKvBlocks) {
  GatedExecutor ex(256, 1024);
  // Two steps (prefill + one decode) go through, then the engine is held inside its third step
  // while the abort arrives, so a fast or loaded machine cannot let the request run to its 900
  // tokens first.
  ex.allowance = 2;
  ex.open = false;
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngine ae(eng);
  auto s = ae.add_request("long", prompt_of(40, 3), greedy(900));
  ASSERT_EQ(s->wait_admitted(), "");
  RequestOutput o;
  ASSERT_EQ(s->pop(o, 10s), RequestStream::PopResult::kOutput);
  EXPECT_FALSE(o.finished);
  ex.wait_entered(3);
  EXPECT_GT(ae.num_unfinished(), 0u);
  EXPECT_GT(ae.metrics().kv_cache_usage, 0.0f);
  ae.abort("long");
  ex.set_open(true);
  Finished f = drain(*s);
  EXPECT_TRUE(f.finished);
  EXPECT_EQ(f.finish_reason, "abort");
  EXPECT_LT(f.tokens.size(), 899u);
  EXPECT_TRUE(wait_until([&] {
    auto m = ae.metrics();
    return ae.num_unfinished() == 0 && m.kv_cache_usage == 0.0f && m.num_requests_running == 0;
  }));
  ae.abort("long");  // already gone: ignored
  ae.abort("never-existed");
  auto again = ae.add_request("after", prompt_of(4, 9), greedy(3));
  EXPECT_EQ(drain(*again).tokens.size(), 3u);
}

TEST(AsyncEngine, TheWaitingQueueIsBounded) {
  GatedExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngineOptions opts;
  opts.max_waiting_requests = 2;
  AsyncEngine ae(eng, opts);
  ex.set_open(false);
  auto a = ae.add_request("a", prompt_of(4, 1), greedy(2));
  ex.wait_entered(1);  // the engine is stuck inside its first step
  auto b = ae.add_request("b", prompt_of(4, 2), greedy(2));
  EXPECT_THROW(ae.add_request("c", prompt_of(4, 3), greedy(2)), EngineOverloaded);
  ex.set_open(true);
  EXPECT_EQ(drain(*a).tokens.size(), 2u);
  EXPECT_EQ(drain(*b).tokens.size(), 2u);
  EXPECT_TRUE(wait_until([&] { return ae.num_unfinished() == 0; }));
  auto c = ae.add_request("c", prompt_of(4, 3), greedy(2));
  EXPECT_EQ(drain(*c).tokens.size(), 2u);
}

struct AdmissionObserver : EngineStatsObserver {
  void on_first_token(double) override {}
  void on_inter_token(double) override {}
  void on_finished(const RequestOutput&, double) override {}
  void on_admission_rejected(const char* reason) override { reasons.push_back(reason); }
  std::vector<std::string> reasons;
};

// vLLM's --max-num-queued-reqs: waiting + running requests, a request of n sequences taking n.
TEST(AsyncEngine, AdmissionCountsWaitingAndRunningRequests) {
  GatedExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngineOptions opts;
  opts.max_num_queued_reqs = 3;
  AdmissionObserver obs;
  AsyncEngine ae(eng, opts, &obs);
  ex.set_open(false);
  ae.check_admission(3);  // nothing in flight: three sequences fit
  EXPECT_THROW(ae.check_admission(4), EngineOverloaded);
  auto a = ae.add_request("a", prompt_of(4, 1), greedy(2));
  ex.wait_entered(1);  // a is running
  auto b = ae.add_request("b", prompt_of(4, 2), greedy(2));
  ae.check_admission(1);
  try {
    ae.check_admission(2);
    FAIL() << "a request of n=2 over the limit was admitted";
  } catch (const EngineOverloaded& e) {
    EXPECT_EQ(std::string(e.what()),
              "The engine is currently busy and cannot accept new requests. Please try again "
              "later or on a different instance.");
  }
  ex.set_open(true);
  EXPECT_EQ(drain(*a).tokens.size(), 2u);
  EXPECT_EQ(drain(*b).tokens.size(), 2u);
  EXPECT_TRUE(wait_until([&] { return ae.num_unfinished() == 0; }));
  ae.check_admission(3);
  EXPECT_EQ(obs.reasons, (std::vector<std::string>{"max_num_queued_reqs", "max_num_queued_reqs"}));
}

// vLLM's --max-num-queued-tokens: the prompts of requests that have not made a token yet.
TEST(AsyncEngine, AdmissionCountsThePromptsStillInPrefill) {
  GatedExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngineOptions opts;
  opts.max_num_queued_tokens = 10;
  AdmissionObserver obs;
  AsyncEngine ae(eng, opts, &obs);
  ex.set_open(false);
  auto a = ae.add_request("a", prompt_of(6, 1), greedy(3));
  ex.wait_entered(1);  // held inside a's prefill step
  EXPECT_EQ(ae.num_queued_tokens(), 6);
  ae.check_admission(1);  // 6 < 10
  auto b = ae.add_request("b", prompt_of(5, 2), greedy(3));
  EXPECT_EQ(ae.num_queued_tokens(), 11);
  EXPECT_THROW(ae.check_admission(1), EngineOverloaded);
  EXPECT_EQ(obs.reasons, std::vector<std::string>{"max_num_queued_tokens"});
  // Once both have their first token, their prompts no longer count, though they still run.
  ex.allow(3);
  EXPECT_TRUE(wait_until([&] { return ae.num_queued_tokens() == 0; }));
  EXPECT_GT(ae.num_unfinished(), 0);
  ae.check_admission(1);
  ex.set_open(true);
  EXPECT_EQ(drain(*a).tokens.size(), 3u);
  EXPECT_EQ(drain(*b).tokens.size(), 3u);
  // A rejected or aborted request gives its share back too.
  auto bad = ae.add_request("bad", prompt_of(7, 1), greedy(0));
  EXPECT_NE(bad->wait_admitted(), "");
  ex.set_open(false);
  int steps;
  {
    std::lock_guard<std::mutex> lk(ex.mu);
    steps = ex.entered;
  }
  auto c = ae.add_request("c", prompt_of(9, 3), greedy(50));
  ex.wait_entered(steps + 1);
  ae.abort("c");
  ex.set_open(true);
  EXPECT_EQ(drain(*c).finish_reason, "abort");
  EXPECT_TRUE(wait_until([&] { return ae.num_unfinished() == 0; }));
  EXPECT_EQ(ae.num_queued_tokens(), 0);
}

// --shutdown-timeout: drain() refuses new work at once and lets the running requests finish.
TEST(AsyncEngine, DrainLetsRunningRequestsFinishAndRefusesNewOnes) {
  PagedFakeExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngine ae(eng);
  auto a = ae.add_request("a", prompt_of(4, 1), greedy(40));
  ASSERT_EQ(a->wait_admitted(), "");
  std::thread drainer([&] { EXPECT_EQ(ae.drain(20s), 0); });
  EXPECT_TRUE(wait_until([&] {
    try {
      ae.add_request("late", prompt_of(4, 2), greedy(2));
      ae.abort("late");
      return false;
    } catch (const EngineStopped& e) {
      return std::string(e.what()) == "the server is shutting down";
    }
  }));
  drainer.join();
  const Finished f = drain(*a);
  EXPECT_TRUE(f.finished);
  EXPECT_EQ(f.finish_reason, "length");
  EXPECT_EQ(f.tokens.size(), 40u);
}

// A drain that runs out of time returns what is left; shutdown() then aborts it.
TEST(AsyncEngine, DrainTimesOutAndShutdownAbortsTheRest) {
  GatedExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngine ae(eng);
  ex.set_open(false);
  auto a = ae.add_request("a", prompt_of(4, 1), greedy(40));
  ex.wait_entered(1);
  EXPECT_EQ(ae.drain(100ms), 1);
  std::thread closer([&] { ae.shutdown(); });
  // The engine stays held inside a's first step until shutdown() has begun, however slow the
  // closer thread is (opened before, the fake steps could finish all 40 tokens first): while
  // draining, a new request is refused as the server's; once the stop is set, as the engine's.
  for (;;) {
    try {
      ae.add_request("probe", prompt_of(4, 2), greedy(2));
    } catch (const EngineStopped& e) {
      if (std::string(e.what()) == "the engine is shutting down") break;
    }
    std::this_thread::sleep_for(1ms);
  }
  ex.set_open(true);
  closer.join();
  const Finished f = drain(*a);
  EXPECT_EQ(f.finish_reason, "abort");
  EXPECT_LT(f.tokens.size(), 40u);
}

TEST(AsyncEngine, AReaderThatNeverReadsStallsNobody) {
  PagedFakeExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  AsyncEngine ae(eng);
  auto ignored = ae.add_request("ignored", prompt_of(4, 1), greedy(200));
  auto read = ae.add_request("read", prompt_of(4, 2), greedy(50));
  Finished f = drain(*read, 10s);
  EXPECT_TRUE(f.finished);
  EXPECT_EQ(f.tokens.size(), 50u);
  EXPECT_TRUE(wait_until([&] { return ae.num_unfinished() == 0; }));
  Finished g = drain(*ignored);
  EXPECT_EQ(g.tokens.size(), 200u);
}

TEST(AsyncEngine, ShutdownClosesLiveStreamsAndRefusesNewWork) {
  GatedExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  auto ae = std::make_unique<AsyncEngine>(eng);
  ex.set_open(false);
  auto s = ae->add_request("x", prompt_of(4, 1), greedy(500));
  ASSERT_EQ(s->wait_admitted(), "");
  ex.wait_entered(1);
  std::thread closer([&] { ae->shutdown(); });
  // The engine is held inside x's first step until shutdown() has begun, however slow the closer
  // thread is: submit until the engine refuses new work. What was queued before that is refused
  // when the engine thread takes the stop.
  std::vector<std::shared_ptr<RequestStream>> queued;
  for (;;) {
    try {
      queued.push_back(
          ae->add_request("q" + std::to_string(queued.size()), prompt_of(4, 2), greedy(2)));
    } catch (const EngineStopped&) {
      break;
    } catch (const EngineOverloaded&) {
      // The waiting queue is full (a very slow closer): keep asking until the stop refuses us.
    }
    std::this_thread::sleep_for(1ms);
  }
  ex.set_open(true);
  closer.join();
  Finished f = drain(*s, 5s);
  EXPECT_TRUE(f.finished);
  EXPECT_EQ(f.finish_reason, "abort");
  EXPECT_LE(f.tokens.size(), 1u);  // its first step, then the stop
  for (auto& q : queued) EXPECT_EQ(q->wait_admitted(), "the engine is shutting down");
  EXPECT_THROW(ae->add_request("y", prompt_of(4, 1), greedy(2)), EngineStopped);
  EXPECT_FALSE(eng.has_unfinished_requests());
}

struct CountingObserver : EngineStatsObserver {
  std::atomic<int> first{0}, inter{0}, finished{0}, rejected{0};
  void on_first_token(double s) override {
    EXPECT_GE(s, 0.0);
    ++first;
  }
  void on_inter_token(double s) override {
    EXPECT_GE(s, 0.0);
    ++inter;
  }
  void on_finished(const RequestOutput& o, double) override {
    EXPECT_TRUE(o.finished);
    ++finished;
  }
  void on_rejected() override { ++rejected; }
};

TEST(AsyncEngine, ObserverSeesFirstTokenInterTokenAndFinish) {
  PagedFakeExecutor ex(256, 1024);
  LLMEngine eng(roomy(), ex, bracket_streams());
  CountingObserver obs;
  AsyncEngine ae(eng, {}, &obs);
  // "b" (max_tokens 0) is rejected first: the engine thread reports a rejection to the observer
  // only after closing the stream, but it admits in submission order, so once a's stream has
  // ended b's on_rejected has run too (b's own closed stream would not say so).
  auto b = ae.add_request("b", prompt_of(4, 1), greedy(0));
  auto a = ae.add_request("a", prompt_of(4, 1), greedy(5));
  drain(*b);
  drain(*a);
  EXPECT_EQ(obs.first.load(), 1);
  EXPECT_EQ(obs.inter.load(), 4);
  EXPECT_EQ(obs.finished.load(), 1);
  EXPECT_EQ(obs.rejected.load(), 1);
}

}  // namespace
}  // namespace vllm::engine
