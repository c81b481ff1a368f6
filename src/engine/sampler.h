// Sampler: one logits row -> one token, as vLLM V1 defines each step: logprobs from the raw
// logits; a structured-output grammar's token mask (disallowed ids to -inf, first); the logits
// processors (allowed_token_ids, bad words, min_tokens' stop masking,
// logit_bias); repetition / frequency / presence penalties; greedy argmax, or temperature,
// min-p, top-k, top-p and a draw from the request's own RNG. Every request is processed on its
// own row, so its result never depends on the batch.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "engine/request.h"

namespace vllm::engine {

class Sampler {
 public:
  explicit Sampler(int32_t vocab_size);

  // Samples the request's next token from `logits` (read only). Fills *lp when the request
  // asked for logprobs. Advances req.generator by exactly one draw when not greedy.
  // argmax_hint: the argmax of these logits when the step already computed it (the decode
  // graph's in-graph argmax, same kernel), or -1. Used only for plain greedy rows: a masked
  // row's argmax is taken after masking, never the hint.
  // mask: the grammar's allowed-token bitmask (bit i of word i/32 = id i allowed), at least
  // ceil(vocab/32) words; nullptr when the request is not constrained at this step.
  int32_t sample(Request& req, const float* logits, TokenLogprobs* lp, int32_t argmax_hint = -1,
                 const uint32_t* mask = nullptr);

  // The logprobs entry of `token` under `raw` logits: its log-softmax value, its rank and the
  // top n_top alternatives (-1: the whole vocabulary). Used for sampled and prompt tokens.
  void compute_logprobs(const float* raw, int32_t token, int32_t n_top, TokenLogprobs* lp);

  // The logits processors step, in vLLM V1's order: allowed_token_ids (everything else to
  // -inf), bad words (the last id of a bad word whose other ids end the output), min_tokens
  // (stop ids and eos to -inf while the output is shorter), logit_bias (added). Edits x in
  // place; runs before the penalties, temperature and the top-k / top-p / min-p cuts. A
  // structured-output grammar's token mask belongs to this step too.
  void apply_logits_processors(const Request& req, float* x);
  // Whether apply_logits_processors can change this request's logits at this step.
  static bool needs_logits_processors(const Request& req);

  // The pieces, public for tests.
  // Sets every id whose mask bit is clear to -inf (whole words at a time where they agree).
  static void apply_mask(float* x, const uint32_t* mask, int32_t n);
  // argmax over the allowed ids only (the first one holding the maximum, like argmax of the
  // masked row), without copying the row.
  static int32_t masked_argmax(const float* x, const uint32_t* mask, int32_t n);
  static void log_softmax(const float* logits, int32_t n, float* out);
  // One uniform double in [0, 1) from 53 bits of the generator (portable, unlike
  // std::uniform_real_distribution).
  static double uniform(std::mt19937_64& gen);

 private:
  void apply_penalties(const Request& req, float* x);
  int32_t sample_random(const SamplingParams& p, float* x, std::mt19937_64& gen);

  int32_t vocab_;
  std::vector<float> work_, scratch_;
  std::vector<int32_t> counts_;  // output-token counts, zeroed after each use
  std::vector<uint8_t> in_prompt_;
  std::vector<int32_t> cand_;
  std::vector<std::pair<int32_t, float>> kept_;  // allowed_token_ids' logits while masking
};

}  // namespace vllm::engine
