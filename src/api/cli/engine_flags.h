// Engine flags shared by `vllm generate`, `vllm bench` and `vllm serve`, named as in
// Python vLLM.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "engine/engine_config.h"

namespace vllm::cli {

struct EngineFlags {
  engine::EngineConfig cfg;
  int64_t num_gpu_blocks = 0;
  int64_t kv_cache_memory = 0;
  bool prefix = true;
  std::string kv_cache_dtype = "auto";

  void add(CLI::App& app) {
    app.add_option("--max-num-seqs", cfg.max_num_seqs, "requests in one batch at most");
    app.add_option("--max-model-len", cfg.max_model_len, "context length (default: the model's)");
    app.add_option("--max-num-batched-tokens", cfg.max_num_batched_tokens, "tokens per step");
    app.add_option("--block-size", cfg.block_size, "KV cache block size in tokens");
    app.add_flag("--enable-prefix-caching,!--no-enable-prefix-caching", prefix,
                 "reuse KV blocks of shared prompt prefixes (default on)");
    app.add_option("--kv-cache-memory", kv_cache_memory, "KV cache size in bytes");
    app.add_option("--kv-cache-dtype", kv_cache_dtype,
                   "KV cache element type: auto (bfloat16 for bf16 checkpoints, float16 "
                   "otherwise), bfloat16, float16 or float32")
        ->check(CLI::IsMember({"auto", "float32", "float16", "fp16", "half", "bfloat16", "bf16"}));
    app.add_option("--num-gpu-blocks-override", num_gpu_blocks, "exactly this many KV blocks");
    app.add_flag("--enforce-eager", cfg.enforce_eager, "no decode step graphs");
    app.add_option("--seed", cfg.seed, "seed of requests that bring none");
  }
  engine::EngineConfig resolve() const {
    engine::EngineConfig c = cfg;
    c.enable_prefix_caching = prefix;
    if (num_gpu_blocks > 0) c.num_gpu_blocks = num_gpu_blocks;
    if (kv_cache_memory > 0) c.kv_cache_memory_bytes = kv_cache_memory;
    if (kv_cache_dtype == "float32")
      c.kv_cache_dtype = vt::DType::F32;
    else if (kv_cache_dtype == "bfloat16" || kv_cache_dtype == "bf16")
      c.kv_cache_dtype = vt::DType::BF16;
    else if (kv_cache_dtype != "auto")
      c.kv_cache_dtype = vt::DType::F16;
    return c;
  }
};

}  // namespace vllm::cli
