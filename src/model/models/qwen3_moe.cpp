// Qwen3-MoE: Qwen3 attention; sparse layers (decoder_sparse_step, mlp_only_layers) use
// a softmax router over num_experts SwiGLU experts, top num_experts_per_tok.
// Experts come per expert (Hugging Face) or stacked in one 3-D tensor (GGUF).
#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"

namespace vllm::model {

// Qwen3 attention (models/qwen3.cpp).
LayerWeights load_qwen3_layer_attention_only(const WeightStore& s, const ModelConfig& c, int64_t i);

namespace {

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w = load_qwen3_layer_attention_only(s, c, i);
  if (!c.layer_is_moe(i)) {
    w.mlp = load_mlp(s, c, i);
    return w;
  }
  w.moe = true;
  w.experts = load_moe(s, c, i);
  return w;
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  read_gguf_experts(c, g, p);
  c.norm_topk_prob = true;  // llama.cpp always renormalizes for qwen3moe
}

}  // namespace

const ModelFamily& qwen3_moe_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Qwen3MoeForCausalLM"};
    f.gguf_architecture = "qwen3moe";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.qk_norm = true;
    f.moe = true;
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
