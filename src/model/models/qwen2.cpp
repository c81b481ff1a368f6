// Qwen2: the Llama block with a bias on the q/k/v projections (always present, whatever
// config.json's attention_bias says). Qwen2-VL and Qwen2.5-VL serve their Qwen2 text model
// (model/multimodal.h): their multimodal rope is the plain one for text.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
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

}  // namespace

const ModelFamily& qwen2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Qwen2ForCausalLM", "Qwen2VLForConditionalGeneration",
                          "Qwen2_5_VLForConditionalGeneration"};
    f.gguf_architecture = "qwen2";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.qkv_bias = true;
    f.gguf_layer_tensors = {{"attn_q.bias", "self_attn.q_proj.bias"},
                            {"attn_k.bias", "self_attn.k_proj.bias"},
                            {"attn_v.bias", "self_attn.v_proj.bias"}};
    f.hf_config_json = hf_config_json;
    f.hf_weights = hf_weights;
    f.load_layer = load_dense_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
