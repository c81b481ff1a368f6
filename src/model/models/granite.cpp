// Granite (IBM Granite 3.x dense): the Llama block with four multipliers (ModelConfig):
// embeddings times embedding_multiplier, attention scaled by attention_multiplier, each block's
// output times residual_multiplier, logits divided by logits_scaling. transformers' defaults
// are 1 for all four (an attention scale of 1, not head_dim^-0.5); llama.cpp's `granite` keys
// are embedding_scale, attention.scale (0 or absent: head_dim^-0.5), residual_scale and
// logit_scale. The GGUF's q/k rows are permuted as for Llama.
//
// GraniteMoE (GraniteMoeForCausalLM, GGUF `granitemoe`; Granite 3.x 1B-A400M / 3B-A800M): the same
// block and multipliers with a sparse MoE block on every layer: a router without bias whose
// softmax runs over its top-k logits (ModelConfig::topk_before_softmax; llama.cpp renormalizes
// the softmax's top-k, the same weights), experts of intermediate_size stored fused as the
// hub checkpoints keep them: block_sparse_moe.input_linear [experts, 2F, hidden] (rows gate | up,
// read as row ranges) and output_linear [experts, hidden, F]; llama.cpp's converter splits them
// into ffn_gate_exps / ffn_up_exps.
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

constexpr double kMaxMultiplier = 1e6;

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  auto m = [&](const char* k) {
    const double v = tok::json_float_or(j, k, 1.0, 0, kMaxMultiplier);
    if (!(v > 0)) throw tok::JsonFieldError(std::string(k) + " = 0 (must be positive)");
    return v;
  };
  c.embedding_multiplier = m("embedding_multiplier");
  c.attention_multiplier = m("attention_multiplier");
  c.residual_multiplier = m("residual_multiplier");
  c.logits_scaling = m("logits_scaling");
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  auto m = [&](const std::string& key, double def) {
    const double v = g.get_float_or(p + key, def);
    if (!std::isfinite(v) || v < 0 || v > kMaxMultiplier || (v == 0 && def != 0))
      throw LoadError(g.path(), p + key + " = " + std::to_string(v) +
                                    " (must be finite, positive and at most 1e6)");
    return v;
  };
  c.embedding_multiplier = m("embedding_scale", 1.0);
  c.attention_multiplier = m("attention.scale", 0.0);  // 0: head_dim^-0.5
  c.residual_multiplier = m("residual_scale", 1.0);
  c.logits_scaling = m("logit_scale", 1.0);
}

void moe_hf_config(ModelConfig& c, const nlohmann::json& j) {
  hf_config(c, j);
  c.moe_intermediate_size = c.intermediate_size;  // GraniteMoeConfig: the experts' width
  c.topk_before_softmax = true;
}

void moe_gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  gguf_config(c, g, p);
  read_gguf_experts(c, g, p);
  c.topk_before_softmax = true;
}

// The checkpoint's router and fused experts under the shared names (load_moe reads
// input_linear's rows gate | up as mlp.experts.gate_up_proj).
void moe_hf_weights(WeightStore& s, const ModelConfig& c) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string from = "model.layers." + std::to_string(i) + ".block_sparse_moe.";
    const std::string to = "model.layers." + std::to_string(i) + ".mlp.";
    s.rename(from + "router.layer.weight", to + "gate.weight");
    s.rename(from + "input_linear.weight", to + "experts.gate_up_proj.weight");
    s.rename(from + "output_linear.weight", to + "experts.down_proj.weight");
  }
}

}  // namespace

const ModelFamily& granitemoe_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"GraniteMoeForCausalLM"};
    f.gguf_architecture = "granitemoe";
    f.gguf_rope_interleaved = true;
    f.moe = true;
    f.hf_config = moe_hf_config;
    f.gguf_config = moe_gguf_config;
    f.hf_weights = moe_hf_weights;
    f.load_layer = load_llama_layer;
    return f;
  }();
  return f;
}

const ModelFamily& granite_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"GraniteForCausalLM"};
    f.gguf_architecture = "granite";
    f.gguf_rope_interleaved = true;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_llama_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
