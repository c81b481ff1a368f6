// Qwen2: the Llama block with a bias on the q/k/v projections (always present, whatever
// config.json's attention_bias says). Qwen2-VL and Qwen2.5-VL serve their Qwen2 text model
// (model/multimodal.h): their multimodal rope is the plain one for text. llama.cpp writes their
// text model as `qwen2vl` (qwen2vl.rope.dimension_sections: the rotary pairs of the time,
// height, width sections; for text all take the token's position).
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/multimodal.h"

namespace vllm::model {

namespace {

bool is_vl(const std::string& architecture) {
  return architecture == "Qwen2VLForConditionalGeneration" ||
         architecture == "Qwen2_5_VLForConditionalGeneration";
}

// Qwen2VLTextConfig's defaults (transformers; Qwen2.5-VL's are the same), for what a
// text_config leaves out. The original checkpoints keep the text fields at the top level.
const char* const kQwen2VlDefaults = R"({
  "vocab_size": 152064, "hidden_size": 8192, "intermediate_size": 29568,
  "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
  "hidden_act": "silu", "max_position_embeddings": 32768, "rms_norm_eps": 1e-5,
  "rope_theta": 1000000.0, "use_sliding_window": false, "sliding_window": 4096,
  "max_window_layers": 80, "tie_word_embeddings": false})";

nlohmann::json hf_config_json(const nlohmann::json& j) {
  if (!is_vl(j["architectures"][0].get<std::string>())) return j;
  nlohmann::json out = text_config_over(kQwen2VlDefaults, j);
  drop_text_only_mrope(out);
  return out;
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  if (is_vl(c.architecture)) move_language_model_weights(s);
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  const std::string key = p + "rope.dimension_sections";
  if (c.gguf_arch != "qwen2vl" || !g.has(key)) return;
  int64_t pairs = 0;
  for (int64_t n : g.get_int_array(key)) {
    if (n < 0 || n > c.head_dim / 2)
      throw LoadError(g.path(), key + " has an entry " + std::to_string(n) +
                                    " (must be a count of rotary pairs in [0, head_dim / 2])");
    pairs += n;
  }
  if (pairs > c.head_dim / 2)
    throw LoadError(g.path(), key + " sums to " + std::to_string(pairs) +
                                  " rotary pairs, more than " +
                                  "head_dim / 2 = " + std::to_string(c.head_dim / 2));
}

}  // namespace

const ModelFamily& qwen2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Qwen2ForCausalLM", "Qwen2VLForConditionalGeneration",
                          "Qwen2_5_VLForConditionalGeneration"};
    f.gguf_architecture = "qwen2";
    f.gguf_aliases = {"qwen2vl"};
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.qkv_bias = true;
    f.hf_config_json = hf_config_json;
    f.hf_weights = hf_weights;
    f.gguf_config = gguf_config;
    f.load_layer = load_llama_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
