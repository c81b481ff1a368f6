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
  const std::string p = "model.layers." + std::to_string(i) + ".mlp.";
  const int64_t E = c.hidden_size, F = c.moe_intermediate_size, X = c.num_experts;
  w.moe = true;
  w.experts.norm =
      s.vector_f32("model.layers." + std::to_string(i) + ".post_attention_layernorm.weight", E);
  w.experts.router = s.matrix(p + "gate.weight", X, E);
  const bool stacked = s.has(p + "experts.gate_proj.weight");
  for (int64_t e = 0; e < X; ++e) {
    if (stacked) {
      w.experts.gate.push_back(s.matrix_slice(p + "experts.gate_proj.weight", e, X, F, E));
      w.experts.up.push_back(s.matrix_slice(p + "experts.up_proj.weight", e, X, F, E));
      w.experts.down.push_back(s.matrix_slice(p + "experts.down_proj.weight", e, X, E, F));
    } else {
      const std::string ep = p + "experts." + std::to_string(e) + ".";
      w.experts.gate.push_back(s.matrix(ep + "gate_proj.weight", F, E));
      w.experts.up.push_back(s.matrix(ep + "up_proj.weight", F, E));
      w.experts.down.push_back(s.matrix(ep + "down_proj.weight", E, F));
    }
  }
  return w;
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  c.num_experts = g.get_int(p + "expert_count");
  c.num_experts_per_tok = g.get_int(p + "expert_used_count");
  c.moe_intermediate_size = g.get_int(p + "expert_feed_forward_length");
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
    f.gguf_layer_tensors = {{"attn_q_norm.weight", "self_attn.q_norm.weight"},
                            {"attn_k_norm.weight", "self_attn.k_norm.weight"},
                            {"ffn_gate_inp.weight", "mlp.gate.weight"},
                            {"ffn_gate_exps.weight", "mlp.experts.gate_proj.weight"},
                            {"ffn_up_exps.weight", "mlp.experts.up_proj.weight"},
                            {"ffn_down_exps.weight", "mlp.experts.down_proj.weight"}};
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
