// OLMo 2: the Llama block with its norms moved: no RMSNorm before attention or the MLP; each
// block's output is RMSNorm-ed before it joins the residual stream (Hugging Face's
// post_attention_layernorm / post_feedforward_layernorm, llama.cpp's post_attention_norm /
// post_ffw_norm), and q and k are RMSNorm-ed over their whole projection (all heads at once)
// before RoPE. NEOX RoPE, not permuted in the GGUF.
#include "model/causal_lm.h"
#include "model/family.h"
#include "model/weight_store.h"

namespace vllm::model {

namespace {

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t E = c.hidden_size, F = c.intermediate_size;
  const int64_t qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  LayerWeights w;
  w.attn.q = s.matrix(p + "self_attn.q_proj.weight", qd, E);
  w.attn.k = s.matrix(p + "self_attn.k_proj.weight", kvd, E);
  w.attn.v = s.matrix(p + "self_attn.v_proj.weight", kvd, E);
  w.attn.o = s.matrix(p + "self_attn.o_proj.weight", E, qd);
  w.attn.q_norm = s.vector_f32(p + "self_attn.q_norm.weight", qd);
  w.attn.k_norm = s.vector_f32(p + "self_attn.k_norm.weight", kvd);
  w.attn.post_norm = s.vector_f32(p + "post_attention_layernorm.weight", E);
  w.mlp.gate = s.matrix(p + "mlp.gate_proj.weight", F, E);
  w.mlp.up = s.matrix(p + "mlp.up_proj.weight", F, E);
  w.mlp.down = s.matrix(p + "mlp.down_proj.weight", E, F);
  w.mlp.post_norm = s.vector_f32(p + "post_feedforward_layernorm.weight", E);
  return w;
}

void hf_config(ModelConfig& c, const nlohmann::json&) { c.qk_norm_whole = true; }

void gguf_config(ModelConfig& c, const GgufFile&, const std::string&) { c.qk_norm_whole = true; }

}  // namespace

const ModelFamily& olmo2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Olmo2ForCausalLM"};
    f.gguf_architecture = "olmo2";
    f.qk_norm = true;
    // llama.cpp's ffn_norm would be Llama's post_attention_layernorm: OLMo 2's files have none.
    f.gguf_layer_tensors = {{"attn_q_norm.weight", "self_attn.q_norm.weight"},
                            {"attn_k_norm.weight", "self_attn.k_norm.weight"},
                            {"post_attention_norm.weight", "post_attention_layernorm.weight"},
                            {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"}};
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
