// ERNIE 4.5 (Baidu): Ernie4_5ForCausalLM (GGUF `ernie4_5`: ERNIE-4.5-0.3B) and
// Ernie4_5_MoeForCausalLM (GGUF `ernie4_5-moe`: ERNIE-4.5-21B-A3B, 300B-A47B). The Llama block
// with the rotary embedding in adjacent pairs (transformers' "glm rope style" over the whole
// head, llama.cpp's rope NORM; its converter does not permute the rows), tied embeddings by
// default. The MoE model's sparse layers are every moe_layer_interval-th from
// moe_layer_start_index to moe_layer_end_index (llama.cpp: leading_dense_block_count and
// interleave_moe_layer_step), with
//   - a softmax router in fp32 whose top-k choice adds a per-expert correction bias
//     (mlp.moe_statics.e_score_correction_bias [1, experts]; GGUF exp_probs_b) and whose
//     weights are the chosen experts' unbiased probabilities divided by their sum (transformers
//     clamps the sum at moe_norm_min, 1e-12, below anything a top-k softmax sum reaches);
//   - moe_num_shared_experts shared experts as one SwiGLU MLP of that many times
//     moe_intermediate_size, added ungated (llama.cpp: expert_shared_feed_forward_length).
// The MTP block (model.mtp_block.*) is not read. use_bias (biases on every projection) is
// refused by name, as is a GGUF with attn_output.bias.
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

constexpr const char* kErnieMoe = "Ernie4_5_MoeForCausalLM";

// The dense layers: those outside [start, end] or off the interval.
void moe_layers(ModelConfig& c, int64_t start, int64_t end, int64_t interval) {
  c.decoder_sparse_step = 1;
  c.mlp_only_layers.clear();
  for (int64_t i = 0; i < c.num_layers; ++i)
    if (!((i + 1) % interval == 0 && i >= start && i <= end)) c.mlp_only_layers.push_back(i);
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.rope_style = vt::cpu::RopeStyle::kInterleaved;
  c.tie_word_embeddings = tok::json_bool_or(j, "tie_word_embeddings", true);  // the config's
  if (tok::json_bool_or(j, "use_bias", false))
    throw tok::JsonFieldError("use_bias = true: biases on every projection are not supported");
  if (c.architecture != kErnieMoe) return;
  // Ernie4_5_MoeConfig's defaults where config.json leaves a key out.
  c.num_experts = tok::json_int_or(j, "moe_num_experts", 64, 1, L::kMaxExperts);
  c.num_experts_per_tok = tok::json_int_or(j, "moe_k", 6, 1, L::kMaxExperts);
  c.moe_intermediate_size =
      tok::json_int_or(j, "moe_intermediate_size", 1536, 1, L::kMaxIntermediate);
  c.shared_expert_intermediate_size =
      tok::json_int_or(j, "moe_num_shared_experts", 2, 0, 64) * c.moe_intermediate_size;
  c.norm_topk_prob = true;
  c.router_score_bias = true;
  const int64_t start = tok::json_int_or(j, "moe_layer_start_index", 1, 0, L::kMaxLayers);
  int64_t end = tok::json_int_or(j, "moe_layer_end_index", -1, -1, L::kMaxLayers);
  if (end == -1) end = c.num_layers - 1;
  moe_layers(c, start, end, tok::json_int_or(j, "moe_layer_interval", 1, 1, L::kMaxLayers));
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  if (g.find_tensor("blk.0.attn_output.bias"))
    throw LoadError(g.path(),
                    "tensor 'blk.0.attn_output.bias': ERNIE 4.5 with biases (use_bias) "
                    "is not supported");
  if (c.gguf_arch != "ernie4_5-moe") return;
  read_gguf_experts(c, g, p);
  c.shared_expert_intermediate_size = g.get_int_or(p + "expert_shared_feed_forward_length", 0);
  c.norm_topk_prob = true;
  c.router_score_bias = true;
  moe_layers(c, g.get_int_or(p + "leading_dense_block_count", 0), c.num_layers - 1,
             g.get_int(p + "interleave_moe_layer_step"));
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".mlp.";
    s.rename(p + "moe_statics.e_score_correction_bias", p + "gate.e_score_correction_bias");
  }
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w = load_llama_layer(s, c, i);
  if (w.moe) {
    const std::string p = "model.layers." + std::to_string(i) + ".mlp.";
    // [1, experts] in the checkpoint (one group), [experts] in a GGUF. llama.cpp's ernie4_5-moe
    // takes a GGUF without it (then the choice is on the probabilities alone); a checkpoint
    // always has it.
    if (!c.from_gguf || s.has(p + "gate.e_score_correction_bias"))
      w.experts.router_score_bias =
          s.vector_or_row_f32(p + "gate.e_score_correction_bias", c.num_experts);
    if (c.shared_expert_intermediate_size > 0)
      load_shared_expert(s, c, p + "shared_experts.", w.experts);
  }
  return w;
}

ModelFamily base(const char* hf, const char* gguf) {
  ModelFamily f;
  f.hf_architectures = {hf};
  f.gguf_architecture = gguf;
  f.gguf_rope_interleaved = true;  // rope NORM (adjacent pairs), rows as transformers keeps them
  f.hf_config = hf_config;
  f.gguf_config = gguf_config;
  f.load_layer = load_layer;
  return f;
}

}  // namespace

const ModelFamily& ernie4_5_family() {
  static const ModelFamily f = base("Ernie4_5ForCausalLM", "ernie4_5");
  return f;
}

const ModelFamily& ernie4_5_moe_family() {
  static const ModelFamily f = [] {
    ModelFamily f = base(kErnieMoe, "ernie4_5-moe");
    f.moe = true;
    f.hf_weights = hf_weights;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
