// Logprobs in OpenAI's and vLLM's JSON shapes: completions' parallel lists (tokens,
// token_logprobs, top_logprobs, text_offset), chat's content list, and vLLM's prompt_logprobs
// (a list of {token id: {logprob, rank, decoded_token}} with null for the first token).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/request.h"

namespace vllm::api {

// The text a token is shown as ("token_id:N" under return_tokens_as_token_ids).
using TokenLabel = std::function<std::string(int32_t)>;

// JSON has no -inf; vLLM reports such logprobs as -9999.0.
double finite_logprob(float lp);

// One position of a completions logprobs object: its token and, unless it is the first
// prompt token (which nothing scores), its logprobs.
struct LogprobEntry {
  int32_t token_id = -1;
  const engine::TokenLogprobs* lp = nullptr;
};

// Completions "logprobs": per entry the token's label, its logprob (null for an unscored
// entry), a {label: logprob} object of the top alternatives plus the token itself (null for
// an unscored entry), and the character offset where the token's text starts. `text_offset`
// is where the first entry starts; it is advanced past the entries.
nlohmann::json completion_logprobs(const std::vector<LogprobEntry>& entries, size_t& text_offset,
                                   const TokenLabel& label);

// Chat "logprobs": {"content": [{token, logprob, bytes, top_logprobs: [...]}, ...]}.
nlohmann::json chat_logprobs(const std::vector<engine::TokenLogprobs>& lps,
                             const TokenLabel& label);

// vLLM's prompt_logprobs: [null, {"<id>": {"logprob", "rank", "decoded_token"}, ...}, ...],
// each object holding the prompt token first, then the top alternatives.
nlohmann::json prompt_logprobs(const std::vector<engine::TokenLogprobs>& lps,
                               const TokenLabel& label);

}  // namespace vllm::api
