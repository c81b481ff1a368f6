// Llama family: Llama 2/3 (incl. llama3 rope scaling), Mistral, SmolLM2, and Mixtral: the
// shared decoder block with no extras, or with a sparse MoE block on every layer (Mixtral:
// softmax router, top num_experts_per_tok renormalized, SwiGLU experts). llama.cpp's converter
// permutes the q/k rows for its interleaved RoPE; its Mixtral is `llama` with expert_count.
// Mistral3ForConditionalGeneration (Mistral Small 3.1 / 3.2, and Ministral 3 3B / 8B / 14B with a
// ministral3 text_config) serves its text model (model/multimodal.h); Ministral3ForCausalLM and
// GGUF `mistral3` are Ministral 3's: YaRN plus Llama 4's attention temperature
// (ModelConfig::attn_temperature_scale), no sliding window.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/multimodal.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

constexpr const char* kMixtral = "MixtralForCausalLM";
constexpr const char* kMistral3 = "Mistral3ForConditionalGeneration";

// Ministral3Config's defaults (transformers), for a Ministral 3 text_config: no sliding window.
const char* const kMinistral3Defaults = R"({
  "vocab_size": 131072, "hidden_size": 4096, "intermediate_size": 14336,
  "num_hidden_layers": 34, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
  "hidden_act": "silu", "max_position_embeddings": 262144, "rms_norm_eps": 1e-5,
  "sliding_window": null, "tie_word_embeddings": false, "bos_token_id": 1, "eos_token_id": 2})";

// MistralConfig's defaults (transformers), for what Mistral3's text_config leaves out.
const char* const kMistralDefaults = R"({
  "vocab_size": 32000, "hidden_size": 4096, "intermediate_size": 14336,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 128,
  "hidden_act": "silu", "max_position_embeddings": 131072, "rms_norm_eps": 1e-6,
  "rope_theta": 10000.0, "sliding_window": 4096, "tie_word_embeddings": false,
  "bos_token_id": 1, "eos_token_id": 2})";

nlohmann::json hf_config_json(const nlohmann::json& j) {
  if (j["architectures"][0].get<std::string>() != kMistral3) return j;
  const bool ministral3 = j.contains("text_config") && j["text_config"].is_object() &&
                          j["text_config"].value("model_type", std::string()) == "ministral3";
  return text_config_over(ministral3 ? kMinistral3Defaults : kMistralDefaults, j);
}

// Only Mixtral's config names experts (num_local_experts; intermediate_size is the expert
// width, and every layer is sparse); whatever a Llama / Mistral config says, it is dense.
void hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.num_experts = 0;
  if (c.architecture != kMixtral) return;
  c.num_experts = tok::json_int_or(j, "num_local_experts", 8, 1, limits::kMaxExperts);
  c.num_experts_per_tok = tok::json_int_or(j, "num_experts_per_tok", 2, 1, limits::kMaxExperts);
  c.moe_intermediate_size = c.intermediate_size;
  c.decoder_sparse_step = 1;
  c.mlp_only_layers.clear();
  c.norm_topk_prob = true;  // Mixtral always renormalizes the top-k weights
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  // Ministral 3 (mistral3): Llama 4's attention temperature over the YaRN pretraining length,
  // as llama.cpp's mistral3 graph.
  if (g.has(p + "attention.temperature_scale")) {
    c.attn_temperature_scale = g.get_float(p + "attention.temperature_scale");
    c.attn_temperature_length = c.rope_scaling.original_max_position_embeddings;
    if (!(c.attn_temperature_scale >= 0 && c.attn_temperature_scale <= 1e3) ||
        (c.attn_temperature_scale > 0 && c.attn_temperature_length < 1))
      throw LoadError(g.path(), p + "attention.temperature_scale = " +
                                    std::to_string(c.attn_temperature_scale) +
                                    " (needs YaRN's original_context_length, and a value in "
                                    "[0, 1000])");
  }
  c.num_experts = 0;
  if (!g.has(p + "expert_count") || g.get_int(p + "expert_count") == 0) return;
  // llama.cpp's llama MoE sizes its experts by feed_forward_length (read_gguf_experts' default).
  read_gguf_experts(c, g, p);
  c.decoder_sparse_step = 1;
  c.norm_topk_prob = true;
}

// Mixtral's names (block_sparse_moe, experts' w1 / w3 / w2) to the shared ones.
void hf_weights(WeightStore& s, const ModelConfig& c) {
  if (c.architecture == kMistral3) move_language_model_weights(s);
  if (c.num_experts > 0) rename_block_sparse_moe(s, c);
}

}  // namespace

const ModelFamily& llama_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"LlamaForCausalLM", "MistralForCausalLM", kMixtral, kMistral3,
                          "Ministral3ForCausalLM"};
    f.gguf_architecture = "llama";
    f.gguf_aliases = {"mistral3"};  // Ministral 3 (and Mistral Small 3.1's newer GGUFs)
    f.gguf_rope_interleaved = true;
    f.hf_sliding_window = ModelFamily::SlidingWindow::kEveryLayer;
    f.moe = true;
    f.hf_config_json = hf_config_json;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_llama_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
