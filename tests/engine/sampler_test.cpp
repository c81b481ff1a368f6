// Sampler: greedy, temperature, top-k, top-p, min-p, penalties, min_tokens, seeds, logprobs.
// Expectations come from direct computations over the same logits (softmax, sorting), not
// from typed-in numbers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "engine/sampler.h"

namespace vllm::engine {
namespace {

constexpr int32_t kVocab = 50;

std::vector<float> random_logits(uint64_t seed, int32_t n = kVocab) {
  std::mt19937_64 g(seed);
  std::vector<float> l(n);
  for (auto& x : l) x = static_cast<float>(Sampler::uniform(g) * 8.0 - 4.0);
  return l;
}

std::unique_ptr<Request> req_with(SamplingParams p, std::vector<int32_t> prompt = {1, 2, 3},
                                  std::vector<int32_t> outputs = {}, uint64_t seed = 7) {
  auto r = std::make_unique<Request>("r", prompt, p, 100, std::optional<int32_t>(0), seed, 0);
  for (int32_t t : outputs) r->append_output_token(t);
  return r;
}

std::vector<int32_t> ranked(const std::vector<float>& l) {
  std::vector<int32_t> idx(l.size());
  for (size_t i = 0; i < l.size(); ++i) idx[i] = static_cast<int32_t>(i);
  std::stable_sort(idx.begin(), idx.end(), [&](int32_t a, int32_t b) { return l[a] > l[b]; });
  return idx;
}

std::vector<double> softmax(const std::vector<float>& l, float t = 1.0f) {
  double m = *std::max_element(l.begin(), l.end()) / t, z = 0;
  std::vector<double> p(l.size());
  for (size_t i = 0; i < l.size(); ++i) z += p[i] = std::exp(l[i] / t - m);
  for (auto& x : p) x /= z;
  return p;
}

TEST(Sampler, GreedyIsTheArgmax) {
  Sampler s(kVocab);
  SamplingParams p;
  p.temperature = 0.0f;
  for (uint64_t k = 0; k < 20; ++k) {
    auto l = random_logits(k);
    auto r = req_with(p);
    EXPECT_EQ(s.sample(*r, l.data(), nullptr), ranked(l)[0]);
  }
}

TEST(Sampler, TopKOnlyEverPicksTheKBest) {
  Sampler s(kVocab);
  SamplingParams p;
  p.top_k = 3;
  auto l = random_logits(1);
  auto best = ranked(l);
  std::set<int32_t> allowed(best.begin(), best.begin() + 3), seen;
  auto r = req_with(p);
  for (int i = 0; i < 400; ++i) seen.insert(s.sample(*r, l.data(), nullptr));
  EXPECT_EQ(seen, allowed);  // all three show up, nothing else
}

TEST(Sampler, TopKTiesAtTheCutKeepTheLowestIds) {
  Sampler s(kVocab);
  SamplingParams p;
  p.top_k = 3;
  std::vector<float> l(kVocab, 0.0f);
  for (int32_t i : {7, 11, 20, 30, 41}) l[i] = 2.0f;  // five tokens tie for the top
  l[45] = 3.0f;
  std::set<int32_t> seen;
  auto r = req_with(p);
  for (int i = 0; i < 500; ++i) seen.insert(s.sample(*r, l.data(), nullptr));
  EXPECT_EQ(seen, (std::set<int32_t>{45, 7, 11}));
}

TEST(Sampler, TopPAndTopKOnALargeVocabularyStayInsideTheDirectlyComputedSet) {
  constexpr int32_t kBig = 20000;
  Sampler s(kBig);
  for (uint64_t seed = 0; seed < 6; ++seed) {
    auto l = random_logits(50 + seed, kBig);
    for (auto& x : l) x *= 1.5f;
    SamplingParams p;
    p.top_p = seed % 2 ? 0.9f : 0.3f;
    p.top_k = seed % 3 == 0 ? 500 : 0;
    p.min_p = seed == 5 ? 0.05f : 0.0f;
    p.temperature = 0.8f;
    // Direct: softmax of l / T, min-p, then the k best, then the nucleus of what is left.
    auto probs = softmax(l, p.temperature);
    auto order = ranked(l);
    const double top = probs[order[0]];
    std::vector<int32_t> kept;
    for (int32_t i : order)
      if (probs[i] >= p.min_p * top) kept.push_back(i);
    if (p.top_k > 0 && kept.size() > static_cast<size_t>(p.top_k)) kept.resize(p.top_k);
    double z = 0, above = 0;
    for (int32_t i : kept) z += probs[i];
    std::set<int32_t> allowed;
    for (int32_t i : kept) {
      if (above >= p.top_p * z) break;
      allowed.insert(i);
      above += probs[i];
    }
    auto r = req_with(p, {1}, {}, seed);
    for (int i = 0; i < 300; ++i) {
      const int32_t t = s.sample(*r, l.data(), nullptr);
      ASSERT_TRUE(allowed.count(t)) << "seed " << seed << " sampled " << t;
    }
  }
}

TEST(Sampler, TopPKeepsTheSmallestNucleus) {
  Sampler s(kVocab);
  SamplingParams p;
  p.top_p = 0.5f;
  auto l = random_logits(2);
  auto probs = softmax(l);
  auto order = ranked(l);
  std::set<int32_t> nucleus;
  double above = 0;
  for (int32_t i : order) {
    if (above >= 0.5) break;
    nucleus.insert(i);
    above += probs[i];
  }
  std::set<int32_t> seen;
  auto r = req_with(p);
  for (int i = 0; i < 2000; ++i) seen.insert(s.sample(*r, l.data(), nullptr));
  EXPECT_EQ(seen, nucleus);
}

TEST(Sampler, MinPDropsTokensBelowTheFractionOfTheTopProbability) {
  Sampler s(kVocab);
  SamplingParams p;
  p.min_p = 0.3f;
  auto l = random_logits(3);
  auto probs = softmax(l);
  const double top = *std::max_element(probs.begin(), probs.end());
  std::set<int32_t> allowed, seen;
  for (int32_t i = 0; i < kVocab; ++i)
    if (probs[i] >= 0.3 * top) allowed.insert(i);
  auto r = req_with(p);
  for (int i = 0; i < 3000; ++i) seen.insert(s.sample(*r, l.data(), nullptr));
  EXPECT_EQ(seen, allowed);
}

TEST(Sampler, TemperatureMatchesTheSoftmaxFrequencies) {
  Sampler s(kVocab);
  SamplingParams p;
  p.temperature = 0.7f;
  auto l = random_logits(4);
  auto probs = softmax(l, 0.7f);
  std::vector<int> counts(kVocab, 0);
  auto r = req_with(p);
  const int n = 20000;
  for (int i = 0; i < n; ++i) ++counts[s.sample(*r, l.data(), nullptr)];
  for (int32_t i = 0; i < kVocab; ++i) {
    const double sd = std::sqrt(n * probs[i] * (1 - probs[i]));
    EXPECT_NEAR(counts[i], n * probs[i], 5 * sd + 3) << "token " << i;
  }
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDifferentTokens) {
  Sampler s(kVocab);
  SamplingParams p;
  p.seed = 1234;
  auto run = [&](uint64_t seed) {
    SamplingParams q = p;
    q.seed = seed;
    auto r = req_with(q);
    std::vector<int32_t> out;
    for (int i = 0; i < 32; ++i) {
      auto l = random_logits(100 + i);
      out.push_back(s.sample(*r, l.data(), nullptr));
    }
    return out;
  };
  EXPECT_EQ(run(1234), run(1234));
  EXPECT_NE(run(1234), run(1235));
}

TEST(Sampler, RepetitionPenaltyScalesSeenTokensBySign) {
  Sampler s(kVocab);
  SamplingParams p;
  p.temperature = 0.0f;
  p.repetition_penalty = 2.0f;
  std::vector<float> l(kVocab, -1.0f);
  l[5] = 3.0f;   // in the prompt: 3 / 2 = 1.5
  l[6] = 2.0f;   // unseen: stays 2 and wins
  l[7] = -0.1f;  // in the output: * 2
  auto r = req_with(p, {5, 5, 9}, {7});
  EXPECT_EQ(s.sample(*r, l.data(), nullptr), 6);
  p.repetition_penalty = 1.2f;  // 3 / 1.2 = 2.5 > 2: the prompt token wins again
  auto r2 = req_with(p, {5, 5, 9}, {7});
  EXPECT_EQ(s.sample(*r2, l.data(), nullptr), 5);
}

TEST(Sampler, FrequencyAndPresencePenaltiesCountOutputTokensOnly) {
  Sampler s(kVocab);
  SamplingParams p;
  p.temperature = 0.0f;
  std::vector<float> l(kVocab, -5.0f);
  l[10] = 2.0f;
  l[11] = 1.0f;
  // Token 10 appeared 3 times in the output: 2 - 0.4 * 3 = 0.8 < 1.
  p.frequency_penalty = 0.4f;
  auto r = req_with(p, {1}, {10, 10, 10});
  EXPECT_EQ(s.sample(*r, l.data(), nullptr), 11);
  p.frequency_penalty = 0.3f;  // 2 - 0.9 = 1.1 > 1
  auto r2 = req_with(p, {1}, {10, 10, 10});
  EXPECT_EQ(s.sample(*r2, l.data(), nullptr), 10);
  // Presence counts once however often: 2 - 1.1 = 0.9 < 1.
  p.frequency_penalty = 0.0f;
  p.presence_penalty = 1.1f;
  auto r3 = req_with(p, {1}, {10, 10, 10});
  EXPECT_EQ(s.sample(*r3, l.data(), nullptr), 11);
  // Prompt occurrences do not count.
  auto r4 = req_with(p, {10, 10}, {});
  EXPECT_EQ(s.sample(*r4, l.data(), nullptr), 10);
}

TEST(Sampler, MinTokensMasksEosAndStopTokens) {
  Sampler s(kVocab);
  SamplingParams p;
  p.temperature = 0.0f;
  p.min_tokens = 2;
  p.stop_token_ids = {4};
  std::vector<float> l(kVocab, 0.0f);
  l[0] = 9.0f;  // eos (req_with sets eos id 0)
  l[4] = 8.0f;
  l[3] = 1.0f;
  auto r = req_with(p, {1}, {3});
  EXPECT_EQ(s.sample(*r, l.data(), nullptr), 3);
  auto r2 = req_with(p, {1}, {3, 3});  // min_tokens reached: eos is back
  EXPECT_EQ(s.sample(*r2, l.data(), nullptr), 0);
  p.ignore_eos = true;  // eos is not a stop token then, so min_tokens leaves it alone
  auto r3 = req_with(p, {1}, {3});
  EXPECT_EQ(s.sample(*r3, l.data(), nullptr), 0);
}

TEST(Sampler, LogprobsAreLogSoftmaxOfTheRawLogits) {
  Sampler s(kVocab);
  SamplingParams p;
  p.logprobs = 5;
  p.temperature = 0.8f;
  p.repetition_penalty = 1.5f;  // processing must not leak into the reported logprobs
  auto l = random_logits(9);
  double m = *std::max_element(l.begin(), l.end()), z = 0;
  for (float x : l) z += std::exp(x - m);
  auto order = ranked(l);
  auto r = req_with(p);
  TokenLogprobs lp;
  const int32_t tok = s.sample(*r, l.data(), &lp);
  EXPECT_EQ(lp.token_id, tok);
  EXPECT_NEAR(lp.logprob, l[tok] - m - std::log(z), 1e-5);
  EXPECT_EQ(lp.rank, std::find(order.begin(), order.end(), tok) - order.begin() + 1);
  ASSERT_EQ(lp.top.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(lp.top[i].first, order[i]);
    EXPECT_NEAR(lp.top[i].second, l[order[i]] - m - std::log(z), 1e-5);
  }
}

TEST(Sampler, UniformIsInTheUnitInterval) {
  std::mt19937_64 g(1);
  double lo = 1, hi = 0;
  for (int i = 0; i < 10000; ++i) {
    double u = Sampler::uniform(g);
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
  EXPECT_LT(lo, 0.01);
  EXPECT_GT(hi, 0.99);
}

}  // namespace
}  // namespace vllm::engine
