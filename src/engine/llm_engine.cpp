// LLMEngine: config resolution and request validation around EngineCore.
#include "engine/llm_engine.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "engine/structured_output/matcher.h"

namespace vllm::engine {
namespace {
[[noreturn]] void reject(const std::string& msg) { throw std::invalid_argument(msg); }
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// MemAvailable from /proc/meminfo in bytes (0 when unreadable).
int64_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  int64_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  return 0;
}
}  // namespace

LLMEngine::LLMEngine(const EngineConfig& config, ModelExecutor& executor,
                     TextStreamFactory text_stream_factory, std::optional<int32_t> eos_token_id)
    : config_(config),
      executor_(executor),
      text_stream_factory_(std::move(text_stream_factory)),
      eos_token_id_(eos_token_id),
      seed_rng_(config.seed) {
  const int32_t model_len = executor.max_model_len();
  const bool fit_to_cache = config_.max_model_len == -1;
  if (config_.max_model_len <= 0) config_.max_model_len = model_len;
  if (config_.max_model_len > model_len)
    reject(
        "max_model_len=" + std::to_string(config_.max_model_len) +
        " is larger than the model's maximum length of " + std::to_string(model_len) +
        (executor.max_model_len_note().empty() ? "" : " (" + executor.max_model_len_note() + ")"));
  if (config_.block_size < 1) reject("block_size must be at least 1");
  if (config_.max_num_batched_tokens < 1) reject("max_num_batched_tokens must be at least 1");
  if (config_.max_num_seqs < 1) reject("max_num_seqs must be at least 1");
  // vLLM's SchedulerConfig checks, in its words.
  if (config_.max_num_active_seqs < 0) reject("max_num_active_seqs must be at least 1");
  if (config_.max_num_active_seqs > config_.max_num_seqs)
    reject("max_num_active_seqs (" + std::to_string(config_.max_num_active_seqs) +
           ") cannot be greater than max_num_seqs (" + std::to_string(config_.max_num_seqs) + ").");
  if (config_.max_num_scheduled_tokens < 0) reject("max_num_scheduled_tokens must be at least 1");
  if (config_.max_num_scheduled_tokens > config_.max_num_batched_tokens)
    reject("max_num_scheduled_tokens (" + std::to_string(config_.max_num_scheduled_tokens) +
           ") cannot be greater than max_num_batched_tokens (" +
           std::to_string(config_.max_num_batched_tokens) + ")");
  if (config_.long_prefill_token_threshold < 0)
    reject("long_prefill_token_threshold must be at least 0");
  if (config_.long_prefill_token_threshold > config_.max_model_len)
    reject("long_prefill_token_threshold (" + std::to_string(config_.long_prefill_token_threshold) +
           ") cannot be greater than the max_model_len (" + std::to_string(config_.max_model_len) +
           ").");
  if (!config_.kv_cache_dtype) config_.kv_cache_dtype = executor.default_kv_cache_dtype();
  const vt::DType kv_dtype = *config_.kv_cache_dtype;
  // An explicit block count is a test / benchmark knob: only a cache sized from memory must hold
  // a whole context (below).
  const bool sized_from_memory = !config_.num_gpu_blocks;
  if (!config_.num_gpu_blocks && config_.gpu_memory_utilization) {
    const double u = *config_.gpu_memory_utilization;
    if (!(u > 0.0 && u <= 1.0))
      reject("gpu_memory_utilization must be in (0, 1], got " + std::to_string(u));
    const std::optional<int64_t> device = executor.device_memory_available();
    const int64_t avail = device ? *device : available_memory_bytes();
    if (avail <= 0)
      reject(device ? "gpu_memory_utilization: the device has no memory left for the KV cache "
                      "after the weights"
                    : "gpu_memory_utilization: cannot read MemAvailable from /proc/meminfo");
    const int64_t per_block = executor.kv_bytes_per_block(config_.block_size, kv_dtype);
    const int64_t useful = per_block * cdiv(config_.max_model_len, config_.block_size) *
                           static_cast<int64_t>(config_.max_num_seqs);
    config_.kv_cache_memory_bytes = std::min(static_cast<int64_t>(u * double(avail)), useful);
  }
  if (!config_.num_gpu_blocks) {
    const int64_t per_block = executor.kv_bytes_per_block(config_.block_size, kv_dtype);
    config_.num_gpu_blocks = per_block > 0 ? config_.kv_cache_memory_bytes / per_block : 0;
  }
  if (*config_.num_gpu_blocks < 1)
    reject("the KV cache has room for no block: raise kv_cache_memory_bytes (one block of " +
           std::to_string(config_.block_size) + " tokens takes " +
           std::to_string(executor.kv_bytes_per_block(config_.block_size, kv_dtype)) + " bytes)");
  const int64_t cap = *config_.num_gpu_blocks * static_cast<int64_t>(config_.block_size);
  if (fit_to_cache) {  // vLLM's auto-fit: no longer than one sequence the cache can hold
    if (cap < config_.max_model_len) config_.max_model_len = static_cast<int32_t>(cap);
    if (config_.long_prefill_token_threshold > config_.max_model_len)
      config_.long_prefill_token_threshold = config_.max_model_len;
  } else if (sized_from_memory && cap < config_.max_model_len) {
    // vLLM's start-up check (_check_enough_kv_cache_memory), in its words: the cache must hold
    // one sequence of the full context.
    const int64_t per_block = executor.kv_bytes_per_block(config_.block_size, kv_dtype);
    auto gib = [](int64_t b) {
      char s[32];
      std::snprintf(s, sizeof s, "%.2f", static_cast<double>(b) / double(1 << 30));
      return std::string(s);
    };
    reject("To serve at least one request with the model's max seq len (" +
           std::to_string(config_.max_model_len) + "), (" +
           gib(per_block * cdiv(config_.max_model_len, config_.block_size)) +
           " GiB KV cache is needed, which is larger than the available KV cache memory (" +
           gib(per_block * *config_.num_gpu_blocks) +
           " GiB). Based on the available memory, the estimated maximum model length is " +
           std::to_string(cap) +
           ". Try increasing --gpu-memory-utilization or --kv-cache-memory, or decreasing "
           "--max-model-len (--max-model-len auto fits it to the cache).");
  }
  executor.init_kv_cache(*config_.num_gpu_blocks, config_.block_size, kv_dtype);
  SchedulerConfig sc;
  sc.max_num_batched_tokens = config_.max_num_batched_tokens;
  sc.max_num_seqs = config_.max_num_seqs;
  sc.max_model_len = config_.max_model_len;
  sc.policy = config_.scheduling_policy;
  sc.long_prefill_token_threshold = config_.long_prefill_token_threshold;
  sc.long_prefill_token_threshold_adaptive = config_.long_prefill_token_threshold_adaptive;
  sc.max_num_active_seqs = config_.max_num_active_seqs;
  sc.max_num_scheduled_tokens = config_.max_num_scheduled_tokens;
  sc.max_loras = config_.max_loras;
  DecodeGraphOptions graph = config_.graph;
  graph.enabled = graph.enabled && !config_.enforce_eager;
  core_ = std::make_unique<EngineCore>(sc, *config_.num_gpu_blocks, config_.block_size,
                                       config_.enable_prefix_caching, executor, graph);
}

