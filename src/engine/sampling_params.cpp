// Validation of SamplingParams, with the same bounds and wording style as Python vLLM.
#include "engine/sampling_params.h"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace vllm::engine {
namespace {

// Bounds that keep one request from asking for unbounded work.
constexpr int32_t kMaxN = 128;
constexpr int32_t kMaxLogprobs = 20;

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
  if (logprobs && (*logprobs < 0 || *logprobs > kMaxLogprobs))
    fail("logprobs must be in [0, " + std::to_string(kMaxLogprobs) + "]" + got(*logprobs));
  for (int32_t id : stop_token_ids)
    if (id < 0) fail("stop_token_ids must be non-negative" + got(id));
  for (const std::string& s : stop)
    if (s.empty()) fail("stop strings must not be empty.");
}

}  // namespace vllm::engine
