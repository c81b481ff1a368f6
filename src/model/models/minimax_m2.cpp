// MiniMax-M2 (MiniMaxM2ForCausalLM, GGUF `minimax-m2`: MiniMax-M2, M2.1): the Llama block with
// RMSNorm over the whole q and k projections before the heads split (qk_norm_type "per_layer",
// OLMoE's; "per_head" is Qwen3's), a rotary embedding on the first rotary_dim dims of each head
// (rotate-half pairs; transformers 5 reads the legacy rotary_dim as partial_rotary_factor), and
// every layer a sparse MoE with a sigmoid router: the experts chosen on score +
// e_score_correction_bias, weighted by their unbiased scores renormalized
// (ModelConfig::router_sigmoid with one group and no scaling). The checkpoint keeps Mixtral's
// names (block_sparse_moe.gate, experts.E.w1 / w3 / w2) and the bias beside the router
// (block_sparse_moe.e_score_correction_bias). The released checkpoints are FP8
// (quantization_config fp8, refused by name like every quantized folder); their BF16 exports
// and llama.cpp's GGUFs load.
//
// Refused by name: attn_type_list with a 0 (MiniMax-Text-01 / M1's lightning attention),
// scoring_func other than sigmoid, use_routing_bias false, a shared expert
// (shared_intermediate_size), qk_norm_type other than per_layer / per_head. The MTP modules
// (num_mtp_modules) are not read.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

namespace L = limits;

[[noreturn]] void refuse(const nlohmann::json& j, const char* key, const std::string& why) {
  throw tok::JsonFieldError(std::string(key) + " = " + tok::json_excerpt(j[key]) + ": " + why);
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  // MiniMaxM2Config's defaults where config.json leaves a key out.
  c.num_experts = tok::json_int_or(j, "num_local_experts", 256, 1, L::kMaxExperts);
  c.num_experts_per_tok = tok::json_int_or(j, "num_experts_per_tok", 8, 1, L::kMaxExperts);
  c.moe_intermediate_size = c.intermediate_size;  // the experts' width
  c.decoder_sparse_step = 1;
  c.mlp_only_layers.clear();
  c.router_sigmoid = c.router_score_bias = true;
  c.norm_topk_prob = true;  // transformers and vLLM always renormalize
  c.n_group = c.topk_group = 1;
  c.routed_scaling_factor = 1.0;
  if (j.contains("scoring_func") && j["scoring_func"] != "sigmoid")
    refuse(j, "scoring_func", "only the sigmoid router is supported");
  if (!tok::json_bool_or(j, "use_routing_bias", true))
    refuse(j, "use_routing_bias", "a router without its correction bias is not supported");
  if (tok::json_int_or(j, "shared_intermediate_size", 0, 0, L::kMaxIntermediate) > 0)
    refuse(j, "shared_intermediate_size", "shared experts are not supported for MiniMax-M2");
  if (j.contains("attn_type_list") && j["attn_type_list"].is_array())
    for (const auto& t : j["attn_type_list"])
      if (!(t.is_number_integer() && t.get<int64_t>() == 1))
        throw tok::JsonFieldError("attn_type_list holds " + tok::json_excerpt(t) +
                                  ": only full attention (1) is supported, not MiniMax's "
                                  "lightning attention (0)");
  c.qk_norm = tok::json_bool_or(j, "use_qk_norm", true);
  const std::string norm_type =
      j.contains("qk_norm_type") && j["qk_norm_type"].is_string() ? j["qk_norm_type"] : "per_layer";
  if (norm_type != "per_layer" && norm_type != "per_head")
    refuse(j, "qk_norm_type", "only per_layer and per_head are supported");
  c.qk_norm_whole = norm_type == "per_layer";
  // The released configs' legacy key; transformers turns it into partial_rotary_factor.
  if (j.contains("rotary_dim") && !j["rotary_dim"].is_null())
    c.rotary_dim = tok::json_int(j["rotary_dim"], "rotary_dim", 2, c.head_dim);
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  read_gguf_experts(c, g, p);
  read_gguf_sigmoid_router(c, g, p);
  c.norm_topk_prob = true;  // llama.cpp's minimax-m2 always renormalizes
  c.qk_norm_whole = true;
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  rename_block_sparse_moe(s, c);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    s.rename(p + "block_sparse_moe.e_score_correction_bias",
             p + "mlp.gate.e_score_correction_bias");
  }
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  LayerWeights w = load_llama_layer(s, c, i);  // every layer sparse
  if (c.qk_norm) {
    const int64_t D = c.head_dim;
    w.attn.q_norm =
        s.vector_f32(p + "self_attn.q_norm.weight", c.qk_norm_whole ? c.num_heads * D : D);
    w.attn.k_norm =
        s.vector_f32(p + "self_attn.k_norm.weight", c.qk_norm_whole ? c.num_kv_heads * D : D);
  }
  w.experts.router_score_bias = s.vector_f32(p + "mlp.gate.e_score_correction_bias", c.num_experts);
  return w;
}

}  // namespace

const ModelFamily& minimax_m2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"MiniMaxM2ForCausalLM"};
    f.gguf_architecture = "minimax-m2";
    f.qk_norm = true;
    f.moe = true;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
