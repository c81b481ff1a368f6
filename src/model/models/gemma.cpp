// Gemma (1), Gemma 2 and Gemma 3 (text). Gemma: the Llama block with GeGLU (the tanh GELU),
// embeddings times sqrt(hidden_size) and w - 1 norms. Gemma 2 and 3: the Llama block with Gemma's
// extras. A norm after attention and after the MLP too ("sandwich" norms, four per layer); GeGLU
// with the tanh GELU; embeddings times sqrt(hidden_size); attention scaled by
// query_pre_attn_scalar^-0.5; sliding-window layers. Gemma 2: every other layer sliding (window
// 4096), one rope base, attention scores and logits soft-capped (cap * tanh(x / cap)). Gemma 3:
// per-head RMSNorm on q and k, five layers of every six sliding with their own rope base (10000),
// the full ones with rope_theta (1e6) and any rope scaling, no soft-capping. Hugging Face stores
// the RMSNorm weights as w - 1 (x * (1 + w)); llama.cpp's converter adds the 1 back, so GGUF norms
// are used as stored.
#include <cmath>
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

// Gemma2Config's and Gemma3TextConfig's defaults (transformers), for the fields a config.json
// may leave out: the multimodal checkpoints (Gemma 3 4B-27B) write only what differs under
// text_config.
const char* const kGemma2Defaults = R"({
  "vocab_size": 256000, "hidden_size": 2304, "intermediate_size": 9216,
  "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 8192,
  "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "query_pre_attn_scalar": 256,
  "sliding_window": 4096, "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0,
  "tie_word_embeddings": true, "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0})";
const char* const kGemma3Defaults = R"({
  "vocab_size": 262208, "hidden_size": 2304, "intermediate_size": 9216,
  "num_hidden_layers": 26, "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256,
  "hidden_activation": "gelu_pytorch_tanh", "max_position_embeddings": 131072,
  "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
  "query_pre_attn_scalar": 256, "sliding_window": 4096, "sliding_window_pattern": 6,
  "tie_word_embeddings": true, "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0})";

// GemmaConfig's defaults (transformers; Gemma 7B's shape).
const char* const kGemma1Defaults = R"({
  "vocab_size": 256000, "hidden_size": 3072, "intermediate_size": 24576,
  "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 16, "head_dim": 256,
  "max_position_embeddings": 8192, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
  "tie_word_embeddings": true, "bos_token_id": 2, "eos_token_id": 1, "pad_token_id": 0})";

bool is_gemma2(const std::string& architecture) { return architecture == "Gemma2ForCausalLM"; }

// Gemma3ForCausalLM's own fields, or Gemma3ForConditionalGeneration's text_config, over
// transformers' defaults (model/multimodal.h).
nlohmann::json hf_config_json(const nlohmann::json& j) {
  return text_config_over(
      is_gemma2(j["architectures"][0].get<std::string>()) ? kGemma2Defaults : kGemma3Defaults, j);
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  using tok::json_float_or;
  const bool g2 = is_gemma2(c.architecture);
  auto cap = [&](const char* k) {
    return j.contains(k) && !j[k].is_null() ? json_float_or(j, k, 0, 0, 1e6) : 0.0;
  };
  c.attn_logit_softcap = cap("attn_logit_softcapping");
  c.final_logit_softcap = cap("final_logit_softcapping");
  if (tok::json_bool_or(j, "use_bidirectional_attention", false))
    throw LoadError(c.source, "use_bidirectional_attention: only causal Gemma 3 is supported");
  c.query_pre_attn_scalar =
      json_float_or(j, "query_pre_attn_scalar", 256, 0, static_cast<double>(limits::kMaxHidden));
  c.rope_theta = json_float_or(j, "rope_theta", g2 ? 1e4 : 1e6, 0, limits::kMaxRopeTheta);
  if (!g2)
    c.rope_local_theta = json_float_or(j, "rope_local_base_freq", 1e4, 0, limits::kMaxRopeTheta);
  c.scale_embeddings = true;
  c.sandwich_norms = true;
  c.norm_weight_offset = 1.0f;
  if (!j.contains("hidden_activation") && !j.contains("hidden_act"))
    c.hidden_act = Activation::kGeluTanh;
  // The sliding-window layers: ModelFamily::SlidingWindow::kPattern.
}

