// Qwen2-MoE (Qwen2MoeForCausalLM, GGUF `qwen2moe`; Qwen1.5-MoE-A2.7B, Qwen2-57B-A14B): Qwen2's
// attention (q/k/v bias, unless config.json's qkv_bias says otherwise) and Qwen3-MoE's sparse
// layers (softmax router, top num_experts_per_tok, renormalized only with norm_topk_prob;
// decoder_sparse_step, mlp_only_layers) plus a shared expert on every sparse layer: a SwiGLU MLP
// of shared_expert_intermediate_size over every token, scaled by sigmoid(shared_expert_gate . x)
// and added to the routed experts' sum (MoeWeights::shared_*). llama.cpp stores the gate as a
// vector (ffn_gate_inp_shexp), the checkpoint as a [1, hidden] matrix; both read the same.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.attention_bias = tok::json_bool_or(j, "qkv_bias", true);
  c.shared_expert_intermediate_size =
      tok::json_int_or(j, "shared_expert_intermediate_size", 0, 0, limits::kMaxIntermediate);
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  c.attention_bias = true;  // llama.cpp's qwen2moe requires the q/k/v biases
  read_gguf_experts(c, g, p);
  c.shared_expert_intermediate_size = g.get_int_or(p + "expert_shared_feed_forward_length", 0);
  c.norm_topk_prob = false;  // llama.cpp's qwen2moe takes the softmax weights as they are
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w = load_llama_layer(s, c, i);
  if (w.moe && c.shared_expert_intermediate_size > 0) {
    const std::string p = "model.layers." + std::to_string(i) + ".mlp.";
    load_shared_expert(s, c, p + "shared_expert.", w.experts);
    // A [1, hidden] matrix in the checkpoint, a [hidden] vector in a GGUF.
    w.experts.shared_expert_gate =
        s.vector_or_row_f32(p + "shared_expert_gate.weight", c.hidden_size);
  }
  return w;
}

}  // namespace

const ModelFamily& qwen2_moe_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Qwen2MoeForCausalLM"};
    f.gguf_architecture = "qwen2moe";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.moe = true;
    f.gguf_layer_tensors = {{"ffn_gate_shexp.weight", "mlp.shared_expert.gate_proj.weight"},
                            {"ffn_up_shexp.weight", "mlp.shared_expert.up_proj.weight"},
                            {"ffn_down_shexp.weight", "mlp.shared_expert.down_proj.weight"},
                            {"ffn_gate_inp_shexp.weight", "mlp.shared_expert_gate.weight"}};
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
