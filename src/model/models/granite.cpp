// Granite (IBM Granite 3.x dense): the Llama block with four multipliers (ModelConfig):
// embeddings times embedding_multiplier, attention scaled by attention_multiplier, each block's
// output times residual_multiplier, logits divided by logits_scaling. transformers' defaults
// are 1 for all four (an attention scale of 1, not head_dim^-0.5); llama.cpp's `granite` keys
// are embedding_scale, attention.scale (0 or absent: head_dim^-0.5), residual_scale and
// logit_scale. The GGUF's q/k rows are permuted as for Llama.
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

constexpr double kMaxMultiplier = 1e6;

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  auto m = [&](const char* k) {
    const double v = tok::json_float_or(j, k, 1.0, 0, kMaxMultiplier);
    if (!(v > 0)) throw tok::JsonFieldError(std::string(k) + " = 0 (must be positive)");
    return v;
  };
  c.embedding_multiplier = m("embedding_multiplier");
  c.attention_multiplier = m("attention_multiplier");
  c.residual_multiplier = m("residual_multiplier");
  c.logits_scaling = m("logits_scaling");
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  auto m = [&](const std::string& key, double def) {
    const double v = g.get_float_or(p + key, def);
    if (!std::isfinite(v) || v < 0 || v > kMaxMultiplier || (v == 0 && def != 0))
      throw LoadError(g.path(), p + key + " = " + std::to_string(v) +
                                    " (must be finite, positive and at most 1e6)");
    return v;
  };
  c.embedding_multiplier = m("embedding_scale", 1.0);
  c.attention_multiplier = m("attention.scale", 0.0);  // 0: head_dim^-0.5
  c.residual_multiplier = m("residual_scale", 1.0);
  c.logits_scaling = m("logit_scale", 1.0);
}

}  // namespace

const ModelFamily& granite_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"GraniteForCausalLM"};
    f.gguf_architecture = "granite";
    f.gguf_rope_interleaved = true;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_dense_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
