// EXAONE 4.0 (Exaone4ForCausalLM, GGUF `exaone4`; LG AI Research's 1.2B and 32B): OLMo 2's
// norm placement (no norm before attention or the MLP; post_attention_layernorm /
// post_feedforward_layernorm on their outputs before the residual add) with Qwen3's per-head
// q/k RMSNorm, NEOX rotary. The 32B's hybrid attention: 3 of every 4 layers slide (layer_types,
// or sliding_window_pattern as a period or a string like "LLLG"; GGUF a per-layer flag list)
// and rotate; the global layers have no rotary embedding. Without a window (1.2B) every layer
// rotates, as transformers.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

const ModelFamily& olmo2_family();

namespace {

// A string sliding_window_pattern ("LLLG": L local, G global, repeated from layer 0) becomes
// layer_types, which the shared reader takes.
nlohmann::json hf_config_json(const nlohmann::json& j) {
  if (!j.contains("sliding_window_pattern") || !j["sliding_window_pattern"].is_string()) return j;
  nlohmann::json out = j;
  const std::string pat = j["sliding_window_pattern"].get<std::string>();
  out.erase("sliding_window_pattern");
  if (out.contains("layer_types") && !out["layer_types"].is_null()) return out;
  if (pat.empty() || pat.find_first_not_of("LG") != std::string::npos)
    throw tok::JsonFieldError("sliding_window_pattern = \"" + pat +
                              "\" (must be a string of L and G, or a period)");
  const int64_t n = tok::json_int_or(j, "num_hidden_layers", 0, 0, limits::kMaxLayers);
  nlohmann::json types = nlohmann::json::array();
  for (int64_t i = 0; i < n; ++i)
    types.push_back(pat[static_cast<size_t>(i) % pat.size()] == 'L' ? "sliding_attention"
                                                                    : "full_attention");
  out["layer_types"] = types;
  return out;
}

// Rotary only on the sliding layers when there are any (transformers' global NoPE).
void global_layers_without_rope(ModelConfig& c) {
  if (c.max_sliding_window() > 0) rotate_only_sliding_layers(c);
}

void hf_config(ModelConfig& c, const nlohmann::json&) { global_layers_without_rope(c); }

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  read_gguf_sliding_window(c, g, p, 0, 4);
  global_layers_without_rope(c);
}

}  // namespace

const ModelFamily& exaone4_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Exaone4ForCausalLM"};
    f.gguf_architecture = "exaone4";
    f.qk_norm = true;
    f.hf_sliding_window = ModelFamily::SlidingWindow::kPattern;
    f.sliding_window_period = 4;
    f.gguf_layer_tensors = olmo2_family().gguf_layer_tensors;  // the same tensors
    f.hf_config_json = hf_config_json;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_output_norm_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
