// Sampler: logits processing and the draw. Every pass over the vocabulary is a plain loop
// over floats (a fast exp, many-accumulator max) because it runs once per request per step
// over vocabularies of 50k-150k entries.
#include "engine/sampler.h"

#include "vt/ops.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>

namespace vllm::engine {
namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
// Top-p buckets: logits are bucketed by distance below the max, 16 per nat, over 64 nats.
constexpr int kBucketsPerNat = 16;
constexpr int kNumBuckets = 64 * kBucketsPerNat;

// exp(x) for x <= 0 with ~1e-7 relative error; 0 below -87 (and for -inf, a masked token).
inline float fast_exp(float x) {
  // Branch-free (masks instead of selects) so the loops over the vocabulary vectorize.
  const int32_t keep = -static_cast<int32_t>(x >= -87.0f);
  const float xc = std::bit_cast<float>((std::bit_cast<int32_t>(x) & keep) |
                                        (std::bit_cast<int32_t>(-87.0f) & ~keep));
  // Round to nearest by the 1.5 * 2^23 trick: SSE2 has no floor.
  constexpr float kMagic = 12582912.0f;
  const float t = xc * 1.44269504f + kMagic;
  const float n = t - kMagic;
  const int32_t ni = std::bit_cast<int32_t>(t) - std::bit_cast<int32_t>(kMagic);
  const float r = xc - n * 0.693145752f - n * 1.42860677e-6f;
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = std::bit_cast<float>((ni + 127) << 23);
  return std::bit_cast<float>(std::bit_cast<int32_t>(p * scale) & keep);
}

// Independent accumulators so the reduction is not one long dependency chain.
float max_of(const float* x, int32_t n) {
  float acc[16];
  std::fill_n(acc, 16, kNegInf);
  int32_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) acc[j] = x[i + j] > acc[j] ? x[i + j] : acc[j];
  for (; i < n; ++i) acc[0] = x[i] > acc[0] ? x[i] : acc[0];
  float m = acc[0];
  for (int j = 1; j < 16; ++j) m = acc[j] > m ? acc[j] : m;
  return m;
}

// First index holding the maximum (ties to the lowest id, as torch.argmax): the kernel the
// decode graph's in-graph argmax uses too, so both always agree.
int32_t argmax(const float* x, int32_t n) { return static_cast<int32_t>(vt::argmax(x, n)); }

// Sum in double over 8 independent accumulators: a fixed order (reproducible) without one
// long dependency chain.
double sum_of(const float* e, int32_t n) {
  double acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int32_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) acc[j] += e[i + j];
  for (; i < n; ++i) acc[0] += e[i];
  double s = 0;
  for (double a : acc) s += a;
  return s;
}

// e[i] = exp(x[i] - m); returns their sum.
double exp_shifted(const float* __restrict x, int32_t n, float m, float* __restrict e) {
  int32_t i = 0;
  for (; i + 16 <= n; i += 16)
    for (int j = 0; j < 16; ++j) e[i + j] = fast_exp(x[i + j] - m);
  for (; i < n; ++i) e[i] = fast_exp(x[i] - m);
  return sum_of(e, n);
}

}  // namespace

Sampler::Sampler(int32_t vocab_size)
    : vocab_(vocab_size),
      work_(vocab_size),
      scratch_(vocab_size),
      counts_(vocab_size, 0),
      in_prompt_(vocab_size, 0) {
  cand_.reserve(vocab_size);
}

double Sampler::uniform(std::mt19937_64& gen) {
  return static_cast<double>(gen() >> 11) * (1.0 / 9007199254740992.0);
}

void Sampler::log_softmax(const float* logits, int32_t n, float* out) {
  const float m = max_of(logits, n);
  const double lse = m + std::log(exp_shifted(logits, n, m, out));
  for (int32_t i = 0; i < n; ++i) out[i] = static_cast<float>(logits[i] - lse);
}

