// GLM-4.5 / GLM-4.6 (Glm4MoeForCausalLM, GGUF `glm4moe`: GLM-4.5, GLM-4.5-Air, GLM-4.6): the
// Llama block with q/k/v biases (attention_bias: true in the released configs), optional per-head
// q/k RMSNorm (use_qk_norm: GLM-4.5 355B), a rotary embedding on the first half of each head
// (partial_rotary_factor, 0.5 when config.json leaves it out) in rotate-half pairs (transformers'
// GPT-NeoX rotary, llama.cpp's rope NEOX: unlike dense GLM-4, not interleaved), the first
// first_k_dense_replace layers dense and the rest DeepSeek-V3-style MoE:
//   - router scores sigmoid(gate . x), the experts chosen on score + e_score_correction_bias
//     among the topk_group best of n_group groups, weighted by their unbiased scores,
//     renormalized (norm_topk_prob) and times routed_scaling_factor (ModelConfig::router_sigmoid);
//   - n_shared_experts shared experts as one SwiGLU MLP of n_shared_experts x
//     moe_intermediate_size over every token, added to the routed sum as it is.
// The checkpoints' multi-token-prediction layers (num_nextn_predict_layers: model.layers.N and
// on in the folder, blk.N and on in a GGUF, whose block_count counts them) are not read: like
// transformers and llama.cpp's own decoding, the model is its num_hidden_layers.
//
// llama.cpp's keys: expert_count / expert_used_count / expert_feed_forward_length,
// expert_shared_count, leading_dense_block_count, expert_weights_norm (absent: false),
// and read_gguf_sigmoid_router's (expert_gating_func, expert_weights_scale, expert_group_count /
// expert_group_used_count), nextn_predict_layers; the q/k norms and q/k/v biases are there when
// blk.0's are.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

namespace L = limits;

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  // Glm4MoeConfig's defaults where config.json leaves a key out.
  c.num_experts = tok::json_int_or(j, "n_routed_experts", c.num_experts > 0 ? c.num_experts : 128,
                                   1, L::kMaxExperts);
  c.num_experts_per_tok = tok::json_int_or(j, "num_experts_per_tok", 8, 1, L::kMaxExperts);
  c.moe_intermediate_size =
      tok::json_int_or(j, "moe_intermediate_size", 1408, 1, L::kMaxIntermediate);
  const int64_t n_shared = tok::json_int_or(j, "n_shared_experts", 1, 0, 64);
  c.shared_expert_intermediate_size = n_shared * c.moe_intermediate_size;
  c.norm_topk_prob = tok::json_bool_or(j, "norm_topk_prob", true);
  c.n_group = tok::json_int_or(j, "n_group", 1, 1, L::kMaxExperts);
  c.topk_group = tok::json_int_or(j, "topk_group", 1, 1, L::kMaxExperts);
  c.routed_scaling_factor = tok::json_float_or(j, "routed_scaling_factor", 1.0, 1e-6, 1e6);
  c.router_sigmoid = c.router_score_bias = true;
  c.qk_norm = tok::json_bool_or(j, "use_qk_norm", false);
  c.decoder_sparse_step = 1;
  set_dense_lead(c, tok::json_int_or(j, "first_k_dense_replace", 1, 0, L::kMaxLayers));
  if (!j.contains("partial_rotary_factor")) c.rotary_dim = c.head_dim / 2;  // the config's 0.5
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  drop_gguf_nextn_layers(c, g, p);
  read_gguf_experts(c, g, p);
  c.shared_expert_intermediate_size =
      g.get_int_or(p + "expert_shared_count", 0) * c.moe_intermediate_size;
  c.norm_topk_prob = g.get_bool_or(p + "expert_weights_norm", false);
  read_gguf_sigmoid_router(c, g, p);
  // Optional tensors in llama.cpp's glm4moe: the file says whether the model has them.
  c.attention_bias = g.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.qk_norm = g.find_tensor("blk.0.attn_q_norm.weight") != nullptr;
  set_dense_lead(c, g.get_int_or(p + "leading_dense_block_count", 0));
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  LayerWeights w = load_llama_layer(s, c, i);
  if (c.qk_norm) {
    w.attn.q_norm = s.vector_f32(p + "self_attn.q_norm.weight", c.head_dim);
    w.attn.k_norm = s.vector_f32(p + "self_attn.k_norm.weight", c.head_dim);
  }
  if (w.moe) {
    w.experts.router_score_bias =
        s.vector_f32(p + "mlp.gate.e_score_correction_bias", c.num_experts);
    if (c.shared_expert_intermediate_size > 0)
      load_shared_expert(s, c, p + "mlp.shared_experts.", w.experts);
  }
  return w;
}

}  // namespace

const ModelFamily& glm4_moe_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Glm4MoeForCausalLM"};
    f.gguf_architecture = "glm4moe";
    f.moe = true;
    f.gguf_layer_tensors = {{"post_attention_norm.weight", "post_attention_layernorm.weight"}};
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
