// LLMEngine: the synchronous library entry point (the server's AsyncEngine and the C API wrap
// it). Resolves the EngineConfig against the model (max_model_len, KV block count), validates
// every request at add_request — a bad one is rejected with a message and never disturbs the
// others — and drives EngineCore one step at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/engine_config.h"
#include "engine/engine_core.h"
#include "engine/model_executor.h"
#include "engine/outputs.h"
#include "engine/sampling_params.h"
#include "engine/text_stream.h"

namespace vllm::engine {

class LLMEngine {
 public:
  // Sizes and allocates the KV cache (executor.init_kv_cache). Throws std::invalid_argument
  // when the config cannot work (max_model_len above the model's, no room for one block).
  // Without a text stream factory there is no output text and stop strings are refused.
  LLMEngine(const EngineConfig& config, ModelExecutor& executor,
            TextStreamFactory text_stream_factory = {},
            std::optional<int32_t> eos_token_id = std::nullopt);

  // Throws std::invalid_argument with a user-facing message: bad sampling values, empty or
  // out-of-vocabulary prompt or token ids in the sampling params, more logprobs than
  // max_logprobs, prompt + max_tokens over max_model_len, a request the KV cache can never
  // hold, a priority without the priority policy, or a request id already in use.
  void add_request(const std::string& request_id, std::vector<int32_t> prompt_token_ids,
                   const SamplingParams& params, int64_t priority = 0);
  std::vector<RequestOutput> step();
  bool abort_request(const std::string& request_id);
  bool has_unfinished_requests() const { return core_->has_unfinished_requests(); }

  EngineMetrics metrics() const { return core_->metrics(); }
  // ModelExecutor::kv_cache_resident_bytes; any thread may call it.
  int64_t kv_cache_resident_bytes() const { return executor_.kv_cache_resident_bytes(); }
  // ModelExecutor::prefault_kv_blocks for the blocks `requests` requests of
  // `tokens_per_request` tokens each fill (at most the whole cache), the first a fresh engine
  // hands out; call while no request runs.
  int64_t prefault_kv(int64_t requests, int64_t tokens_per_request) {
    const int64_t bs = config_.block_size;
    return executor_.prefault_kv_blocks(requests * ((tokens_per_request + bs - 1) / bs));
  }
  // The config as resolved: max_model_len and num_gpu_blocks filled in.
  const EngineConfig& config() const { return config_; }
  EngineCore& core() { return *core_; }

 private:
  // add_request's checks of a pooling request (SamplingParams::pooling): the executor can hand
  // hidden states back, dimensions fit, nothing asks for sampling, the prompt fits.
  void check_pooling(const SamplingParams& params, int64_t prompt_len) const;

  EngineConfig config_;
  ModelExecutor& executor_;
  TextStreamFactory text_stream_factory_;
  std::optional<int32_t> eos_token_id_;
  std::mt19937_64 seed_rng_;
  int64_t next_arrival_ = 0;
  std::unique_ptr<EngineCore> core_;
};

}  // namespace vllm::engine
