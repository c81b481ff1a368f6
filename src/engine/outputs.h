// RequestOutput and EngineMetrics: what a step hands back to its caller (CLI, server, C API).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "engine/request.h"

namespace vllm::engine {

// One request's progress in one step: the tokens and text produced since the last output.
struct RequestOutput {
  std::string request_id;
  std::vector<int32_t> new_token_ids;
  std::string text_delta;
  std::vector<TokenLogprobs> logprobs;  // one per new token, when requested
  // With the first output of a request that asked for prompt_logprobs: one entry per prompt
  // token after the first (the first has no logits to be scored by).
  std::vector<TokenLogprobs> prompt_logprobs;
  bool finished = false;
  std::string finish_reason;  // "stop", "length", "abort" once finished
  std::variant<std::monostate, int32_t, std::string> stop_reason;
  // A pooling request's result (sampling_params.pooling), with its final output: the pooled,
  // truncated and normalized vector.
  std::vector<float> embedding;
  std::string error;  // set when the engine gave up on the request (never fits the KV cache)
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;  // so far, including new_token_ids
  int64_t num_cached_tokens = 0;  // prompt tokens served from the prefix cache
};

// Counters for /metrics (names follow vLLM's vllm:* Prometheus metrics).
struct EngineMetrics {
  int64_t num_requests_running = 0;
  int64_t num_requests_waiting = 0;
  float kv_cache_usage = 0.0f;  // fraction of blocks held by requests
  // Bytes of the KV cache's pages in host memory (the cache is mapped lazily). Filled by
  // AsyncEngine::metrics() when asked, not every step.
  int64_t kv_cache_resident_bytes = 0;
  int64_t prefix_cache_queries = 0;
  int64_t prefix_cache_hits = 0;
  int64_t prompt_tokens_total = 0;
  int64_t generation_tokens_total = 0;
  int64_t num_preemptions_total = 0;
  int64_t num_requests_finished = 0;
  int64_t num_steps = 0;
  // Structured output: host time spent on grammar masks (fill_mask, applying it, accept),
  // the logits rows that were masked and the steps that had at least one.
  double structured_output_seconds = 0;
  int64_t structured_output_rows = 0;
  int64_t structured_output_steps = 0;
  // The LoRA adapter ids of the running and of the waiting requests, ascending, each once
  // (vLLM's running_lora_adapters / waiting_lora_adapters).
  std::vector<int32_t> running_loras, waiting_loras;
};

}  // namespace vllm::engine
