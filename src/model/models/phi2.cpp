// Phi-2 / Phi-1.5 / Phi-1 (PhiForCausalLM, GGUF `phi2`): one LayerNorm with a bias
// (input_layernorm, eps from layer_norm_eps) before a parallel block (x + attn + mlp, Cohere's
// form); q/k/v and the output projection (`dense`) with biases; rotary on the first
// partial_rotary_factor of each head (rotate-half; llama.cpp's rope NEOX, rows as stored); an
// ungated MLP down(gelu(up x + b) ) + b (`fc1` / `fc2`, hidden_act gelu_new: the tanh GELU); a
// final LayerNorm with a bias (`final_layernorm`) and an lm_head with a bias, untied. GGUFs
// converted from the original checkpoints keep q, k and v fused (attn_qkv, rows q | k | v, with
// its bias), later ones split them; both are read. The per-head q/k LayerNorms of
// qk_layernorm = true are refused by name.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void common(ModelConfig& c) {
  c.layer_norm = true;
  c.layer_norm_bias = true;
  c.parallel_block = true;
  c.o_bias = true;
  c.mlp_bias = true;
  c.lm_head_bias = true;
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  if (tok::json_bool_or(j, "qk_layernorm", false))
    throw tok::JsonFieldError(
        "qk_layernorm = true: Phi's per-head q/k LayerNorms are not supported");
  // PhiConfig's default activation; any other on this MLP would compute another model.
  if (!j.contains("hidden_act") || j["hidden_act"].is_null()) c.hidden_act = Activation::kGeluTanh;
  if (c.hidden_act != Activation::kGeluTanh)
    throw tok::JsonFieldError("hidden_act: Phi's MLP is supported with gelu_new only");
  c.rms_norm_eps = tok::json_float_or(j, "layer_norm_eps", 1e-5, 0, 1);
  // PhiConfig: partial_rotary_factor 0.5 when absent (the shared reader's default is 1).
  if (!j.contains("partial_rotary_factor"))
    c.rotary_dim = static_cast<int64_t>(static_cast<double>(c.head_dim) * 0.5);
  common(c);
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string&) {
  if (g.find_tensor("blk.0.attn_q_norm.weight"))
    throw LoadError(g.path(),
                    "blk.0.attn_q_norm.weight: Phi's per-head q/k LayerNorms are not supported");
  c.hidden_act = Activation::kGeluTanh;  // llama.cpp's phi2 graph: LLM_FFN_GELU, no gate
  common(c);
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const char* b : {".weight", ".bias"}) {
      s.rename(p + "self_attn.dense" + b, p + "self_attn.o_proj" + b);
      s.rename(p + "mlp.fc1" + b, p + "mlp.up_proj" + b);
      s.rename(p + "mlp.fc2" + b, p + "mlp.down_proj" + b);
    }
  }
  for (const char* b : {".weight", ".bias"})
    s.rename(std::string("model.final_layernorm") + b, std::string("model.norm") + b);
}

}  // namespace

const ModelFamily& phi2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"PhiForCausalLM"};
    f.gguf_architecture = "phi2";
    f.qkv_bias = true;
    f.ungated_mlp = true;
    f.gguf_layer_tensors = {{"attn_qkv.weight", "self_attn.qkv_proj.weight"},
                            {"attn_qkv.bias", "self_attn.qkv_proj.bias"}};
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_llama_layer;  // a fused attn_qkv read as row ranges by load_attention
    return f;
  }();
  return f;
}

}  // namespace vllm::model