// llama.cpp's keys. The window: <arch>.attention.sliding_window (gemma3: none or 0 means no
// window; gemma2: 4096 when absent), on the layers <arch>.attention.sliding_window_pattern
// flags (one per layer) or every layer but each period-th (gemma2 2, gemma3 6). The sliding
// layers' rope base: <arch>.rope.freq_base_swa (gemma3 default 10000, never scaled; gemma2 the
// global one). Soft-capping (gemma2): <arch>.attn_logit_softcapping / final_logit_softcapping,
// 50 and 30 when absent. llama.cpp fixes the attention scale: 1/sqrt(hidden_size / heads) for
// the 27B models (gemma2: 46 layers, gemma3: 62), else 1/sqrt(head_dim).
void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  const bool g2 = is_gemma2(c.architecture);
  c.hidden_act = Activation::kGeluTanh;
  c.scale_embeddings = true;
  c.sandwich_norms = true;
  c.query_pre_attn_scalar = c.num_layers == (g2 ? 46 : 62)
                                ? static_cast<double>(c.hidden_size / c.num_heads)
                                : static_cast<double>(c.head_dim);
  if (g2) {
    c.attn_logit_softcap = g.get_float_or(p + "attn_logit_softcapping", 50.0);
    c.final_logit_softcap = g.get_float_or(p + "final_logit_softcapping", 30.0);
    for (double cap : {c.attn_logit_softcap, c.final_logit_softcap})
      if (!std::isfinite(cap) || cap < 0)
        throw LoadError(g.path(), p + "*_logit_softcapping = " + std::to_string(cap) +
                                      " (must be finite and not negative)");
  }
  const int64_t window = read_gguf_sliding_window(c, g, p, g2 ? 4096 : 0, g2 ? 2 : 6);
  if (window > 0 && (g.has(p + "rope.freq_base_swa") || !g2))
    c.rope_local_theta = g.get_float_or(p + "rope.freq_base_swa", 1e4);
}

// Hugging Face's names for the four norms, moved to the slots the shared loaders read:
// pre_feedforward_layernorm is the MLP's input norm (Llama's post_attention_layernorm), and
// Gemma's post_attention_layernorm (after attention) gets a name of its own, as llama.cpp's
// post_attention_norm does.
void hf_weights(WeightStore& s, const ModelConfig& c) {
  move_language_model_weights(s);  // Gemma3ForConditionalGeneration
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    s.rename(p + "post_attention_layernorm.weight", p + "post_attention_norm.weight");
    s.rename(p + "pre_feedforward_layernorm.weight", p + "post_attention_layernorm.weight");
    s.rename(p + "post_feedforward_layernorm.weight", p + "post_ffw_norm.weight");
  }
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t E = c.hidden_size, D = c.head_dim;
  LayerWeights w = load_llama_layer(s, c, i);  // the two input norms, through load_norm
  if (c.qk_norm) {                             // Gemma 3
    w.attn.q_norm = load_norm(s, c, p + "self_attn.q_norm.weight", D);
    w.attn.k_norm = load_norm(s, c, p + "self_attn.k_norm.weight", D);
  }
  w.attn.post_norm = load_norm(s, c, p + "post_attention_norm.weight", E);
  w.mlp.post_norm = load_norm(s, c, p + "post_ffw_norm.weight", E);
  return w;
}

// Gemma (1): the released configs say hidden_act "gelu" (and later hidden_activation
// "gelu_pytorch_tanh"); transformers and vLLM both read "gelu" there as the tanh GELU.
nlohmann::json gemma1_config_json(const nlohmann::json& j) {
  nlohmann::json c = text_config_over(kGemma1Defaults, j);
  const bool no_activation = !c.contains("hidden_activation") || c["hidden_activation"].is_null();
  if (no_activation && (!c.contains("hidden_act") || c["hidden_act"] == "gelu"))
    c["hidden_act"] = "gelu_pytorch_tanh";
  return c;
}

void gemma1_hf_config(ModelConfig& c, const nlohmann::json& j) {
  if (tok::json_bool_or(j, "use_bidirectional_attention", false))
    throw LoadError(c.source, "use_bidirectional_attention: only causal Gemma is supported");
  c.scale_embeddings = true;
  c.norm_weight_offset = 1.0f;
}

// llama.cpp's gemma: the tanh GELU, scaled embeddings, 1/sqrt(head_dim).
void gemma1_gguf_config(ModelConfig& c, const GgufFile&, const std::string&) {
  c.hidden_act = Activation::kGeluTanh;
  c.scale_embeddings = true;
}

}  // namespace

// Gemma 2B / 7B, Gemma 1.1, CodeGemma: the Llama block with Gemma's GeGLU, scaled embeddings
// and w - 1 norms; no sandwich norms, windows or soft-capping.
const ModelFamily& gemma1_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"GemmaForCausalLM"};
    f.gguf_architecture = "gemma";
    f.hf_config_json = gemma1_config_json;
    f.hf_config = gemma1_hf_config;
    f.gguf_config = gemma1_gguf_config;
    f.load_layer = load_llama_layer;  // Llama's two norms, stored w - 1 (load_norm)
    return f;
  }();
  return f;
}

const ModelFamily& gemma2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Gemma2ForCausalLM"};
    f.hf_sliding_window = ModelFamily::SlidingWindow::kPattern;
    f.sliding_window_period = 2;
    f.gguf_architecture = "gemma2";
    f.gguf_layer_tensors = {{"post_attention_norm.weight", "post_attention_norm.weight"},
                            {"post_ffw_norm.weight", "post_ffw_norm.weight"}};
    f.hf_config_json = hf_config_json;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

const ModelFamily& gemma3_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Gemma3ForCausalLM", "Gemma3ForConditionalGeneration"};
    f.hf_sliding_window = ModelFamily::SlidingWindow::kPattern;
    f.sliding_window_period = 6;
    f.gguf_architecture = "gemma3";
    f.qk_norm = true;
    f.gguf_layer_tensors = {{"post_attention_norm.weight", "post_attention_norm.weight"},
                            {"post_ffw_norm.weight", "post_ffw_norm.weight"}};
    f.hf_config_json = hf_config_json;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
