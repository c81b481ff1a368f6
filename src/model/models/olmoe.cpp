// OLMoE (OlmoeForCausalLM, GGUF `olmoe`; allenai's OLMoE-1B-7B): the Llama block with q and k
// RMSNorm-ed over their whole projection before RoPE (OLMo 2's qk_norm_whole, here with the
// usual input norms) and a sparse MoE block on every layer: softmax router, top
// num_experts_per_tok, renormalized only with norm_topk_prob (false in the released configs).
// clip_qkv (clamping q, k and v) is refused by name.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.qk_norm_whole = true;
  c.moe_intermediate_size = c.intermediate_size;  // OlmoeConfig: the experts' width
  if (j.contains("clip_qkv") && !j["clip_qkv"].is_null())
    throw tok::JsonFieldError("clip_qkv = " + tok::json_excerpt(j["clip_qkv"]) +
                              ": clamping q, k and v is not supported");
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  c.qk_norm_whole = true;
  read_gguf_experts(c, g, p);
  c.norm_topk_prob = false;  // llama.cpp's olmoe takes the softmax weights as they are
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  LayerWeights w = load_llama_layer(s, c, i);  // every layer sparse
  w.attn.q_norm = s.vector_f32(p + "self_attn.q_norm.weight", c.num_heads * c.head_dim);
  w.attn.k_norm = s.vector_f32(p + "self_attn.k_norm.weight", c.num_kv_heads * c.head_dim);
  return w;
}

}  // namespace

const ModelFamily& olmoe_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"OlmoeForCausalLM"};
    f.gguf_architecture = "olmoe";
    f.qk_norm = true;
    f.moe = true;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