void LLMEngine::add_request(const std::string& request_id, std::vector<int32_t> prompt_token_ids,
                            const SamplingParams& params, int64_t priority) {
  if (request_id.empty()) reject("request id must not be empty");
  if (core_->scheduler().get_request(request_id))
    reject("request id '" + request_id + "' is already in use");
  params.validate();
  if (params.lora_id != 0 && !executor_.has_lora(params.lora_id))
    reject("LoRA adapter id " + std::to_string(params.lora_id) + " is not loaded");
  if (params.n != 1) reject("n > 1 is not supported yet; submit n separate requests");
  const int64_t vocab = executor_.vocab_size();
  const int64_t prompt_len = static_cast<int64_t>(prompt_token_ids.size());
  if (prompt_len == 0) reject("the prompt must contain at least one token");
  for (int32_t t : prompt_token_ids)
    if (t < 0 || t >= vocab)
      reject("prompt token id " + std::to_string(t) + " is outside the vocabulary [0, " +
             std::to_string(vocab) + ")");
  auto check_ids = [&](const char* what, int32_t t) {
    if (t >= vocab)
      reject(std::string(what) + " " + std::to_string(t) + " is outside the vocabulary [0, " +
             std::to_string(vocab) + ")");
  };
  for (int32_t t : params.stop_token_ids) check_ids("stop token id", t);
  if (params.allowed_token_ids)
    for (int32_t t : *params.allowed_token_ids) check_ids("allowed_token_ids: token id", t);
  for (const auto& w : params.bad_words_token_ids)
    for (int32_t t : w) check_ids("bad_words: token id", t);
  for (const auto& [t, bias] : params.logit_bias) check_ids("logit_bias: token id", t);
  // vLLM's wording; -1 asks for the whole vocabulary.
  const int32_t max_lp = config_.max_logprobs;
  auto check_logprobs = [&](const char* what, const std::optional<int32_t>& n) {
    if (!n || max_lp < 0) return;
    const int64_t want = *n < 0 ? vocab : *n;
    if (want > max_lp)
      reject(std::string("Requested ") + what + " of " + std::to_string(want) +
             ", which is greater than max allowed: " + std::to_string(max_lp));
  };
  check_logprobs("sample logprobs", params.logprobs);
  check_logprobs("prompt logprobs", params.prompt_logprobs);
  if (priority != 0 && config_.scheduling_policy != SchedulingPolicy::kPriority)
    reject("Got priority " + std::to_string(priority) +
           " but priority scheduling is not enabled (start with --scheduling-policy priority)");
  const int64_t max_len = config_.max_model_len;
  if (params.pooling) {
    check_pooling(params, prompt_len);
    auto req = std::make_unique<Request>(request_id, std::move(prompt_token_ids), params, 0,
                                         std::nullopt, seed_rng_(), next_arrival_++, priority);
    core_->add_request(std::move(req));
    return;
  }
  if (prompt_len >= max_len)
    reject("The prompt (" + std::to_string(prompt_len) +
           " tokens) is too long: the maximum model length is " + std::to_string(max_len) +
           " tokens, including at least one generated token.");
  const int64_t max_tokens = params.max_tokens ? *params.max_tokens : max_len - prompt_len;
  if (prompt_len + max_tokens > max_len)
    reject("This model's maximum context length is " + std::to_string(max_len) +
           " tokens. However, you requested " + std::to_string(prompt_len + max_tokens) +
           " tokens (" + std::to_string(prompt_len) + " in the prompt, " +
           std::to_string(max_tokens) + " in max_tokens). Please reduce the prompt or max_tokens.");
  if (params.min_tokens > max_tokens)
    reject("min_tokens=" + std::to_string(params.min_tokens) + " exceeds the " +
           std::to_string(max_tokens) + " tokens that fit after the prompt");
  const int64_t blocks = cdiv(prompt_len + max_tokens, config_.block_size);
  if (blocks > *config_.num_gpu_blocks)
    reject("The request needs " + std::to_string(blocks) + " KV cache blocks (" +
           std::to_string(prompt_len + max_tokens) + " tokens) but the cache holds only " +
           std::to_string(*config_.num_gpu_blocks) +
           "; lower max_tokens or give the KV cache more memory.");
  if (params.grammar && params.grammar->vocab_size() > vocab)
    reject("structured output: the grammar was compiled for a vocabulary of " +
           std::to_string(params.grammar->vocab_size()) + " tokens, but the model has " +
           std::to_string(vocab));
  if (!params.grammar_start_sequences.empty() && !params.grammar)
    reject("grammar_start_sequences are set but there is no grammar");
  for (const auto& seq : params.grammar_start_sequences)
    if (seq.empty() ||
        std::any_of(seq.begin(), seq.end(), [&](int32_t t) { return t < 0 || t >= vocab; }))
      reject(
          "grammar_start_sequences: a sequence is empty or holds a token outside the vocabulary");
  if (!params.grammar_implicit_starts.empty() && params.grammar_start_sequences.empty())
    reject("grammar_implicit_starts are set but the grammar does not wait for a start sequence");
  if (std::any_of(params.grammar_implicit_starts.begin(), params.grammar_implicit_starts.end(),
                  [&](int32_t t) { return t < 0 || t >= vocab; }))
    reject("grammar_implicit_starts: a token outside the vocabulary");
  if (params.thinking_budget &&
      (*params.thinking_budget < 0 || params.think_end_token < 0 ||
       params.think_end_token >= vocab || params.think_start_token >= vocab))
    reject(
        "thinking_token_budget needs a budget >= 0 and the reasoning's start and end tokens "
        "in the vocabulary");
  if (!params.stop.empty() && !text_stream_factory_)
    reject("stop strings need a detokenizer, and this engine was built without one");

  auto req = std::make_unique<Request>(request_id, std::move(prompt_token_ids), params,
                                       static_cast<int32_t>(max_tokens), eos_token_id_, seed_rng_(),
                                       next_arrival_++, priority);
  if (text_stream_factory_)
    req->text_stream = text_stream_factory_(
        std::span<const int32_t>(req->prompt_token_ids(), static_cast<size_t>(prompt_len)),
        params.skip_special_tokens);
  if (params.grammar) {
    req->matcher = std::make_unique<so::Matcher>(params.grammar);
    req->grammar_active = params.grammar_start_sequences.empty();
    for (int32_t t : params.grammar_implicit_starts)
      if (!so::Matcher(params.grammar).accept(t)) req->masked_reasoning_ends.push_back(t);
  }
  if (params.thinking_budget)  // the prompt ends inside the reasoning (<think> left open)
    for (int64_t i = prompt_len - 1; i >= 0; --i) {
      const int32_t t = req->prompt_token_ids()[i];
      if (t == params.think_start_token || t == params.think_end_token) {
        req->in_thinking = t == params.think_start_token;
        break;
      }
    }
  core_->add_request(std::move(req));
}

