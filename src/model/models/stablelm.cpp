// StableLM (StableLmForCausalLM, GGUF `stablelm`: StableLM 2 1.6B / Zephyr, StableLM-3B-4E1T,
// StableCode): the Llama block with LayerNorms that carry a bias (before attention, before the
// MLP and at the end; eps from layer_norm_eps), rotary on the first partial_rotary_factor of
// each head (rotate-half; llama.cpp's rope NEOX, rows as stored) and q/k/v biases with
// use_qkv_bias. StableLM 2 12B's per-head q/k LayerNorms (qk_layernorm) and parallel block
// (use_parallel_residual) are refused by name.
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
  if (tok::json_bool_or(j, "qk_layernorm", false))
    throw tok::JsonFieldError(
        "qk_layernorm = true: StableLM's per-head q/k LayerNorms are not "
        "supported");
  c.layer_norm = true;
  c.layer_norm_bias = true;
  c.rms_norm_eps = tok::json_float_or(j, "layer_norm_eps", 1e-5, 0, 1);
  c.attention_bias = tok::json_bool_or(j, "use_qkv_bias", false);
  // StableLM 2 12B's parallel block comes with the q/k LayerNorms refused above; without a
  // checkpoint to check it against it is refused too.
  if (tok::json_bool_or(j, "use_parallel_residual", false))
    throw tok::JsonFieldError(
        "use_parallel_residual = true: StableLM's parallel block is not "
        "supported");
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  if (g.find_tensor("blk.0.attn_q_norm.weight"))
    throw LoadError(g.path(),
                    "blk.0.attn_q_norm.weight: StableLM's per-head q/k LayerNorms are "
                    "not supported");
  c.layer_norm = true;
  c.layer_norm_bias = true;
  c.attention_bias = g.find_tensor("blk.0.attn_q.bias") != nullptr;
  if (g.get_bool_or(p + "use_parallel_residual", true))  // llama.cpp's default: parallel
    throw LoadError(g.path(), p + "use_parallel_residual = true: StableLM's parallel block is "
                                  "not supported");
}

}  // namespace

const ModelFamily& stablelm_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"StableLmForCausalLM"};
    f.gguf_architecture = "stablelm";
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_llama_layer;  // LayerNorm weights and biases (layer_norm_bias)
    return f;
  }();
  return f;
}

}  // namespace vllm::model
