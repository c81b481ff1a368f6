// Validation of SamplingParams, with the same bounds and wording style as Python vLLM.
#include "engine/sampling_params.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace vllm::engine {
namespace {

// Bounds that keep one request from asking for unbounded work.
constexpr int32_t kMaxN = 128;
// vLLM clamps logit_bias to this range; here a value outside it is refused.
constexpr float kMaxLogitBias = 100.0f;

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument(msg); }

template <typename T>
std::string got(T v) {
  std::ostringstream os;
  os << ", got " << v << ".";
  return os.str();
}

}  // namespace

void SamplingParams::validate() const {
  if (n < 1 || n > kMaxN) fail("n must be in [1, " + std::to_string(kMaxN) + "]" + got(n));
  if (!std::isfinite(presence_penalty) || presence_penalty < -2.0f || presence_penalty > 2.0f)
    fail("presence_penalty must be in [-2, 2]" + got(presence_penalty));
  if (!std::isfinite(frequency_penalty) || frequency_penalty < -2.0f || frequency_penalty > 2.0f)
    fail("frequency_penalty must be in [-2, 2]" + got(frequency_penalty));
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f)
    fail("repetition_penalty must be greater than zero" + got(repetition_penalty));
  if (!std::isfinite(temperature) || temperature < 0.0f)
    fail("temperature must be non-negative" + got(temperature));
  if (!(top_p > 0.0f && top_p <= 1.0f)) fail("top_p must be in (0, 1]" + got(top_p));
  if (top_k < -1) fail("top_k must be -1 or 0 (disable), or at least 1" + got(top_k));
  if (!(min_p >= 0.0f && min_p <= 1.0f)) fail("min_p must be in [0, 1]" + got(min_p));
  if (max_tokens && *max_tokens < 1) fail("max_tokens must be at least 1" + got(*max_tokens));
  if (min_tokens < 0) fail("min_tokens must be greater than or equal to 0" + got(min_tokens));
  if (max_tokens && min_tokens > *max_tokens)
    fail("min_tokens must be less than or equal to max_tokens=" + std::to_string(*max_tokens) +
         got(min_tokens));
  if (logprobs && *logprobs < -1)
    fail("logprobs must be a non-negative value or -1 (the whole vocabulary)" + got(*logprobs));
  if (prompt_logprobs && *prompt_logprobs < -1)
    fail("prompt_logprobs must be a non-negative value or -1 (the whole vocabulary)" +
         got(*prompt_logprobs));
  if (allowed_token_ids) {
    if (allowed_token_ids->empty()) fail("allowed_token_ids must not be empty.");
    for (int32_t id : *allowed_token_ids)
      if (id < 0) fail("allowed_token_ids must be non-negative" + got(id));
  }
  for (const auto& w : bad_words_token_ids) {
    if (w.empty()) fail("bad_words must not contain an empty word.");
    for (int32_t id : w)
      if (id < 0) fail("bad_words token ids must be non-negative" + got(id));
  }
  for (const auto& [id, bias] : logit_bias) {
    if (id < 0) fail("logit_bias token ids must be non-negative" + got(id));
    if (!std::isfinite(bias) || bias < -kMaxLogitBias || bias > kMaxLogitBias)
      fail("logit_bias values must be in [-100, 100]" + got(bias));
  }
  for (int32_t id : stop_token_ids)
    if (id < 0) fail("stop_token_ids must be non-negative" + got(id));
  for (const std::string& s : stop)
    if (s.empty()) fail("stop strings must not be empty.");
}

const char* to_string(PoolingType t) {
  switch (t) {
    case PoolingType::kLast:
      return "LAST";
    case PoolingType::kCls:
      return "CLS";
    case PoolingType::kMean:
      return "MEAN";
  }
  return "?";
}

}  // namespace vllm::engine
