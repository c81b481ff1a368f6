// LLMEngine end to end over the paged fake model: request validation, stop conditions, stop
// strings, abort, logprobs, prefix caching and metrics.
#include <gtest/gtest.h>

#include "fake_executor.h"

namespace vllm::engine {
namespace {

using testing::bracket_streams;
using testing::Finished;
using testing::PagedFakeExecutor;
using testing::run_alone;
using testing::run_to_completion;

std::vector<int32_t> prompt_of(int n, int32_t first = 1) {
  std::vector<int32_t> p(n);
  for (int i = 0; i < n; ++i) p[i] = (first + i * 7) % 256;
  return p;
}

SamplingParams greedy(int max_tokens) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = max_tokens;
  return p;
}

std::string add_error(LLMEngine& eng, const std::string& id, std::vector<int32_t> prompt,
                      const SamplingParams& p) {
  try {
    eng.add_request(id, std::move(prompt), p);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

struct EngineFixture : ::testing::Test {
  PagedFakeExecutor ex{256, 128};
  EngineConfig cfg() {
    EngineConfig c;
    c.num_gpu_blocks = 32;
    c.block_size = 4;
    return c;
  }
};

TEST_F(EngineFixture, BadRequestsAreRejectedWithAClearMessageAndOthersRunOn) {
  LLMEngine eng(cfg(), ex, bracket_streams());
  eng.add_request("good", prompt_of(10), greedy(5));
  auto bad = [&](SamplingParams p) { return add_error(eng, "bad", prompt_of(10), p); };
  SamplingParams p = greedy(5);
  p.temperature = -1;
  EXPECT_NE(bad(p).find("temperature"), std::string::npos);
  p = greedy(5);
  p.top_p = 0;
  EXPECT_NE(bad(p).find("top_p"), std::string::npos);
  p.top_p = 1.5f;
  EXPECT_NE(bad(p).find("top_p"), std::string::npos);
  p = greedy(5);
  p.top_k = -2;
  EXPECT_NE(bad(p).find("top_k"), std::string::npos);
  p = greedy(5);
  p.min_p = 1.5f;
  EXPECT_NE(bad(p).find("min_p"), std::string::npos);
  p = greedy(0);
  EXPECT_NE(bad(p).find("max_tokens"), std::string::npos);
  p = greedy(5);
  p.repetition_penalty = 0;
  EXPECT_NE(bad(p).find("repetition_penalty"), std::string::npos);
  p = greedy(5);
  p.logprobs = 100;
  EXPECT_NE(bad(p).find("logprobs"), std::string::npos);
  p = greedy(5);
  p.min_tokens = 6;
  EXPECT_NE(bad(p).find("min_tokens"), std::string::npos);
  p = greedy(5);
  p.n = 2;
  EXPECT_NE(bad(p).find("n > 1"), std::string::npos);
  // Length: the prompt alone, then prompt + max_tokens, over max_model_len=128.
  EXPECT_NE(add_error(eng, "long", prompt_of(128), greedy(1)).find("too long"), std::string::npos);
  EXPECT_NE(add_error(eng, "fit", prompt_of(100), greedy(29)).find("maximum context length"),
            std::string::npos);
  EXPECT_EQ(add_error(eng, "fits", prompt_of(100), greedy(28)), "");
  EXPECT_NE(add_error(eng, "empty", {}, greedy(1)).find("at least one token"), std::string::npos);
  EXPECT_NE(add_error(eng, "oov", {1, 256}, greedy(1)).find("vocabulary"), std::string::npos);
  EXPECT_NE(add_error(eng, "good", prompt_of(3), greedy(1)).find("already in use"),
            std::string::npos);
  EXPECT_NE(add_error(eng, "", prompt_of(3), greedy(1)).find("empty"), std::string::npos);
  auto res = run_to_completion(eng);
  EXPECT_EQ(res.size(), 2u);  // good and fits, nothing of the rejected ones
  EXPECT_EQ(res["good"].tokens, run_alone(prompt_of(10), greedy(5), 256, 128).tokens);
  EXPECT_TRUE(ex.error.empty()) << ex.error;
}

TEST_F(EngineFixture, RequestLargerThanTheWholeCacheIsRejected) {
  EngineConfig c = cfg();
  c.num_gpu_blocks = 4;  // 16 slots
  LLMEngine eng(c, ex);
  EXPECT_NE(add_error(eng, "x", prompt_of(10), greedy(7)).find("KV cache"), std::string::npos);
  EXPECT_EQ(add_error(eng, "y", prompt_of(10), greedy(6)), "");
}

TEST_F(EngineFixture, StopStringsNeedADetokenizer) {
  LLMEngine eng(cfg(), ex);
  SamplingParams p = greedy(5);
  p.stop = {"x"};
  EXPECT_NE(add_error(eng, "s", prompt_of(3), p).find("detokenizer"), std::string::npos);
}

TEST_F(EngineFixture, ConfigIsResolvedAgainstTheModel) {
  EngineConfig c;
  c.block_size = 16;
  c.kv_cache_memory_bytes = 64 * 16 * 10 + 5;  // 10 blocks of the fake's 64 B/slot
  LLMEngine eng(c, ex);
  EXPECT_EQ(*eng.config().num_gpu_blocks, 10);
  EXPECT_EQ(eng.config().max_model_len, 128);
  c.max_model_len = 129;
  EXPECT_THROW(LLMEngine(c, ex), std::invalid_argument);
  // -1 (vLLM's auto): the model's, lowered to what the cache holds.
  c.max_model_len = -1;
  EXPECT_EQ(LLMEngine(c, ex).config().max_model_len, 128);  // 160 slots hold 128
  c.kv_cache_memory_bytes = 64 * 16 * 5;
  EXPECT_EQ(LLMEngine(c, ex).config().max_model_len, 80);
  // The model's (or a given) context the memory cannot hold: refused, as vLLM does at start-up,
  // naming what would fit. An explicit block count (a test knob) is not checked.
  c.max_model_len = 0;
  try {
    LLMEngine e(c, ex);
    ADD_FAILURE() << "a 128-token context in an 80-token cache was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("the estimated maximum model length is 80"),
              std::string::npos)
        << e.what();
  }
  c.max_model_len = 80;
  EXPECT_EQ(LLMEngine(c, ex).config().max_model_len, 80);
  EngineConfig blocks = c;
  blocks.max_model_len = 0;
  blocks.num_gpu_blocks = 5;
  EXPECT_EQ(LLMEngine(blocks, ex).config().max_model_len, 128);
  c.kv_cache_memory_bytes = 100;
  EXPECT_THROW(LLMEngine(c, ex), std::invalid_argument);
}

TEST_F(EngineFixture, MaxTokensAndDefaultMaxTokens) {
  Finished f = run_alone(prompt_of(10), greedy(7), 256, 128);
  EXPECT_EQ(f.tokens.size(), 7u);
  EXPECT_EQ(f.finish_reason, "length");
  SamplingParams p = greedy(1);
  p.max_tokens.reset();  // up to max_model_len
  f = run_alone(prompt_of(100), p, 256, 128);
  EXPECT_EQ(f.tokens.size(), 28u);
}

TEST_F(EngineFixture, StopTokenIdsEosAndIgnoreEos) {
  const auto prompt = prompt_of(9);
  const auto ref = run_alone(prompt, greedy(12), 256, 128).tokens;
  ASSERT_EQ(ref.size(), 12u);
  // Stop at the 4th generated token (first occurrence), kept in the output ids.
  const int32_t stop = ref[3];
  const size_t first = std::find(ref.begin(), ref.end(), stop) - ref.begin();
  SamplingParams p = greedy(12);
  p.stop_token_ids = {stop};
  Finished f = run_alone(prompt, p, 256, 128);
  EXPECT_EQ(f.tokens, std::vector<int32_t>(ref.begin(), ref.begin() + first + 1));
  EXPECT_EQ(f.finish_reason, "stop");
  // The stop token's own text is left out.
  std::string want_text;
  for (size_t i = 0; i < first; ++i) want_text += "<" + std::to_string(ref[i]) + ">";
  EXPECT_EQ(f.text, want_text);
  // The same id as eos stops too; with ignore_eos it does not.
  f = run_alone(prompt, greedy(12), 256, 128, stop);
  EXPECT_EQ(f.tokens.size(), first + 1);
  SamplingParams q = greedy(12);
  q.ignore_eos = true;
  f = run_alone(prompt, q, 256, 128, stop);
  EXPECT_EQ(f.tokens, ref);
  // min_tokens: the stop token is masked until then, so the output differs from the ref and
  // is at least min_tokens long.
  SamplingParams r = greedy(12);
  r.stop_token_ids = {stop};
  r.min_tokens = static_cast<int32_t>(first) + 2;
  f = run_alone(prompt, r, 256, 128);
  EXPECT_GE(f.tokens.size(), first + 2);
  for (size_t i = 0; i + 1 < f.tokens.size(); ++i) EXPECT_NE(f.tokens[i], stop);
}

TEST_F(EngineFixture, StopStringsTruncateTheText) {
  const auto prompt = prompt_of(9, 3);
  const Finished ref = run_alone(prompt, greedy(10), 256, 128);
  std::string full;
  for (int32_t t : ref.tokens) full += "<" + std::to_string(t) + ">";
  EXPECT_EQ(ref.text, full);
  // A stop string spanning the end of token 3 and the start of token 4.
  const std::string t3 = "<" + std::to_string(ref.tokens[3]) + ">";
  const std::string stop = t3.substr(1) + "<" + std::to_string(ref.tokens[4]).substr(0, 1);
  const size_t at = full.find(stop);
  ASSERT_NE(at, std::string::npos);
  SamplingParams p = greedy(10);
  p.stop = {"never-there", stop};
  Finished f = run_alone(prompt, p, 256, 128);
  EXPECT_EQ(f.finish_reason, "stop");
  EXPECT_EQ(f.text, full.substr(0, at));
  EXPECT_EQ(f.tokens.size(), 5u);
  p.include_stop_str_in_output = true;
  f = run_alone(prompt, p, 256, 128);
  EXPECT_EQ(f.text, full.substr(0, at + stop.size()));
}

TEST_F(EngineFixture, StreamedDeltasNeverShowAStopStringPrefix) {
  const auto prompt = prompt_of(9, 3);
  const Finished ref = run_alone(prompt, greedy(10), 256, 128);
  const std::string stop = "<" + std::to_string(ref.tokens[6]) + ">";
  LLMEngine eng(cfg(), ex, bracket_streams());
  SamplingParams p = greedy(10);
  p.stop = {stop};
  eng.add_request("s", prompt, p);
  std::string text;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step()) {
      text += o.text_delta;
      EXPECT_EQ(text.find(stop), std::string::npos);
    }
  EXPECT_FALSE(text.empty());
}

TEST_F(EngineFixture, AbortFinishesTheRequestAndFreesItsBlocks) {
  LLMEngine eng(cfg(), ex, bracket_streams());
  eng.add_request("a", prompt_of(10), greedy(20));
  eng.add_request("b", prompt_of(11, 5), greedy(20));
  eng.add_request("w", prompt_of(12, 9), greedy(20));
  eng.step();
  eng.step();
  EXPECT_TRUE(eng.abort_request("a"));
  EXPECT_FALSE(eng.abort_request("a"));
  EXPECT_FALSE(eng.abort_request("nope"));
  auto outs = eng.step();
  bool saw = false;
  size_t b_tokens = 2;
  for (auto& o : outs) {
    if (o.request_id == "b") b_tokens += o.new_token_ids.size();
    if (o.request_id == "a") {
      saw = true;
      EXPECT_TRUE(o.finished);
      EXPECT_EQ(o.finish_reason, "abort");
    }
  }
  EXPECT_TRUE(saw);
  EXPECT_TRUE(eng.core().scheduler().kv_cache_manager().get_block_ids("a").empty());
  EXPECT_EQ(eng.core().scheduler().kv_cache_manager().check_consistency(), "");
  auto res = run_to_completion(eng);
  EXPECT_EQ(b_tokens + res["b"].tokens.size(), 20u);
}

TEST_F(EngineFixture, AbortOfWaitingAndPreemptedRequestsAndIdReuse) {
  EngineConfig c = cfg();
  c.num_gpu_blocks = 8;  // 32 slots: two 12-token prompts growing by 10 must preempt
  c.max_num_batched_tokens = 64;
  LLMEngine eng(c, ex, bracket_streams());
  eng.add_request("a", prompt_of(12), greedy(10));
  eng.add_request("b", prompt_of(12, 3), greedy(10));
  eng.add_request("w", prompt_of(30, 5), greedy(2));  // waits: does not fit next to a and b
  bool aborted_preempted = false;
  while (eng.has_unfinished_requests()) {
    eng.step();
    Request* b = eng.core().scheduler().get_request("b");
    if (b && b->status == RequestStatus::PREEMPTED && !aborted_preempted) {
      EXPECT_TRUE(eng.abort_request("b"));
      aborted_preempted = true;
    }
    if (eng.core().scheduler().get_request("w")) {
      EXPECT_TRUE(eng.abort_request("w"));
    }
    ASSERT_EQ(eng.core().scheduler().kv_cache_manager().check_consistency(), "");
  }
  EXPECT_TRUE(aborted_preempted);
  EXPECT_EQ(eng.core().scheduler().kv_cache_manager().num_free_blocks(), 8);
  // A finished id can be used again, and the new request runs from scratch.
  eng.add_request("a", prompt_of(7, 9), greedy(3));
  auto res = run_to_completion(eng);
  EXPECT_EQ(res["a"].tokens, run_alone(prompt_of(7, 9), greedy(3), 256, 128).tokens);
  EXPECT_TRUE(ex.error.empty()) << ex.error;
}

TEST_F(EngineFixture, LogprobsFlowThroughTheEngine) {
  SamplingParams p = greedy(4);
  p.logprobs = 3;
  Finished f = run_alone(prompt_of(6), p, 256, 128);
  ASSERT_EQ(f.logprobs.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f.logprobs[i].token_id, f.tokens[i]);
    EXPECT_EQ(f.logprobs[i].rank, 1);  // greedy picks the top raw logit
    ASSERT_EQ(f.logprobs[i].top.size(), 3u);
    EXPECT_EQ(f.logprobs[i].top[0].first, f.tokens[i]);
    EXPECT_LT(f.logprobs[i].top[0].second, 0.0f);
  }
}

