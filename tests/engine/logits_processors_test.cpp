// The sampler's logits-processors step (allowed_token_ids, bad words, min_tokens, logit_bias)
// and what the engine does around it: vocabulary checks, max_logprobs, priority scheduling and
// prompt logprobs. Expectations are computed from the same logits (softmax, argmax), never
// typed in.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/sampler.h"
#include "fake_executor.h"

namespace vllm::engine {
namespace {

using testing::bracket_streams;
using testing::PagedFakeExecutor;
using testing::run_alone;
using testing::run_to_completion;

constexpr int32_t kVocab = 64;

std::vector<float> random_logits(uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<float> l(kVocab);
  for (auto& x : l) x = static_cast<float>(Sampler::uniform(g) * 8.0 - 4.0);
  return l;
}

std::unique_ptr<Request> req_with(SamplingParams p, std::vector<int32_t> outputs = {},
                                  uint64_t seed = 7) {
  auto r = std::make_unique<Request>("r", std::vector<int32_t>{1, 2, 3}, p, 100,
                                     std::optional<int32_t>(0), seed, 0);
  for (int32_t t : outputs) r->append_output_token(t);
  return r;
}

int32_t argmax_of(const std::vector<float>& l) {
  return static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
}

TEST(LogitsProcessors, AllowedTokenIdsRestrictGreedyAndRandomDraws) {
  Sampler s(kVocab);
  const auto l = random_logits(1);
  // The allowed set deliberately leaves out the unconstrained argmax.
  std::vector<int32_t> allowed;
  for (int32_t t = 0; t < kVocab; t += 5)
    if (t != argmax_of(l)) allowed.push_back(t);
  SamplingParams p;
  p.temperature = 0.0f;
  p.allowed_token_ids = allowed;
  int32_t best = allowed[0];
  for (int32_t t : allowed) best = l[t] > l[best] ? t : best;
  EXPECT_EQ(s.sample(*req_with(p), l.data(), nullptr), best);

  p.temperature = 1.0f;
  auto r = req_with(p);
  std::set<int32_t> seen;
  for (int i = 0; i < 2000; ++i) seen.insert(s.sample(*r, l.data(), nullptr));
  for (int32_t t : seen)
    EXPECT_NE(std::find(allowed.begin(), allowed.end(), t), allowed.end()) << t;
  EXPECT_GT(seen.size(), allowed.size() / 2);  // it really samples among them
}

TEST(LogitsProcessors, LogitBiasShiftsTheDistributionAndTheArgmax) {
  Sampler s(kVocab);
  const auto l = random_logits(2);
  const int32_t top = argmax_of(l);
  const int32_t low = static_cast<int32_t>(std::min_element(l.begin(), l.end()) - l.begin());
  SamplingParams p;
  p.temperature = 0.0f;
  p.logit_bias = {{low, 100.0f}};
  EXPECT_EQ(s.sample(*req_with(p), l.data(), nullptr), low);
  p.logit_bias = {{top, -100.0f}};
  std::vector<float> shifted = l;
  shifted[top] -= 100.0f;
  EXPECT_EQ(s.sample(*req_with(p), l.data(), nullptr), argmax_of(shifted));

  // Random draws follow softmax(l + bias): a +3 bias on one token multiplies its odds by e^3.
  p.temperature = 1.0f;
  const int32_t t = 17;
  p.logit_bias = {{t, 3.0f}};
  shifted = l;
  shifted[t] += 3.0f;
  double z = 0;
  for (float x : shifted) z += std::exp(x);
  const double want = std::exp(shifted[t]) / z;
  auto r = req_with(p);
  int hits = 0;
  constexpr int kDraws = 20000;
  for (int i = 0; i < kDraws; ++i) hits += s.sample(*r, l.data(), nullptr) == t;
  EXPECT_NEAR(hits / static_cast<double>(kDraws), want, 4 * std::sqrt(want / kDraws) + 1e-3);
}

TEST(LogitsProcessors, BadWordsMaskTheLastTokenOnlyAfterTheirPrefix) {
  Sampler s(kVocab);
  const auto l = random_logits(3);
  const int32_t top = argmax_of(l);
  std::vector<float> without = l;
  without[top] = -INFINITY;
  SamplingParams p;
  p.temperature = 0.0f;
  // A one-token bad word is always banned.
  p.bad_words_token_ids = {{top}};
  EXPECT_EQ(s.sample(*req_with(p), l.data(), nullptr), argmax_of(without));
  // A two-token word bans its last token only right after its first one.
  p.bad_words_token_ids = {{9, top}};
  EXPECT_EQ(s.sample(*req_with(p, {4, 9}), l.data(), nullptr), argmax_of(without));
  EXPECT_EQ(s.sample(*req_with(p, {9, 4}), l.data(), nullptr), top);
  EXPECT_EQ(s.sample(*req_with(p, {}), l.data(), nullptr), top);
}

TEST(LogitsProcessors, OrderAllowedThenBiasAndLogprobsStayRaw) {
  Sampler s(kVocab);
  const auto l = random_logits(4);
  SamplingParams p;
  p.temperature = 0.0f;
  p.allowed_token_ids = std::vector<int32_t>{3, 5};
  // A bias cannot bring back a token the allowed list removed (-inf + 100 is -inf).
  p.logit_bias = {{40, 100.0f}, {3, -50.0f}};
  p.logprobs = 2;
  TokenLogprobs lp;
  const int32_t tok = s.sample(*req_with(p), l.data(), &lp);
  EXPECT_EQ(tok, 5);
  // Logprobs are log_softmax of the raw logits (vLLM's raw_logprobs), not the processed ones.
  std::vector<float> ls(kVocab);
  Sampler::log_softmax(l.data(), kVocab, ls.data());
  EXPECT_EQ(lp.token_id, 5);
  EXPECT_FLOAT_EQ(lp.logprob, ls[5]);
  ASSERT_EQ(lp.top.size(), 2u);
  EXPECT_EQ(lp.top[0].first, argmax_of(l));
}

TEST(LogitsProcessors, MinTokensMasksStopsInsideTheSameStep) {
  Sampler s(kVocab);
  auto l = random_logits(5);
  l[0] = 50.0f;   // eos (the request's eos id is 0)
  l[11] = 40.0f;  // a stop id
  SamplingParams p;
  p.temperature = 0.0f;
  p.min_tokens = 2;
  p.stop_token_ids = {11};
  p.logit_bias = {{11, 30.0f}};  // bias applies after the mask: still -inf
  std::vector<float> masked = l;
  masked[0] = masked[11] = -INFINITY;
  EXPECT_EQ(s.sample(*req_with(p, {7}), l.data(), nullptr), argmax_of(masked));
  // Once min_tokens is reached the mask lifts and the bias counts: 40 + 30 beats eos's 50.
  EXPECT_EQ(s.sample(*req_with(p, {7, 8}), l.data(), nullptr), 11);
  p.logit_bias.clear();
  EXPECT_EQ(s.sample(*req_with(p, {7, 8}), l.data(), nullptr), 0);
}

TEST(LogitsProcessors, EngineRejectsOutOfVocabularyIdsAndTooManyLogprobs) {
  PagedFakeExecutor ex(kVocab, 256);
  EngineConfig c;
  c.num_gpu_blocks = 64;
  c.block_size = 16;  // block counts here are of 16-slot blocks
  c.max_logprobs = 5;
  LLMEngine eng(c, ex, bracket_streams());
  auto expect_reject = [&](SamplingParams p, const std::string& needle) {
    try {
      eng.add_request("x", {1, 2, 3}, p);
      ADD_FAILURE() << "accepted; expected an error containing '" << needle << "'";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  SamplingParams p;
  p.allowed_token_ids = std::vector<int32_t>{1, kVocab};
  expect_reject(p, "allowed_token_ids");
  p = {};
  p.allowed_token_ids = std::vector<int32_t>{};
  expect_reject(p, "allowed_token_ids must not be empty");
  p = {};
  p.logit_bias = {{kVocab + 3, 1.0f}};
  expect_reject(p, "logit_bias");
  p = {};
  p.logit_bias = {{3, 101.0f}};
  expect_reject(p, "[-100, 100]");
  p = {};
  p.bad_words_token_ids = {{1, kVocab}};
  expect_reject(p, "bad_words");
  p = {};
  p.logprobs = 6;
  expect_reject(p, "greater than max allowed: 5");
  p = {};
  p.prompt_logprobs = -1;  // the whole vocabulary
  expect_reject(p, "prompt logprobs of 64");
  EXPECT_THROW(eng.add_request("x", {1, 2}, SamplingParams{}, /*priority=*/3),
               std::invalid_argument);  // fcfs engine
  // None of those left anything behind.
  EXPECT_FALSE(eng.has_unfinished_requests());
}

TEST(LogitsProcessors, PriorityPolicyAdmitsLowerPriorityValuesFirst) {
  PagedFakeExecutor ex(kVocab, 256);
  EngineConfig c;
  c.num_gpu_blocks = 64;
  c.block_size = 16;   // block counts here are of 16-slot blocks
  c.max_num_seqs = 1;  // one at a time: admission order is visible in finish order
  c.scheduling_policy = SchedulingPolicy::kPriority;
  LLMEngine eng(c, ex, bracket_streams());
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = 2;
  const std::vector<std::pair<std::string, int64_t>> reqs = {
      {"a", 5}, {"b", -1}, {"c", 5}, {"d", 0}, {"e", -1}};
  for (const auto& [id, prio] : reqs) eng.add_request(id, {1, 2, 3}, p, prio);
  std::vector<std::string> order;
  while (eng.has_unfinished_requests())
    for (auto& o : eng.step())
      if (o.finished) order.push_back(o.request_id);
  EXPECT_EQ(order, (std::vector<std::string>{"b", "e", "d", "a", "c"}));
}

TEST(LogitsProcessors, PromptLogprobsAreLogSoftmaxOfEveryPromptPositionAcrossChunks) {
  // The fake model's logits at position k depend on tokens 0..k; a request scored whole in one
  // step and one chunked 3 tokens at a time agree, and each entry scores the next prompt token
  // under the previous position's logits.
  std::mt19937_64 rng(9);
  const auto prompt = testing::random_prompt(rng, 40, kVocab);
  SamplingParams p;
  p.temperature = 0.0f;
  p.max_tokens = 2;
  p.prompt_logprobs = 3;
  const auto whole = run_alone(prompt, p, kVocab, 256);
  ASSERT_EQ(whole.prompt_logprobs.size(), prompt.size() - 1);

  PagedFakeExecutor ex(kVocab, 256);
  EngineConfig c;
  c.num_gpu_blocks = 64;
  c.block_size = 16;  // block counts here are of 16-slot blocks
  c.max_num_batched_tokens = 3;
  LLMEngine eng(c, ex, bracket_streams());
  // Without prompt logprobs, the model's logits of position k are what the engine samples
  // from after the prefix 0..k: use that to recompute each entry independently.
  for (size_t k = 0; k + 1 < prompt.size(); ++k) {
    std::vector<int32_t> prefix(prompt.begin(), prompt.begin() + static_cast<ptrdiff_t>(k) + 1);
    SamplingParams q;
    q.temperature = 0.0f;
    q.max_tokens = 1;
    q.logprobs = 3;
    // Score prompt[k+1] under the logits after prefix: ask for its logprob through the
    // allowed list so that it is the sampled token.
    q.allowed_token_ids = std::vector<int32_t>{prompt[k + 1]};
    eng.add_request("p" + std::to_string(k), prefix, q);
  }
  SamplingParams chunked = p;
  eng.add_request("chunked", prompt, chunked);
  auto res = run_to_completion(eng);
  ASSERT_EQ(res["chunked"].prompt_logprobs.size(), prompt.size() - 1);
  for (size_t k = 0; k + 1 < prompt.size(); ++k) {
    const TokenLogprobs& a = whole.prompt_logprobs[k];
    const TokenLogprobs& b = res["chunked"].prompt_logprobs[k];
    const TokenLogprobs& ref = res["p" + std::to_string(k)].logprobs.at(0);
    EXPECT_EQ(a.token_id, prompt[k + 1]);
    EXPECT_EQ(a.logprob, b.logprob) << k;
    EXPECT_EQ(a.top, b.top) << k;
    EXPECT_EQ(a.rank, b.rank) << k;
    EXPECT_EQ(ref.token_id, prompt[k + 1]);
    EXPECT_EQ(a.logprob, ref.logprob) << k;
    EXPECT_EQ(a.top, ref.top) << k;
    EXPECT_EQ(a.rank, ref.rank) << k;
  }
  EXPECT_EQ(res["chunked"].tokens, whole.tokens);
}

}  // namespace
}  // namespace vllm::engine
