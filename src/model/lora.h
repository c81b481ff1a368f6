// LoRA adapters over a loaded model (vLLM's --enable-lora / --lora-modules): a PEFT adapter
// folder (adapter_config.json + adapter_model.safetensors) read into per-layer low-rank pairs,
// and the op that adds them to a projection's output, token by token, for the tokens whose
// request asked for that adapter. The base weights are never touched, so requests of any
// number of adapters (and none) share one batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/config.h"
#include "model/layers.h"
#include "vt/thread_pool.h"

namespace vllm::model {

// One adapted projection: y += B (A x), with PEFT's scaling (lora_alpha / r, or
// lora_alpha / sqrt(r) under rsLoRA) folded into B.
struct LoraMatrix {
  int64_t rank = 0, in = 0, out = 0;
  std::vector<float> a;  // [rank][in]
  std::vector<float> b;  // [out][rank], scaled
  bool empty() const { return rank == 0; }
};

// The adapted projections of one decoder layer (empty: not adapted). A fused qkv_proj /
// gate_up_proj adapter is split by B's rows into q | k | v and gate | up, A shared.
struct LoraLayer {
  LoraMatrix q, k, v, o, gate, up, down;
};

struct LoraAdapter {
  std::string name, path;
  int64_t max_rank = 0;                     // the largest rank of any of its projections
  std::vector<std::string> target_modules;  // as adapter_config.json names them
  std::vector<LoraLayer> layers;            // one per model layer
};

struct LoraLoadOptions {
  int64_t max_lora_rank = 16;  // vLLM's --max-lora-rank: a larger adapter is refused
  // vLLM's --lora-dtype: "auto" keeps the adapter's values as stored; "float16" / "bfloat16"
  // round them to that type once at load (the products run in fp32 either way).
  std::string dtype = "auto";
};

// Reads and checks a PEFT LoRA adapter folder against the model it will run on. Throws
// LoadError naming the file and the problem: a missing or malformed file, a feature vLLM
// refuses (DoRA, bias, modules_to_save, ...), a rank above max_lora_rank, a tensor whose
// module the model lacks or cannot adapt here (an MoE layer's experts, latent attention), a
// shape that does not fit the model.
LoraAdapter load_lora_adapter(const std::string& name, const std::string& dir, const ModelConfig& c,
                              const std::vector<LayerWeights>& layers, const LoraLoadOptions& opts);

// What one forward pass reads to apply adapters: per token the adapter id (0: none), and per
// id this layer's matrices (by_id[id] null: that adapter leaves the layer alone).
struct LoraRefs {
  const int32_t* ids = nullptr;  // [n_tok]
  const LoraLayer* const* by_id = nullptr;
  int32_t n_ids = 0;
};

// y[t] += B (A x[t]) for every token t in [0, n) whose adapter adapts `which` of this layer.
// Each token's sums run in one fixed order, whatever the batch (batch invariance).
void lora_apply(const LoraRefs& r, LoraMatrix LoraLayer::*which, const float* x, int64_t ldx,
                float* y, int64_t ldy, int64_t n, vt::ThreadPool& pool);

}  // namespace vllm::model