TEST_F(EngineFixture, PrefixCachingSkipsPrefillTokens) {
  auto run = [&](bool caching, int64_t* executed, EngineMetrics* m) {
    PagedFakeExecutor ex2(256, 128);
    EngineConfig c = cfg();
    c.enable_prefix_caching = caching;
    LLMEngine eng(c, ex2);
    auto shared = prompt_of(40, 11);
    std::map<std::string, Finished> all;
    for (int i = 0; i < 4; ++i) {
      auto prompt = shared;
      prompt.push_back(i);  // 41 tokens: 10 full shared blocks
      eng.add_request("r" + std::to_string(i), prompt, greedy(3));
      auto res = run_to_completion(eng);  // one after another: the next one hits
      all.insert(res.begin(), res.end());
    }
    *executed = ex2.num_tokens_executed;
    *m = eng.metrics();
    EXPECT_TRUE(ex2.error.empty()) << ex2.error;
    return all;
  };
  int64_t with = 0, without = 0;
  EngineMetrics mw, mo;
  auto a = run(true, &with, &mw);
  auto b = run(false, &without, &mo);
  for (auto& [id, f] : a) EXPECT_EQ(f.tokens, b[id].tokens) << id;
  EXPECT_EQ(without - with, 3 * 40);  // 3 later requests skip the 40 shared tokens
  EXPECT_EQ(mw.prefix_cache_hits, 3 * 40);
  EXPECT_EQ(mw.prefix_cache_queries, 4 * 41);
  EXPECT_EQ(mo.prefix_cache_hits, 0);
  EXPECT_EQ(mw.prompt_tokens_total, 4 * 41);
  EXPECT_EQ(mw.generation_tokens_total, 4 * 3);
  EXPECT_EQ(mw.num_requests_finished, 4);
}

