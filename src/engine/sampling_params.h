// SamplingParams: how one request turns logits into tokens and when it stops. Field names and
// defaults follow Python vLLM's SamplingParams so requests translate one to one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace vllm::engine {

namespace so {
class CompiledGrammar;
}

// How a pooling request turns its prompt's final hidden states into one vector (vLLM's
// PoolingParams for the "embed" task, with the model's pooler config merged in by the API layer).
enum class PoolingType { kLast, kCls, kMean };  // vLLM's seq_pooling_type LAST / CLS / MEAN
const char* to_string(PoolingType t);

struct PoolingParams {
  PoolingType type = PoolingType::kLast;
  // vLLM's use_activation for embeddings: L2-normalize (after the Matryoshka truncation).
  bool normalize = true;
  // vLLM's dimensions: keep the first n values of the pooled vector; 0: all of them.
  int32_t dimensions = 0;
  // MEAN and CLS need hidden states of prompt positions a prefix-cache hit would skip.
  bool skips_prefix_cache() const { return type != PoolingType::kLast; }
};

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
  // Top-n logprobs of each sampled position (raw logits); -1: the whole vocabulary.
  std::optional<int32_t> logprobs;
  // Top-n logprobs of every prompt position after the first (vLLM's prompt_logprobs); -1: the
  // whole vocabulary. Such a request computes the logits of its whole prompt and never reads
  // the prefix cache.
  std::optional<int32_t> prompt_logprobs;
  bool include_stop_str_in_output = false;
  bool skip_special_tokens = true;
  // vLLM's cache_salt: mixed into the hash of the request's first KV block, so its prompt only
  // reuses cached blocks of requests that brought the same salt (tenants sharing a server
  // cannot learn each other's prompts from prefix-cache timing). Empty: no salt.
  std::string cache_salt;
  // vLLM's LoRARequest.lora_int_id: the LoRA adapter the request runs with (0: the base model).
  // Carried with the sampling params so it reaches the runner; its KV blocks are hashed apart
  // from other adapters' (an adapter changes every layer's K/V).
  int32_t lora_id = 0;
  // Set: a pooling request (an embedding). It runs its prompt and nothing more: no token is
  // sampled, and it finishes with RequestOutput::embedding; the sampling fields are unused.
  std::optional<PoolingParams> pooling;

  // Logits processors (Sampler::apply_logits_processors), applied in vLLM V1's order:
  // allowed_token_ids, bad words, min_tokens' stop masking, logit_bias.
  // Only these ids may be sampled (nullopt: any).
  std::optional<std::vector<int32_t>> allowed_token_ids;
  // Token-id sequences that must never be completed by the output: when the output ends with
  // all but the last id of one, that last id is masked. (The API layer tokenizes vLLM's
  // `bad_words` strings into these.)
  std::vector<std::vector<int32_t>> bad_words_token_ids;
  // Added to the logit of the token id, in [-100, 100].
  std::vector<std::pair<int32_t, float>> logit_bias;

  // Structured output: a grammar compiled for the model's tokenizer (the API layer compiles
  // it before submission, so a bad schema is refused before anything is queued). Each
  // request gets its own matcher over it; masked tokens go to -inf before everything else.
  std::shared_ptr<const so::CompiledGrammar> grammar;
  // The grammar only starts once the output ends with one of these token sequences (the
  // reasoning parser's end: </think> as one token, or Olmo 3's "</" or "\u0120</", "think",
  // ">"): the reasoning before it is unconstrained. Empty: from the first output token.
  std::vector<std::vector<int32_t>> grammar_start_sequences;
  // Tokens that end the reasoning implicitly and are themselves content (vLLM's engine-based
  // parsers: qwen3's <tool_call>, ...): one sampled while the grammar waits starts it, as its
  // first token. One the grammar cannot start with is masked until then (vLLM's
  // _masked_reasoning_ends), so the reasoning cannot end in an output the grammar rejects.
  std::vector<int32_t> grammar_implicit_starts;

  // vLLM's thinking_token_budget: once this many output tokens have been generated inside the
  // reasoning (after think_start_token; from the first output token when the prompt's last
  // think token is the start token), only think_end_token may be sampled until it is.
  // nullopt: no budget.
  std::optional<int32_t> thinking_budget;
  int32_t think_start_token = -1, think_end_token = -1;

  bool greedy() const { return temperature < kSamplingEps; }
  // Whether any logits processor can change this request's logits.
  bool has_logits_processors() const {
    return allowed_token_ids.has_value() || !bad_words_token_ids.empty() || !logit_bias.empty() ||
           min_tokens > 0 || grammar != nullptr;
  }

  // Throws std::invalid_argument naming the offending field and its allowed range. Token ids
  // are checked against the vocabulary by LLMEngine, logprob counts against max_logprobs.
  void validate() const;
};

}  // namespace vllm::engine
