// Request: one sequence's state as the engine sees it — token ids (prompt + output), how many
// of them have KV computed, its status, its block hashes for prefix caching, its RNG and its
// output text. Owned by the Scheduler from add to finish.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "engine/sampling_params.h"
#include "engine/text_stream.h"

namespace vllm::engine {

namespace so {
class Matcher;
}

enum class RequestStatus {
  WAITING,
  RUNNING,
  PREEMPTED,
  FINISHED_STOPPED,        // eos, stop token id or stop string
  FINISHED_LENGTH_CAPPED,  // max_tokens or max_model_len
  FINISHED_ABORTED,        // abort() by the caller
  FINISHED_IGNORED,        // could never be scheduled (does not fit the KV cache)
};

const char* to_string(RequestStatus s);
bool is_finished(RequestStatus s);
// OpenAI finish_reason: "stop", "length", "abort"; nullptr while unfinished.
const char* finish_reason(RequestStatus s);

// One sampled position's logprobs: the sampled token's own, its rank (1 = argmax) and the
// top-n alternatives, all from log_softmax of the raw logits.
struct TokenLogprobs {
  int32_t token_id = -1;
  float logprob = 0.0f;
  int32_t rank = 0;
  std::vector<std::pair<int32_t, float>> top;  // descending logprob, ties by lower id
};

class Request {
 public:
  Request(std::string request_id, std::vector<int32_t> prompt_token_ids, SamplingParams params,
          int32_t max_tokens, std::optional<int32_t> eos_token_id, uint64_t default_seed,
          int64_t arrival_index, int64_t priority = 0);
  ~Request();

  const std::string request_id;
  const SamplingParams sampling_params;
  const int32_t max_tokens;  // resolved: never nullopt here
  const std::optional<int32_t> eos_token_id;
  const int64_t arrival_index;
  // Lower runs earlier under the priority scheduling policy (vLLM's `priority`); ties by arrival.
  const int64_t priority;

  RequestStatus status = RequestStatus::WAITING;
  // Tokens whose KV is in the cache; the rest of all_token_ids is still to be computed.
  int64_t num_computed_tokens = 0;
  // Prompt tokens served from the prefix cache on first scheduling (-1: not scheduled yet).
  int64_t num_cached_tokens = -1;
  int32_t num_preemptions = 0;
  // Why it stopped: the stop token id or stop string (eos and length leave it empty).
  std::variant<std::monostate, int32_t, std::string> stop_reason;

  // Hashes of this request's full blocks, extended as tokens arrive (kv_cache_manager).
  std::vector<uint64_t> block_hashes;
  // The parent hash of the first block: kRootBlockHash, or one derived from the cache salt.
  const uint64_t block_hash_root;

  // Per-request generator, so a seeded request samples the same tokens in any batch.
  std::mt19937_64 generator;

  // Detokenized output; text_sent is how much has been handed out as deltas.
  std::unique_ptr<TextStream> text_stream;
  std::string output_text;
  size_t text_sent = 0;

  // Structured output (sampling_params.grammar): this request's grammar state, advanced with
  // every output token once active. It lives as long as the request, so preemption (which
  // keeps the output tokens) keeps it too. grammar_active turns true at the first output
  // token, or after one of sampling_params.grammar_start_sequences.
  std::unique_ptr<so::Matcher> matcher;
  bool grammar_active = false;
  // The grammar_implicit_starts the grammar cannot start with: masked while it waits.
  std::vector<int32_t> masked_reasoning_ends;
  bool masks_reasoning_ends() const {
    return matcher != nullptr && !grammar_active && !masked_reasoning_ends.empty();
  }
  // sampling_params.thinking_budget: whether the output is inside the reasoning now, and how
  // many tokens it has there (kept through preemption with the output tokens).
  bool in_thinking = false;
  int32_t thinking_tokens = 0;
  bool thinking_over_budget() const {
    return in_thinking && sampling_params.thinking_budget &&
           thinking_tokens >= *sampling_params.thinking_budget;
  }
  bool constrained_now() const { return matcher != nullptr && grammar_active; }

  // A pooling request's (sampling_params.pooling) pooled hidden state so far: the sum of its
  // prompt rows for MEAN (reset when the prompt starts over after preemption), the row itself
  // for LAST and CLS. Empty until its first row.
  std::vector<float> pooled;
  bool is_pooling() const { return sampling_params.pooling.has_value(); }

  // Per sampled token, when sampling_params.logprobs is set.
  std::vector<TokenLogprobs> logprobs;

  // When sampling_params.prompt_logprobs is set: prompt token k+1's logprobs come from the
  // logits at position k, computed as the prefill chunks run. num_prompt_logprobs counts the
  // positions done (it survives preemption, so a recomputed prefix is not scored twice);
  // prompt_logprobs holds those not yet handed out (they go with the first output).
  int64_t num_prompt_logprobs = 0;
  std::vector<TokenLogprobs> prompt_logprobs;
  bool wants_prompt_logprobs() const { return sampling_params.prompt_logprobs.has_value(); }
  // Prompt positions whose logits this request still needs for its prompt logprobs.
  int64_t num_prompt_logprob_positions() const {
    return wants_prompt_logprobs() ? num_prompt_tokens_ - 1 : 0;
  }

  const std::vector<int32_t>& all_token_ids() const { return all_token_ids_; }
  int64_t num_prompt_tokens() const { return num_prompt_tokens_; }
  int64_t num_tokens() const { return static_cast<int64_t>(all_token_ids_.size()); }
  int64_t num_output_tokens() const { return num_tokens() - num_prompt_tokens_; }
  const int32_t* prompt_token_ids() const { return all_token_ids_.data(); }
  const int32_t* output_token_ids() const { return all_token_ids_.data() + num_prompt_tokens_; }
  void append_output_token(int32_t id) { all_token_ids_.push_back(id); }
  bool is_finished() const { return engine::is_finished(status); }

 private:
  std::vector<int32_t> all_token_ids_;
  int64_t num_prompt_tokens_;
};

}  // namespace vllm::engine
