// EngineConfig: the engine's knobs, named as Python vLLM's CacheConfig / SchedulerConfig
// fields and CLI flags (--block-size, --num-gpu-blocks-override, --kv-cache-memory, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/runner/decode_graph.h"
#include "engine/scheduler.h"
#include "vt/dtype.h"

namespace vllm::engine {

struct EngineConfig {
  // 32, not vLLM's 16 on GPUs (its CPU backend prefers 128): the CPU attention reads a page's
  // K rows per kv head as 8 KiB runs instead of 4 KiB ones, fewer and longer streams for the
  // prefetchers. 2-core Zen 5 VM, Qwen3-0.6B shape: batch-32 decode at 256-320 positions
  // (`vllm bench latency --input-len 256 --output-len 64 --batch-size 32`) Q5_K_M 462-488 ->
  // 508-527 tok/s, Q4_K_M batch-1 decode at 4096 positions 49.7 -> 58.5, 32 requests +2-5%;
  // batch-1 at 128 positions unchanged; 64 and 128 read no better than 16.
  int block_size = 32;
  // Exactly this many KV blocks; otherwise derived from kv_cache_memory_bytes.
  std::optional<int64_t> num_gpu_blocks;
  int64_t kv_cache_memory_bytes = int64_t{1} << 30;
  // --gpu-memory-utilization on the CPU: when set (and num_gpu_blocks is not), the KV cache
  // takes this fraction of the memory available (MemAvailable) once the model is loaded, but no
  // more than max_num_seqs sequences of max_model_len tokens can use. Replaces
  // kv_cache_memory_bytes.
  std::optional<double> gpu_memory_utilization;
  // --kv-cache-dtype: nullopt ("auto") = the executor's default, bf16 for bf16 checkpoints and
  // fp16 otherwise (as vLLM and llama.cpp keep 16-bit caches: half the bytes attention reads per
  // step); F32 for the fp32 reference gates. LLMEngine fills in what auto resolved to.
  std::optional<vt::DType> kv_cache_dtype;
  // --dtype: the activations of BF16 weight products (the only products it changes; the int8
  // kernels quantize activations per block, F16 products keep them fp32). true ("bfloat16"):
  // rounded to bf16 once per product, the arithmetic of vLLM running a bf16 checkpoint and of
  // AVX512-BF16's vdpbf16ps, which then runs them where the CPU has it. false ("float32",
  // "float16"): fp32, what transformers computes in fp32 (the reference gates). nullopt
  // ("auto"): VT_BF16_ACTIVATIONS where it is set, else true. Per process
  // (model::LoadOptions::bf16_activations), applied by api::LLM::load.
  std::optional<bool> bf16_activations;
  int64_t max_num_batched_tokens = 2048;
  int32_t max_num_seqs = 256;
  // vLLM's scheduler knobs (SchedulerConfig has the rules): --long-prefill-token-threshold
  // (0: off) and its -adaptive switch, --max-num-active-seqs and --max-num-scheduled-tokens
  // (0: max_num_seqs / max_num_batched_tokens).
  int64_t long_prefill_token_threshold = 0;
  bool long_prefill_token_threshold_adaptive = false;
  int32_t max_num_active_seqs = 0;
  int64_t max_num_scheduled_tokens = 0;
  // vLLM's --max-loras: distinct LoRA adapters per step (SchedulerConfig::max_loras; 0: any).
  int32_t max_loras = 0;
  // 0: the model's own limit (ModelExecutor::max_model_len()). -1 (vLLM's `auto`): the model's,
  // lowered to what the KV cache holds when that is less.
  int32_t max_model_len = 0;
  bool enable_prefix_caching = true;
  // --scheduling-policy: fcfs, or priority (requests' `priority`, lower first).
  SchedulingPolicy scheduling_policy = SchedulingPolicy::kFcfs;
  // --max-logprobs: the most logprobs / prompt_logprobs a request may ask for (-1: no limit).
  int32_t max_logprobs = 20;
  // Seed of the generators of requests that bring no seed of their own.
  uint64_t seed = 0;
  // --device: where the model runs: "cpu", or "cuda" (device 0; CUDA builds only, see
  // docs/CUDA.md). The api layer picks the executor from it (api::LLM::load).
  std::string device = "cpu";
  // --enforce-eager: no decode step graphs (also VT_DECODE_GRAPH=0).
  bool enforce_eager = false;
  // --disable-sliding-window (model::LoadOptions::disable_sliding_window).
  bool disable_sliding_window = false;
  // --hf-overrides: a JSON object whose fields replace config.json's (model::LoadOptions).
  std::string hf_overrides;
  // Decode graph knobs; strict / recapture_every also come from VT_GRAPH_STRICT and
  // VT_RECAPTURE_EVERY (read once).
  DecodeGraphOptions graph;
};

}  // namespace vllm::engine
