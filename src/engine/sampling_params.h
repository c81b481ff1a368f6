// SamplingParams: how one request turns logits into tokens and when it stops. Field names and
// defaults follow Python vLLM's SamplingParams so requests translate one to one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vllm::engine {

// Below this temperature a request is sampled greedily (vLLM's _SAMPLING_EPS).
inline constexpr float kSamplingEps = 1e-5f;

struct SamplingParams {
  int32_t n = 1;
  float presence_penalty = 0.0f;    // [-2, 2], output tokens only
  float frequency_penalty = 0.0f;   // [-2, 2], output tokens only
  float repetition_penalty = 1.0f;  // > 0, prompt and output tokens
  float temperature = 1.0f;         // >= 0; < kSamplingEps means greedy
  float top_p = 1.0f;               // (0, 1]
  int32_t top_k = 0;                // 0 or -1 disables
  float min_p = 0.0f;               // [0, 1]
  std::optional<uint64_t> seed;     // per-request RNG: same seed, same tokens
  std::vector<std::string> stop;    // stop strings, matched on the output text
  std::vector<int32_t> stop_token_ids;
  bool ignore_eos = false;
  // nullopt: as many as fit in max_model_len.
  std::optional<int32_t> max_tokens = 16;
  int32_t min_tokens = 0;
  std::optional<int32_t> logprobs;  // top-n logprobs of each sampled position (raw logits)
  bool include_stop_str_in_output = false;
  bool skip_special_tokens = true;

  bool greedy() const { return temperature < kSamplingEps; }

  // Throws std::invalid_argument naming the offending field and its allowed range.
  void validate() const;
};

}  // namespace vllm::engine
