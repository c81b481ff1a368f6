// Presents a GGUF file's tensors under Hugging Face names, so one set of layers reads
// both formats. The table here is llama.cpp's shared decoder naming; a family adds its own
// tensors (biases, q/k norms, experts) in its descriptor. Stacked expert tensors keep their 3-D
// shape under "model.layers.N.mlp.experts.{gate,up,down}_proj.weight".
#include <regex>

#include "model/family.h"
#include "model/gguf.h"
#include "model/gguf_weights.h"

namespace vllm::model {

namespace {

struct NamePair {
  const char* gguf;
  const char* hf;
};
const NamePair kGlobal[] = {
    {"token_embd.weight", "model.embed_tokens.weight"},
    {"output_norm.weight", "model.norm.weight"},
    {"output_norm.bias", "model.norm.bias"},  // LayerNorm families with biases (StableLM)
    {"output.weight", "lm_head.weight"},
    {"output.bias", "lm_head.bias"},  // Phi-2
    {"rope_freqs.weight", "rope_freqs.weight"},
    {"rope_factors_short.weight", "rope_factors_short.weight"},
    {"rope_factors_long.weight", "rope_factors_long.weight"},
};
const NamePair kLayer[] = {
    {"attn_norm.weight", "input_layernorm.weight"},
    {"attn_q.weight", "self_attn.q_proj.weight"},
    {"attn_k.weight", "self_attn.k_proj.weight"},
    {"attn_v.weight", "self_attn.v_proj.weight"},
    {"attn_output.weight", "self_attn.o_proj.weight"},
    {"ffn_norm.weight", "post_attention_layernorm.weight"},
    {"attn_norm.bias", "input_layernorm.bias"},
    {"ffn_norm.bias", "post_attention_layernorm.bias"},
    {"ffn_gate.weight", "mlp.gate_proj.weight"},
    {"ffn_up.weight", "mlp.up_proj.weight"},
    {"ffn_down.weight", "mlp.down_proj.weight"},
    {"attn_output.bias", "self_attn.o_proj.bias"},  // o / MLP biases (Phi-2, StarCoder2)
    {"ffn_up.bias", "mlp.up_proj.bias"},
    {"ffn_down.bias", "mlp.down_proj.bias"},
    // The q/k/v biases and per-head (or whole-projection) q/k norms, wherever a family has them.
    {"attn_q.bias", "self_attn.q_proj.bias"},
    {"attn_k.bias", "self_attn.k_proj.bias"},
    {"attn_v.bias", "self_attn.v_proj.bias"},
    {"attn_q_norm.weight", "self_attn.q_norm.weight"},
    {"attn_k_norm.weight", "self_attn.k_norm.weight"},
    // Every MoE family's router (with its correction bias, where it has one) and stacked experts.
    {"exp_probs_b.bias", "mlp.gate.e_score_correction_bias"},
    {"ffn_gate_inp.weight", "mlp.gate.weight"},
    {"ffn_gate_exps.weight", "mlp.experts.gate_proj.weight"},
    {"ffn_up_exps.weight", "mlp.experts.up_proj.weight"},
    {"ffn_down_exps.weight", "mlp.experts.down_proj.weight"},
    // Shared experts under DeepSeek's name (GLM-4.5, ERNIE 4.5; Qwen2-MoE's own names win).
    {"ffn_gate_shexp.weight", "mlp.shared_experts.gate_proj.weight"},
    {"ffn_up_shexp.weight", "mlp.shared_experts.up_proj.weight"},
    {"ffn_down_shexp.weight", "mlp.shared_experts.down_proj.weight"},
};

std::string hf_name(const std::string& gguf_name, const ModelFamily& family) {
  for (const auto& p : kGlobal)
    if (gguf_name == p.gguf) return p.hf;
  static const std::regex blk(R"(blk\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(gguf_name, m, blk)) {
    // The family's names first: they may rename a shared one.
    for (const auto& [gguf, hf] : family.gguf_layer_tensors)
      if (m[2] == gguf) return "model.layers." + m[1].str() + "." + hf;
    for (const auto& p : kLayer)
      if (m[2] == p.gguf) return "model.layers." + m[1].str() + "." + p.hf;
  }
  return "gguf:" + gguf_name;  // kept, but no layer asks for it
}

// The inverse of hf_name, for messages ("" when the shared name has no GGUF form).
std::string gguf_name(const std::string& name, const ModelFamily& family) {
  for (const auto& p : kGlobal)
    if (name == p.hf) return p.gguf;
  static const std::regex layer(R"(model\.layers\.(\d+)\.(.+))");
  std::smatch m;
  if (std::regex_match(name, m, layer)) {
    for (const auto& [gguf, hf] : family.gguf_layer_tensors)
      if (m[2] == hf) return "blk." + m[1].str() + "." + gguf;
    for (const auto& p : kLayer)
      if (m[2] == p.hf) return "blk." + m[1].str() + "." + p.gguf;
  }
  return "";
}

}  // namespace

void load_gguf_weights(const GgufFile& g, const ModelFamily& family, WeightStore& store) {
  store.set_source(g.path());
  store.set_file_name([&family](const std::string& name) { return gguf_name(name, family); });
  for (const auto& t : g.tensors()) {
    TensorRef r;
    r.name = hf_name(t.name, family);
    r.file = g.path();
    r.stored_name = t.name;
    r.shape = t.shape;
    if (t.supported) {
      r.dtype = t.dtype;
      r.data = t.data;
      r.n_bytes = t.n_bytes;
    } else {
      r.unsupported_type = std::string(vt::ggml_type_name(t.ggml_type)) + " (GGML type " +
                           std::to_string(t.ggml_type) + ")";
    }
    store.add(std::move(r));
  }
}

}  // namespace vllm::model
