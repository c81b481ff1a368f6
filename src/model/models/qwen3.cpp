// Qwen3: the Llama block plus a per-head RMSNorm on q and k before RoPE. Qwen3-VL (dense)
// serves its Qwen3 text model (model/multimodal.h): its interleaved multimodal rope is the
// plain one for text, and the vision features it adds to the first layers ("deepstack") come
// only with images.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/multimodal.h"

namespace vllm::model {

LayerWeights load_qwen3_layer_attention_only(const WeightStore& s, const ModelConfig& c,
                                             int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
  LayerWeights w;
  w.attn = load_attention(s, c, i);
  w.attn.q_norm = s.vector_f32(p + "q_norm.weight", c.head_dim);
  w.attn.k_norm = s.vector_f32(p + "k_norm.weight", c.head_dim);
  return w;
}

namespace {

constexpr const char* kQwen3Vl = "Qwen3VLForConditionalGeneration";

// Qwen3VLTextConfig's defaults (transformers), for what its text_config leaves out.
const char* const kQwen3VlDefaults = R"({
  "vocab_size": 151936, "hidden_size": 4096, "intermediate_size": 22016,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 32,
  "head_dim": 128, "hidden_act": "silu", "max_position_embeddings": 128000,
  "rms_norm_eps": 1e-6, "rope_theta": 500000.0, "attention_bias": false,
  "tie_word_embeddings": false})";

nlohmann::json hf_config_json(const nlohmann::json& j) {
  if (j["architectures"][0].get<std::string>() != kQwen3Vl) return j;
  nlohmann::json out = text_config_over(kQwen3VlDefaults, j);
  drop_text_only_mrope(out);
  return out;
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  if (c.architecture == kQwen3Vl) move_language_model_weights(s);
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w = load_qwen3_layer_attention_only(s, c, i);
  w.mlp = load_mlp(s, c, i);
  return w;
}
}  // namespace

const ModelFamily& qwen3_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Qwen3ForCausalLM", kQwen3Vl};
    f.gguf_architecture = "qwen3";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.qk_norm = true;
    f.hf_config_json = hf_config_json;
    f.hf_weights = hf_weights;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
