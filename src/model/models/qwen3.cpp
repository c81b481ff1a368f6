// Qwen3: the Llama block plus a per-head RMSNorm on q and k before RoPE.
#include "model/causal_lm.h"

namespace vllm::model {

LayerWeights load_qwen3_layer_attention_only(const WeightStore& s, const ModelConfig& c,
                                             int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
  LayerWeights w;
  w.attn = load_attention(s, c, i);
  w.attn.q_norm = s.vector_f32(p + "q_norm.weight", c.head_dim);
  w.attn.k_norm = s.vector_f32(p + "k_norm.weight", c.head_dim);
  return w;
}

LayerWeights load_qwen3_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w = load_qwen3_layer_attention_only(s, c, i);
  w.mlp = load_mlp(s, c, i);
  return w;
}

}  // namespace vllm::model
