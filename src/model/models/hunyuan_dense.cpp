// Hunyuan dense (HunYuanDenseV1ForCausalLM, GGUF `hunyuan-dense`: Hunyuan-0.5B / 1.8B / 4B /
// 7B): the Llama block with a per-head RMSNorm on q and k applied after RoPE (Qwen3 applies
// it before), named query_layernorm / key_layernorm. The released configs' rope_scaling
// {"type": "dynamic", "alpha": A} (a fixed NTK stretch of the base) is read by the shared
// read_hf_rope_scaling; llama.cpp's converter writes the stretched base into the GGUF.
// q/k/v/o or MLP biases and configs without the q/k norms are refused by name.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

// qwen3.cpp: attention with the per-head q_norm / k_norm.
LayerWeights load_qwen3_layer_attention_only(const WeightStore& s, const ModelConfig& c, int64_t i);

namespace {

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.qk_norm_after_rope = true;
  for (const char* key : {"attention_bias", "mlp_bias"})
    if (tok::json_bool_or(j, key, false))
      throw tok::JsonFieldError(std::string(key) + " = true: that bias is not supported");
  if (!tok::json_bool_or(j, "use_qk_norm", true))
    throw tok::JsonFieldError(
        "use_qk_norm = false: Hunyuan without its q/k norms is not "
        "supported");
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string&) {
  c.qk_norm_after_rope = true;
  if (g.find_tensor("blk.0.attn_q.bias") || g.find_tensor("blk.0.attn_output.bias"))
    throw LoadError(g.path(),
                    "tensor 'blk.0.attn_q.bias': Hunyuan with attention biases is not "
                    "supported");
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    s.rename(p + "query_layernorm.weight", p + "q_norm.weight");
    s.rename(p + "key_layernorm.weight", p + "k_norm.weight");
  }
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w = load_qwen3_layer_attention_only(s, c, i);
  w.mlp = load_mlp(s, c, i);
  return w;
}

}  // namespace

const ModelFamily& hunyuan_dense_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"HunYuanDenseV1ForCausalLM"};
    f.gguf_architecture = "hunyuan-dense";
    f.qk_norm = true;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
