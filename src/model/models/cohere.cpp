// Cohere: Command-R / Aya (CohereForCausalLM, GGUF `command-r`) and Command R7B / Command A
// (Cohere2ForCausalLM, GGUF `cohere2`). One LayerNorm per layer (a weight, no bias; eps from
// layer_norm_eps) before a parallel block: attention and MLP both read the normalized input and
// both outputs join the residual (x + attn + mlp). Rotary in adjacent pairs (transformers'
// Cohere rotate_half; llama.cpp's rope NORM, not permuted), logits times logit_scale (0.0625
// when absent), tied embeddings by default. Cohere2 adds sliding-window layers (3 of 4;
// layer_types or sliding_window_pattern, llama.cpp's fixed 4) and rotates only on them: its
// global layers have no rotary embedding. Command R+'s per-head q/k LayerNorms (use_qk_norm)
// are refused by name.
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void common(ModelConfig& c, double logit_scale) {
  c.layer_norm = true;
  c.parallel_block = true;
  c.rope_style = vt::cpu::RopeStyle::kInterleaved;
  c.logits_scaling = 1.0 / logit_scale;
}

// Cohere2: rotary only on the sliding-window layers (none at all without a window, as
// transformers' Cohere2Attention).
void rope_on_sliding_layers_only(ModelConfig& c) {
  if (c.architecture == "Cohere2ForCausalLM") rotate_only_sliding_layers(c);
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  using tok::json_float_or;
  if (tok::json_bool_or(j, "use_qk_norm", false))
    throw LoadError(c.source,
                    "use_qk_norm = true: Command R+'s per-head q/k LayerNorms are not supported");
  c.rms_norm_eps = json_float_or(j, "layer_norm_eps", 1e-5, 0, 1);
  const double ls = json_float_or(j, "logit_scale", 0.0625, 0, 1e6);
  if (!(ls > 0)) throw tok::JsonFieldError("logit_scale = 0 (must be positive)");
  common(c, ls);
  if (!j.contains("tie_word_embeddings")) c.tie_word_embeddings = true;  // CohereConfig's default
  rope_on_sliding_layers_only(c);
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  if (g.find_tensor("blk.0.attn_q_norm.weight"))
    throw LoadError(g.path(),
                    "blk.0.attn_q_norm.weight: Command R+'s per-head q/k LayerNorms "
                    "are not supported");
  const double ls = g.get_float_or(p + "logit_scale", 1.0);
  if (!std::isfinite(ls) || !(ls > 0) || ls > 1e6)
    throw LoadError(g.path(), p + "logit_scale = " + std::to_string(ls) +
                                  " (must be finite, positive and at most 1e6)");
  common(c, ls);
  if (c.gguf_arch == "cohere2") {  // llama.cpp: the window key required, on 3 of every 4 layers
    if (read_gguf_sliding_window(c, g, p, g.get_int(p + "attention.sliding_window"), 4) == 0)
      throw LoadError(g.path(), p + "attention.sliding_window = " +
                                    std::to_string(g.get_int(p + "attention.sliding_window")) +
                                    " (must be positive)");
    rope_on_sliding_layers_only(c);
  }
}

ModelFamily family(std::vector<std::string> hf, std::string gguf) {
  ModelFamily f;
  f.hf_architectures = std::move(hf);
  f.gguf_architecture = std::move(gguf);
  f.gguf_rope_interleaved = true;  // rope NORM (adjacent pairs), as transformers
  f.hf_config = hf_config;
  f.gguf_config = gguf_config;
  f.load_layer = load_llama_layer;  // no MLP norm: the parallel block reuses the attention's
  return f;
}

}  // namespace

const ModelFamily& cohere_family() {
  static const ModelFamily f = family({"CohereForCausalLM"}, "command-r");
  return f;
}

const ModelFamily& cohere2_family() {
  static const ModelFamily f = [] {
    ModelFamily f = family({"Cohere2ForCausalLM"}, "cohere2");
    f.hf_sliding_window = ModelFamily::SlidingWindow::kPattern;
    f.sliding_window_period = 4;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
