// GLM-4 (GLM-4-9B-0414, GLM-4-32B-0414, GLM-Z1): the Llama block with four RMSNorms per layer,
// q/k/v biases, the gate and up projections fused (mlp.gate_up_proj, rows gate | up; llama.cpp's
// ffn_up holds both), and a rotary embedding on the first half of each head
// (partial_rotary_factor, 0.5 when config.json leaves it out) in adjacent pairs: transformers'
// rotate_half_llm with cos / sin repeated per pair, llama.cpp's rope NORM, not permuted by its
// converter. The norms: input_layernorm before attention and post_self_attn_layernorm on its
// output before the residual add; post_attention_layernorm before the MLP and
// post_mlp_layernorm on its output (llama.cpp: attn_norm, post_attention_norm, ffn_norm,
// post_ffw_norm).
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/weight_store.h"

namespace vllm::model {

namespace {

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  LayerWeights w;
  w.attn = load_attention(s, c, i);
  w.attn.post_norm = s.vector_f32(p + "post_self_attn_layernorm.weight", c.hidden_size);
  w.mlp = load_fused_gate_up_mlp(s, c, i, "post_attention_layernorm.weight");
  w.mlp.post_norm = s.vector_f32(p + "post_mlp_layernorm.weight", c.hidden_size);
  return w;
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.rope_style = vt::cpu::RopeStyle::kInterleaved;
  c.sandwich_norms = true;
  if (!j.contains("partial_rotary_factor")) c.rotary_dim = c.head_dim / 2;  // Glm4Config's 0.5
}

void gguf_config(ModelConfig& c, const GgufFile&, const std::string&) { c.sandwich_norms = true; }

}  // namespace

const ModelFamily& glm4_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Glm4ForCausalLM"};
    f.gguf_architecture = "glm4";
    f.qkv_bias = true;
    f.gguf_rope_interleaved = true;  // rope NORM (adjacent pairs), as transformers
    f.gguf_layer_tensors = {{"post_attention_norm.weight", "post_self_attn_layernorm.weight"},
                            {"post_ffw_norm.weight", "post_mlp_layernorm.weight"}};
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