void Sampler::compute_logprobs(const float* raw, int32_t sampled, int32_t n_top,
                               TokenLogprobs* lp) {
  if (n_top < 0) n_top = vocab_;
  log_softmax(raw, vocab_, scratch_.data());
  const float* l = scratch_.data();
  lp->token_id = sampled;
  lp->logprob = l[sampled];
  int32_t rank = 1;
  for (int32_t i = 0; i < vocab_; ++i) rank += l[i] > l[sampled];
  lp->rank = rank;
  lp->top.clear();
  if (n_top <= 0) return;
  // Candidates for the top n: anything above the n-th value of a cheap first pass.
  cand_.clear();
  const int32_t k = std::min(n_top, vocab_);
  for (int32_t i = 0; i < vocab_; ++i) cand_.push_back(i);
  auto by_value = [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  std::nth_element(cand_.begin(), cand_.begin() + (k - 1), cand_.end(), by_value);
  std::sort(cand_.begin(), cand_.begin() + k, by_value);
  for (int32_t i = 0; i < k; ++i) lp->top.emplace_back(cand_[i], l[cand_[i]]);
}

void Sampler::apply_mask(float* x, const uint32_t* mask, int32_t n) {
  const int32_t words = (n + 31) / 32;
  for (int32_t w = 0; w < words; ++w) {
    const uint32_t m = mask[w];
    if (m == ~0u) continue;
    float* row = x + static_cast<size_t>(w) * 32;
    const int32_t len = std::min<int32_t>(32, n - w * 32);
    if (m == 0) {
      std::fill_n(row, len, kNegInf);
      continue;
    }
    for (int32_t j = 0; j < len; ++j) row[j] = (m >> j) & 1u ? row[j] : kNegInf;
  }
}

int32_t Sampler::masked_argmax(const float* x, const uint32_t* mask, int32_t n) {
  const int32_t words = (n + 31) / 32;
  int32_t best = -1;
  float best_v = kNegInf;
  for (int32_t w = 0; w < words; ++w) {
    uint32_t m = mask[w];
    if (w == words - 1 && n % 32) m &= (1u << (n % 32)) - 1u;
    while (m) {
      const int32_t i = w * 32 + std::countr_zero(m);
      m &= m - 1;
      if (best < 0 || x[i] > best_v) {
        best = i;
        best_v = x[i];
      }
    }
  }
  // Nothing allowed (only when another constraint removed what the grammar allows): the
  // argmax of an all -inf row, as the unmasked path would give.
  return best < 0 ? 0 : best;
}

bool Sampler::needs_logits_processors(const Request& req) {
  const SamplingParams& p = req.sampling_params;
  return p.allowed_token_ids || !p.bad_words_token_ids.empty() || !p.logit_bias.empty() ||
         req.num_output_tokens() < p.min_tokens || req.thinking_over_budget() ||
         req.masks_reasoning_ends();
}

void Sampler::apply_logits_processors(const Request& req, float* x) {
  const SamplingParams& p = req.sampling_params;
  if (p.allowed_token_ids) {
    kept_.clear();
    for (int32_t t : *p.allowed_token_ids)
      if (t < vocab_) kept_.emplace_back(t, x[t]);
    std::fill_n(x, vocab_, kNegInf);
    for (const auto& [t, v] : kept_) x[t] = v;
  }
  if (!p.bad_words_token_ids.empty()) {
    const int32_t* out = req.output_token_ids();
    const int64_t n_out = req.num_output_tokens();
    for (const auto& w : p.bad_words_token_ids) {
      const int64_t prefix = static_cast<int64_t>(w.size()) - 1;
      if (prefix > n_out || w.back() >= vocab_) continue;
      if (std::equal(w.begin(), w.end() - 1, out + (n_out - prefix))) x[w.back()] = kNegInf;
    }
  }
  if (req.num_output_tokens() < p.min_tokens) {
    for (int32_t t : p.stop_token_ids)
      if (t < vocab_) x[t] = kNegInf;
    if (!p.ignore_eos && req.eos_token_id && *req.eos_token_id < vocab_)
      x[*req.eos_token_id] = kNegInf;
  }
  for (const auto& [t, bias] : p.logit_bias)
    if (t < vocab_) x[t] += bias;
  if (req.masks_reasoning_ends())
    for (int32_t t : req.masked_reasoning_ends)
      if (t < vocab_) x[t] = kNegInf;
  // The thinking budget is spent: the reasoning's end token is the only choice (vLLM forces it
  // whatever the other processors did).
  if (req.thinking_over_budget() && p.think_end_token >= 0 && p.think_end_token < vocab_) {
    std::fill_n(x, vocab_, kNegInf);
    x[p.think_end_token] = 0.0f;
  }
}

void Sampler::apply_penalties(const Request& req, float* x) {
  const SamplingParams& p = req.sampling_params;
  const bool rep = p.repetition_penalty != 1.0f;
  const bool freq_pres = p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f;
  if (!rep && !freq_pres) return;
  const int32_t* out = req.output_token_ids();
  const int64_t n_out = req.num_output_tokens();
  const int32_t* prompt = req.prompt_token_ids();
  const int64_t n_prompt = req.num_prompt_tokens();
  for (int64_t i = 0; i < n_out; ++i) ++counts_[out[i]];
  if (rep) {
    // vLLM: tokens seen in the prompt or the output have positive logits divided by the
    // penalty and negative ones multiplied by it.
    for (int64_t i = 0; i < n_prompt; ++i) in_prompt_[prompt[i]] = 1;
    auto penalize = [&](int32_t t) {
      if (in_prompt_[t] == 2) return;
      x[t] = x[t] > 0 ? x[t] / p.repetition_penalty : x[t] * p.repetition_penalty;
      in_prompt_[t] = 2;
    };
    for (int64_t i = 0; i < n_prompt; ++i) penalize(prompt[i]);
    for (int64_t i = 0; i < n_out; ++i) penalize(out[i]);
    for (int64_t i = 0; i < n_prompt; ++i) in_prompt_[prompt[i]] = 0;
    for (int64_t i = 0; i < n_out; ++i) in_prompt_[out[i]] = 0;
  }
  for (int64_t i = 0; i < n_out; ++i) {
    const int32_t t = out[i];
    if (counts_[t] == 0) continue;  // already applied for this token
    x[t] -= p.frequency_penalty * static_cast<float>(counts_[t]) + p.presence_penalty;
    counts_[t] = 0;
  }
}

int32_t Sampler::sample_random(const SamplingParams& p, float* x, std::mt19937_64& gen) {
  const float inv_t = 1.0f / p.temperature;
  for (int32_t i = 0; i < vocab_; ++i) x[i] *= inv_t;
  const float m = max_of(x, vocab_);
  if (m == kNegInf) return 0;
  // Logits bucketed by distance below the max: monotone in the logit, so whole buckets can be
  // kept or dropped and only the bucket a cut falls in needs sorting.
  auto bucket = [&](int32_t i) {
    const float d = (m - x[i]) * kBucketsPerNat;
    return d < kNumBuckets - 1 ? static_cast<int>(d) : kNumBuckets - 1;
  };
  auto by_logit = [&](int32_t a, int32_t b) { return x[a] > x[b] || (x[a] == x[b] && a < b); };
  // e[i] is token i's probability relative to the top one; 0 marks a dropped token.
  float* e = scratch_.data();
  if (p.top_k > 0 && p.top_k < vocab_) {
    // Top-k first (it commutes with min-p, both being cuts from the top), so the exp is only
    // taken over k tokens. Ties at the cut keep the lowest ids.
    int32_t counts[kNumBuckets] = {};
    for (int32_t i = 0; i < vocab_; ++i)
      if (x[i] != kNegInf) ++counts[bucket(i)];
    int32_t acc = 0;
    int b = 0;
    while (b < kNumBuckets - 1 && acc + counts[b] < p.top_k) acc += counts[b++];
    cand_.clear();
    std::fill_n(e, vocab_, 0.0f);
    for (int32_t i = 0; i < vocab_; ++i) {
      if (x[i] == kNegInf) continue;
      const int bi = bucket(i);
      if (bi < b)
        e[i] = fast_exp(x[i] - m);
      else if (bi == b)
        cand_.push_back(i);
    }
    const size_t need = static_cast<size_t>(p.top_k - acc);
    if (cand_.size() > need)
      std::nth_element(cand_.begin(), cand_.begin() + static_cast<ptrdiff_t>(need), cand_.end(),
                       by_logit);
    for (size_t j = 0; j < std::min(need, cand_.size()); ++j)
      e[cand_[j]] = fast_exp(x[cand_[j]] - m);
  } else {
    exp_shifted(x, vocab_, m, e);
  }
  if (p.min_p > 0.0f)
    for (int32_t i = 0; i < vocab_; ++i) e[i] = e[i] < p.min_p ? 0.0f : e[i];
  if (p.top_p < 1.0f) {
    // Keep a token iff the mass ranked above it is below top_p. Bucket the kept tokens by
    // distance below the max (monotone in the logit), take whole buckets while they stay
    // under the target, and sort only the bucket the boundary falls in.
    double mass[kNumBuckets] = {};
    for (int32_t i = 0; i < vocab_; ++i)
      if (e[i] > 0.0f) mass[bucket(i)] += e[i];
    const double target = static_cast<double>(p.top_p) * sum_of(e, vocab_);
    double cum = 0.0;
    int b = 0;
    while (b < kNumBuckets - 1 && cum + mass[b] < target) cum += mass[b++];
    cand_.clear();
    for (int32_t i = 0; i < vocab_; ++i) {
      if (e[i] == 0.0f) continue;
      const int bi = bucket(i);
      if (bi == b)
        cand_.push_back(i);
      else if (bi > b)
        e[i] = 0.0f;
    }
    std::sort(cand_.begin(), cand_.end(), by_logit);
    for (int32_t i : cand_) {
      if (cum >= target)
        e[i] = 0.0f;
      else
        cum += e[i];
    }
  }
  // Inverse CDF over the kept tokens in id order, from one uniform draw: whole 256-token
  // blocks are skipped by their sums, then the block holding the draw is walked.
  constexpr int32_t kBlock = 256;
  const double u = uniform(gen) * sum_of(e, vocab_);
  double cum = 0.0;
  int32_t last = -1;
  for (int32_t b = 0; b < vocab_; b += kBlock) {
    const int32_t n = std::min(kBlock, vocab_ - b);
    const double s = sum_of(e + b, n);
    if (s > 0.0 && cum + s <= u) {
      cum += s;
      for (int32_t i = b + n - 1; i >= b; --i)
        if (e[i] > 0.0f) {
          last = i;
          break;
        }
      continue;
    }
    for (int32_t i = b; i < b + n; ++i) {
      if (e[i] == 0.0f) continue;
      cum += e[i];
      last = i;
      if (u < cum) return i;
    }
  }
  return last >= 0 ? last : argmax(x, vocab_);
}

int32_t Sampler::sample(Request& req, const float* logits, TokenLogprobs* lp, int32_t argmax_hint,
                        const uint32_t* mask) {
  const SamplingParams& p = req.sampling_params;
  const bool processors = needs_logits_processors(req);
  const bool penalties =
      p.repetition_penalty != 1.0f || p.frequency_penalty != 0.0f || p.presence_penalty != 0.0f;
  int32_t tok;
  if (p.greedy() && !processors && !penalties) {
    // Nothing else modifies the row: a masked row needs no copy either.
    tok = mask               ? masked_argmax(logits, mask, vocab_)
          : argmax_hint >= 0 ? argmax_hint
                             : argmax(logits, vocab_);
  } else {
    float* x = work_.data();
    std::copy_n(logits, vocab_, x);
    // The grammar first, as vLLM applies its bitmask before the sampler's own processors.
    if (mask) apply_mask(x, mask, vocab_);
    if (processors) apply_logits_processors(req, x);
    if (penalties) apply_penalties(req, x);
    tok = p.greedy() ? argmax(x, vocab_) : sample_random(p, x, req.generator);
  }
  // Logprobs of the raw logits (vLLM's default logprobs_mode=raw_logprobs).
  if (lp && p.logprobs) compute_logprobs(logits, tok, *p.logprobs, lp);
  return tok;
}

}  // namespace vllm::engine