void LLMEngine::check_pooling(const SamplingParams& params, int64_t prompt_len) const {
  const int32_t hidden = executor_.hidden_size();
  if (hidden <= 0) reject("this model executor cannot run pooling (embedding) requests");
  const PoolingParams& pp = *params.pooling;
  if (pp.dimensions < 0 || pp.dimensions > hidden)
    reject("dimensions must be in [1, " + std::to_string(hidden) + "], got " +
           std::to_string(pp.dimensions));
  if (params.grammar || params.logprobs || params.prompt_logprobs || !params.stop.empty() ||
      params.thinking_budget)
    reject(
        "a pooling request samples no token: structured output, logprobs, prompt_logprobs, "
        "stop strings and a thinking budget do not apply to it");
  const int64_t max_len = config_.max_model_len;
  if (prompt_len > max_len)
    reject("The prompt (" + std::to_string(prompt_len) +
           " tokens) is too long: the maximum model length is " + std::to_string(max_len) +
           " tokens.");
  const int64_t blocks = cdiv(prompt_len, config_.block_size);
  if (blocks > *config_.num_gpu_blocks)
    reject("The request needs " + std::to_string(blocks) + " KV cache blocks (" +
           std::to_string(prompt_len) + " tokens) but the cache holds only " +
           std::to_string(*config_.num_gpu_blocks) + "; give the KV cache more memory.");
}

std::vector<RequestOutput> LLMEngine::step() { return core_->step(); }

bool LLMEngine::abort_request(const std::string& request_id) {
  return core_->abort_request(request_id);
}

}  // namespace vllm::engine
