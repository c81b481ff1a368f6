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

namespace {

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t E = c.hidden_size, F = c.intermediate_size, D = c.head_dim;
  const int64_t qd = c.num_heads * D, kvd = c.num_kv_heads * D;
  LayerWeights w;
  w.attn.q = s.matrix(p + "self_attn.q_proj.weight", qd, E);
  w.attn.k = s.matrix(p + "self_attn.k_proj.weight", kvd, E);
  w.attn.v = s.matrix(p + "self_attn.v_proj.weight", kvd, E);
  w.attn.o = s.matrix(p + "self_attn.o_proj.weight", E, qd);
  w.attn.q_norm = s.vector_f32(p + "self_attn.q_norm.weight", D);
  w.attn.k_norm = s.vector_f32(p + "self_attn.k_norm.weight", D);
  w.attn.post_norm = s.vector_f32(p + "post_attention_layernorm.weight", E);
  w.mlp.gate = s.matrix(p + "mlp.gate_proj.weight", F, E);
  w.mlp.up = s.matrix(p + "mlp.up_proj.weight", F, E);
  w.mlp.down = s.matrix(p + "mlp.down_proj.weight", E, F);
  w.mlp.post_norm = s.vector_f32(p + "post_feedforward_layernorm.weight", E);
  return w;
}

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
  if (c.max_sliding_window() == 0) return;
  c.no_rope.assign(static_cast<size_t>(c.num_layers), false);
  for (int64_t i = 0; i < c.num_layers; ++i) c.no_rope[i] = c.layer_window(i) == 0;
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
    f.gguf_layer_tensors = {{"attn_q_norm.weight", "self_attn.q_norm.weight"},
                            {"attn_k_norm.weight", "self_attn.k_norm.weight"},
                            {"post_attention_norm.weight", "post_attention_layernorm.weight"},
                            {"post_ffw_norm.weight", "post_feedforward_layernorm.weight"}};
    f.hf_config_json = hf_config_json;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
