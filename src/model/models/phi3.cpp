// Phi-3 (Phi-3-mini/medium 4k, Phi-4 14B): the Llama block with q, k and v fused in one
// qkv_proj (rows q | k | v) and the gate and up projections fused in one gate_up_proj (rows
// gate | up). The fused matrices are read as row ranges of the stored tensor (any type: rows
// are whole blocks), in both forms: llama.cpp's converter keeps them fused too (attn_qkv, and
// ffn_up with 2 * feed_forward_length rows). NEOX RoPE, not permuted. Hugging Face's
// sliding_window (2047 on Phi-3-mini-4k) applies to every layer; llama.cpp ignores
// phi3.attention.sliding_window ("Phi SWA is currently disabled"), so a GGUF attends to its
// whole context as llama.cpp does. longrope (Phi-3.5-mini, Phi-3-*-128k) runs within its
// original context by default (the short factors, as transformers and vLLM there; the context
// is capped there), and with its long factors everywhere when --max-model-len asks for more
// (rope_scaling.h use_longrope_factors, vLLM's rule). Phi-4-mini: partial rotary (the first 0.75 of
// each head rotates; ModelConfig::rotary_dim), a tied embedding and the o200k ("gpt-4o")
// vocabulary.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/rope_scaling.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  // longrope (llama.cpp: rope_factors_short / _long tensors, rope.scaling.attn_factor and
  // original_context_length), as for config.json: the short or the long factors divide the
  // frequencies at load (model/causal_lm.cpp).
  if (g.find_tensor("rope_factors_short.weight") || g.find_tensor("rope_factors_long.weight")) {
    RopeScaling& r = c.rope_scaling;
    r.type = "longrope";
    r.attention_factor = g.get_float_or(p + "rope.scaling.attn_factor", 1.0);
    r.original_max_position_embeddings =
        g.get_int_or(p + "rope.scaling.original_context_length", c.max_position_embeddings);
    if (r.original_max_position_embeddings < 1)
      throw LoadError(g.path(), p + "rope.scaling.original_context_length = " +
                                    std::to_string(r.original_max_position_embeddings) +
                                    " (must be positive)");
    cap_at_longrope_original(c, p + "rope.scaling.original_context_length");
  }
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w;
  w.attn = load_attention(s, c, i);  // qkv_proj read as row ranges
  w.mlp = load_fused_gate_up_mlp(s, c, i, "post_attention_layernorm.weight");
  return w;
}

}  // namespace

const ModelFamily& phi3_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Phi3ForCausalLM"};
    f.gguf_architecture = "phi3";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kEveryLayer;
    f.gguf_layer_tensors = {{"attn_qkv.weight", "self_attn.qkv_proj.weight"}};
    f.gguf_config = gguf_config;
    f.load_layer = load_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
