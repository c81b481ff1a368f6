// ModelConfig::validate(): every hyperparameter checked against limits:: and against the others
// before anything is sized from it, the error naming the field as the file spells it
// (field_name: config.json's key, or the GGUF key).
#include <cmath>
#include <cstdio>
#include <string>

#include "model/config.h"
#include "model/load_error.h"

namespace vllm::model {

namespace {

// Hugging Face field -> GGUF key (after "<arch>.") for the hyperparameters validate() checks.
const std::pair<const char*, const char*> kGgufKeys[] = {
    {"vocab_size", "vocab_size"},
    {"hidden_size", "embedding_length"},
    {"intermediate_size", "feed_forward_length"},
    {"num_hidden_layers", "block_count"},
    {"num_attention_heads", "attention.head_count"},
    {"num_key_value_heads", "attention.head_count_kv"},
    {"head_dim", "attention.key_length"},
    {"rms_norm_eps", "attention.layer_norm_rms_epsilon"},
    {"rope_theta", "rope.freq_base"},
    {"max_position_embeddings", "context_length"},
    {"rope_scaling.factor", "rope.scaling.factor"},
    {"num_experts", "expert_count"},
    {"num_experts_per_tok", "expert_used_count"},
    {"moe_intermediate_size", "expert_feed_forward_length"},
    {"shared_expert_intermediate_size", "expert_shared_feed_forward_length"},
    {"routed_scaling_factor", "expert_weights_scale"},
};

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

std::string ModelConfig::field_name(const std::string& hf_field) const {
  if (gguf_arch.empty()) return hf_field;
  if (hf_field == "bos_token_id") return "tokenizer.ggml.bos_token_id";
  if (hf_field == "eos_token_id") return "tokenizer.ggml.eos_token_id";
  if (hf_field == "vocab_size")
    return gguf_arch + ".vocab_size (or the length of tokenizer.ggml.tokens)";
  for (const auto& [hf, key] : kGgufKeys)
    if (hf_field == hf) return gguf_arch + "." + key;
  return hf_field;
}

void ModelConfig::validate() const {
  auto bad = [&](const std::string& field, const std::string& value, const std::string& rule) {
    throw LoadError(source,
                    "invalid config: " + field_name(field) + " = " + value + " (" + rule + ")");
  };
  auto in_range = [&](const char* field, int64_t v, int64_t lo, int64_t hi) {
    if (v < lo || v > hi)
      bad(field, std::to_string(v),
          "must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  // `lo` is exclusive: every float here must be strictly positive.
  auto positive = [&](const char* field, double v, double hi) {
    if (!std::isfinite(v) || !(v > 0) || v > hi)
      bad(field, num(v), "must be finite, positive and at most " + num(hi));
  };
  in_range("vocab_size", vocab_size, 1, limits::kMaxVocab);
  in_range("hidden_size", hidden_size, 1, limits::kMaxHidden);
  in_range("num_hidden_layers", num_layers, 1, limits::kMaxLayers);
  in_range("num_attention_heads", num_heads, 1, limits::kMaxHeads);
  in_range("num_key_value_heads", num_kv_heads, 1, num_heads);
  if (num_heads % num_kv_heads != 0)
    bad("num_attention_heads", std::to_string(num_heads),
        "not a multiple of " + field_name("num_key_value_heads") + " = " +
            std::to_string(num_kv_heads));
  in_range("head_dim", head_dim, 2, limits::kMaxHeadDim);
  if (!sliding_window.empty() && static_cast<int64_t>(sliding_window.size()) != num_layers)
    bad("sliding_window", std::to_string(sliding_window.size()) + " layers",
        "must give one window per layer");
  for (int32_t w : sliding_window) in_range("sliding_window", w, 0, limits::kMaxContext);
  if (!no_rope.empty() && static_cast<int64_t>(no_rope.size()) != num_layers)
    bad("no_rope_layers", std::to_string(no_rope.size()) + " layers",
        "must give one flag per layer");
  if (head_dim % 2 != 0)
    bad("head_dim", std::to_string(head_dim), "rotary embedding needs it even");
  if (rotary_dim != 0 && (rotary_dim < 2 || rotary_dim > head_dim || rotary_dim % 2 != 0))
    bad(gguf_arch.empty() ? "partial_rotary_factor" : "rope.dimension_count",
        gguf_arch.empty() ? "rotating " + std::to_string(rotary_dim) + " of head_dim " +
                                std::to_string(head_dim) + " dims"
                          : std::to_string(rotary_dim),
        "the rotated dims must be even and in [2, head_dim = " + std::to_string(head_dim) + "]");
  in_range("max_position_embeddings", max_position_embeddings, 1, limits::kMaxContext);
  positive("rms_norm_eps", rms_norm_eps, 1.0);
  positive("rope_theta", rope_theta, limits::kMaxRopeTheta);
  if (rope_scaling.type == "longrope") {
    for (const auto& [name, f] :
         {std::pair{"rope_scaling.short_factor", &rope_scaling.short_factor},
          std::pair{"rope_scaling.long_factor", &rope_scaling.long_factor}}) {
      if (!f->empty() && static_cast<int64_t>(f->size()) != rope_dim() / 2)
        bad(name, std::to_string(f->size()) + " entries",
            "must give one per rotated pair, " + std::to_string(rope_dim() / 2));
      for (float x : *f) positive(name, x, limits::kMaxRopeFactor);
    }
    positive("rope_scaling.attention_factor", rope_scaling.attention_factor, 1e3);
  } else if (rope_scaling.type == "yarn") {
    positive("rope_scaling.attention_factor", rope_scaling.attention_factor, 1e3);
    if (!std::isfinite(rope_scaling.factor) || rope_scaling.factor < 1 ||
        rope_scaling.factor > limits::kMaxRopeFactor)
      bad("rope_scaling.factor", num(rope_scaling.factor),
          "must be finite and in [1, " + num(limits::kMaxRopeFactor) + "]");
  } else if (!rope_scaling.type.empty()) {
    if (rope_scaling.type != "linear" && rope_scaling.type != "llama3")
      bad("rope_scaling.type", rope_scaling.type, "supported: linear, llama3, longrope, yarn");
    if (!std::isfinite(rope_scaling.factor) || rope_scaling.factor < 1 ||
        rope_scaling.factor > limits::kMaxRopeFactor)
      bad("rope_scaling.factor", num(rope_scaling.factor),
          "must be in [1, " + num(limits::kMaxRopeFactor) + "]");
  }
  if (rope_scaling.type == "llama3") {
    positive("rope_scaling.low_freq_factor", rope_scaling.low_freq_factor, limits::kMaxRopeFactor);
    positive("rope_scaling.high_freq_factor", rope_scaling.high_freq_factor,
             limits::kMaxRopeFactor);
    if (!(rope_scaling.high_freq_factor > rope_scaling.low_freq_factor))
      bad("rope_scaling.high_freq_factor", num(rope_scaling.high_freq_factor),
          "must be greater than low_freq_factor = " + num(rope_scaling.low_freq_factor));
    in_range("rope_scaling.original_max_position_embeddings",
             rope_scaling.original_max_position_embeddings, 1, limits::kMaxContext);
  }
  in_range("num_experts", num_experts, 0, limits::kMaxExperts);
  bool any_dense = num_experts == 0;
  if (num_experts > 0) {
    in_range("num_experts_per_tok", num_experts_per_tok, 1, num_experts);
    in_range("moe_intermediate_size", moe_intermediate_size, 1, limits::kMaxIntermediate);
    in_range("shared_expert_intermediate_size", shared_expert_intermediate_size, 0,
             limits::kMaxIntermediate);
    in_range("decoder_sparse_step", decoder_sparse_step, 1, limits::kMaxLayers);
    for (int64_t l : mlp_only_layers) in_range("mlp_only_layers", l, 0, num_layers - 1);
    if (router_sigmoid) {
      in_range("n_group", n_group, 1, num_experts);
      if (num_experts % n_group != 0)
        bad("n_group", std::to_string(n_group),
            "must divide the " + std::to_string(num_experts) + " experts");
      in_range("topk_group", topk_group, 1, n_group);
      if (topk_group < n_group) {
        in_range("n_routed_experts / n_group", num_experts / n_group, 2, num_experts);
        in_range("num_experts_per_tok", num_experts_per_tok, 1,
                 topk_group * (num_experts / n_group));
      }
      positive("routed_scaling_factor", routed_scaling_factor, 1e6);
    }
    for (int64_t l = 0; l < num_layers && !any_dense; ++l) any_dense = !layer_is_moe(l);
  }
  // Layers with a dense MLP need its width; an all-MoE model may leave it 0.
  in_range("intermediate_size", intermediate_size, any_dense ? 1 : 0, limits::kMaxIntermediate);
  if (bos_token_id != -1) in_range("bos_token_id", bos_token_id, 0, vocab_size - 1);
  for (int64_t e : eos_token_ids) in_range("eos_token_id", e, 0, vocab_size - 1);
}

}  // namespace vllm::model
