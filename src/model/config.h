// ModelConfig: the hyperparameters of a decoder-only model, read from a Hugging Face
// config.json (+ generation_config.json) or from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vt/cpu/kernels.h"

namespace vllm::model {

class GgufFile;

struct RopeScaling {
  std::string type;  // "" (none), "llama3", "linear"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
  std::string architecture;  // Hugging Face class name, e.g. "Qwen3ForCausalLM"
  std::string source;        // the file or folder it came from (for messages)
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  vt::cpu::RopeStyle rope_style = vt::cpu::RopeStyle::kNeox;
  int64_t max_position_embeddings = 2048;
  bool tie_word_embeddings = false;
  bool attention_bias = false;  // q/k/v bias (Qwen2)
  bool qk_norm = false;         // per-head RMSNorm on q and k (Qwen3)
  // Mixture of experts (Qwen3-MoE); num_experts == 0 means dense.
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;
  bool norm_topk_prob = false;
  // Tokens.
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;  // config + generation_config, deduplicated
  bool from_gguf = false;

  bool layer_is_moe(int64_t layer) const;
  // head_dim / 2 inverse frequencies with rope scaling applied (float, like HF).
  std::vector<float> rope_inv_freq() const;
  // Throws LoadError when the numbers are inconsistent (zero sizes, heads not dividing).
  void validate() const;
};

ModelConfig config_from_hf_dir(const std::string& dir);
ModelConfig config_from_gguf(const GgufFile& gguf);

}  // namespace vllm::model
