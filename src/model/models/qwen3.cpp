// Qwen3: the Llama block plus a per-head RMSNorm on q and k before RoPE.
#include "model/causal_lm.h"
#include "model/family.h"

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

namespace {
LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w = load_qwen3_layer_attention_only(s, c, i);
  w.mlp = load_mlp(s, c, i);
  return w;
}
}  // namespace

const ModelFamily& qwen3_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Qwen3ForCausalLM"};
    f.gguf_architecture = "qwen3";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.qk_norm = true;
    f.gguf_layer_tensors = {{"attn_q_norm.weight", "self_attn.q_norm.weight"},
                            {"attn_k_norm.weight", "self_attn.k_norm.weight"}};
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