TEST_F(EngineFixture, SeededSamplingIgnoresBatchComposition) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.max_tokens = 16;
  p.seed = 99;
  const auto prompt = prompt_of(13, 2);
  const Finished alone = run_alone(prompt, p, 256, 128);
  // The same request among others of different lengths, seeded and not, chunked at 16.
  EngineConfig c = cfg();
  c.max_num_batched_tokens = 16;
  LLMEngine eng(c, ex);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 5; ++i) {
    SamplingParams q = p;
    if (i % 2)
      q.seed.reset();
    else
      q.seed = 1000 + i;
    eng.add_request("o" + std::to_string(i), testing::random_prompt(rng, 3 + 9 * i), q);
  }
  eng.add_request("me", prompt, p);
  auto res = run_to_completion(eng);
  EXPECT_EQ(res["me"].tokens, alone.tokens);
  SamplingParams other = p;
  other.seed = 100;
  EXPECT_NE(run_alone(prompt, other, 256, 128).tokens, alone.tokens);
  EXPECT_TRUE(ex.error.empty()) << ex.error;
}

TEST_F(EngineFixture, MetricsTrackQueuesAndUsage) {
  EngineConfig c = cfg();
  c.max_num_seqs = 2;
  LLMEngine eng(c, ex);
  for (int i = 0; i < 3; ++i) eng.add_request("r" + std::to_string(i), prompt_of(5, i), greedy(4));
  EXPECT_EQ(eng.metrics().num_requests_waiting, 3);
  eng.step();
  auto m = eng.metrics();
  EXPECT_EQ(m.num_requests_running, 2);
  EXPECT_EQ(m.num_requests_waiting, 1);
  EXPECT_NEAR(m.kv_cache_usage, 4.0f / 32.0f, 1e-6);
}

}  // namespace
}  // namespace vllm::engine
