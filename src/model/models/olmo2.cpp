// OLMo 2: the Llama block with its norms moved: no RMSNorm before attention or the MLP; each
// block's output is RMSNorm-ed before it joins the residual stream (Hugging Face's
// post_attention_layernorm / post_feedforward_layernorm, llama.cpp's post_attention_norm /
// post_ffw_norm), and q and k are RMSNorm-ed over their whole projection (all heads at once)
// before RoPE. NEOX RoPE, not permuted in the GGUF.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void hf_config(ModelConfig& c, const nlohmann::json&) { c.qk_norm_whole = true; }

void gguf_config(ModelConfig& c, const GgufFile&, const std::string&) { c.qk_norm_whole = true; }

// OLMo 3: three sliding-window layers of every four (layer_types; window 4096 when absent),
// rotating with plain rope at rope_theta, and the full ones with any rope scaling (Olmo-3's
// YaRN), as transformers keeps one rope per layer type.
void olmo3_hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.qk_norm_whole = true;
  c.rope_local_theta =
      tok::json_float_or(j, "rope_local_base_freq", c.rope_theta, 0, limits::kMaxRopeTheta);
}

}  // namespace

// OLMo 3 (Olmo3ForCausalLM: Olmo-3-7B / 32B): OLMo 2's block with sliding-window layers.
// Hugging Face folders only: the llama.cpp this engine is checked against has no olmo3.
const ModelFamily& olmo3_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Olmo3ForCausalLM"};
    f.qk_norm = true;
    f.hf_sliding_window = ModelFamily::SlidingWindow::kPattern;
    f.sliding_window_period = 4;
    f.hf_config = olmo3_hf_config;
    f.load_layer = load_output_norm_layer;
    return f;
  }();
  return f;
}

const ModelFamily& olmo2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Olmo2ForCausalLM"};
    f.gguf_architecture = "olmo2";
    f.qk_norm = true;
    // llama.cpp's ffn_norm would be Llama's post_attention_layernorm: OLMo 2's files have none.
    f.gguf_layer_tensors = {{"post_attention_norm.weight", "post_attention_layernorm.weight"},
                            {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"}};
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_output_norm_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
