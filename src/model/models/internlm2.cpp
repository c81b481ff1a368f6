// InternLM2: the Llama block under its own names, with q, k and v fused in one `wqkv`
// projection. Hugging Face stores wqkv grouped by kv head: for each of the num_kv_heads
// groups, its q_per_kv query heads, then one k head, then one v head (head_dim rows each).
// llama.cpp's converter splits it into attn_q/attn_k/attn_v (and permutes q/k rows for its
// interleaved RoPE), so a GGUF reads like Llama's.
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"

namespace vllm::model {

namespace {

// Splits model.layers.N.attention.wqkv.weight into the shared q/k/v projections.
void split_wqkv(WeightStore& s, const ModelConfig& c, const std::string& layer) {
  TensorRef t = s.take(layer + "attention.wqkv.weight");
  const int64_t D = c.head_dim, nkv = c.num_kv_heads, qpk = c.num_heads / c.num_kv_heads;
  const int64_t E = c.hidden_size, rows = nkv * (qpk + 2) * D;
  if (t.shape != std::vector<int64_t>{rows, E})
    throw LoadError(t.file, "tensor " + t.label() + " has shape " + t.shape_str() + ", expected [" +
                                std::to_string(rows) + ", " + std::to_string(E) +
                                "] (num_key_value_heads * (num_attention_heads / "
                                "num_key_value_heads + 2) * head_dim, hidden_size)");
  if (!t.unsupported_type.empty() || vt::dtype_info(t.dtype).block_elems != 1)
    throw LoadError(t.file, "tensor " + t.label() + " must be f32, f16 or bf16 to be split");
  const size_t rb = vt::row_bytes(t.dtype, E);
  auto buf = std::shared_ptr<uint8_t[]>(new uint8_t[static_cast<size_t>(rows) * rb]);
  uint8_t* q = buf.get();
  uint8_t* k = q + static_cast<size_t>(nkv * qpk * D) * rb;
  uint8_t* v = k + static_cast<size_t>(nkv * D) * rb;
  const auto* src = static_cast<const uint8_t*>(t.data);
  const size_t head = static_cast<size_t>(D) * rb;
  for (int64_t g = 0; g < nkv; ++g) {
    const uint8_t* grp = src + static_cast<size_t>(g * (qpk + 2)) * head;
    std::memcpy(q + static_cast<size_t>(g * qpk) * head, grp, qpk * head);
    std::memcpy(k + g * head, grp + qpk * head, head);
    std::memcpy(v + g * head, grp + (qpk + 1) * head, head);
  }
  const std::pair<const char*, std::pair<uint8_t*, int64_t>> parts[] = {
      {"self_attn.q_proj.weight", {q, nkv * qpk * D}},
      {"self_attn.k_proj.weight", {k, nkv * D}},
      {"self_attn.v_proj.weight", {v, nkv * D}}};
  for (const auto& [name, part] : parts) {
    TensorRef r = t;
    r.name = layer + name;
    r.stored_name = t.name;
    r.shape = {part.second, E};
    r.data = part.first;
    r.n_bytes = static_cast<size_t>(part.second) * rb;
    s.add(std::move(r));
  }
  s.keep_alive(buf);
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  static const std::pair<const char*, const char*> kGlobal[] = {
      {"model.tok_embeddings.weight", "model.embed_tokens.weight"},
      {"output.weight", "lm_head.weight"}};
  static const std::pair<const char*, const char*> kLayer[] = {
      {"attention_norm.weight", "input_layernorm.weight"},
      {"ffn_norm.weight", "post_attention_layernorm.weight"},
      {"attention.wo.weight", "self_attn.o_proj.weight"},
      {"feed_forward.w1.weight", "mlp.gate_proj.weight"},
      {"feed_forward.w3.weight", "mlp.up_proj.weight"},
      {"feed_forward.w2.weight", "mlp.down_proj.weight"}};
  auto rename = [&](const std::string& from, const std::string& to) {
    if (!s.has(from)) return;
    TensorRef t = s.take(from);
    t.stored_name = from;
    t.name = to;
    s.add(std::move(t));
  };
  for (const auto& [from, to] : kGlobal) rename(from, to);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    for (const auto& [from, to] : kLayer) rename(p + from, p + to);
    if (s.has(p + "attention.wqkv.weight")) split_wqkv(s, c, p);
  }
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  // InternLM2's config says "bias" for the q/k/v/o projections; the shared block has no
  // o bias and the released models have none.
  if (j.contains("bias") && j["bias"].is_boolean() && j["bias"].get<bool>())
    throw LoadError(c.source,
                    "InternLM2 config has \"bias\": true (projection biases are not "
                    "supported)");
}

}  // namespace

const ModelFamily& internlm2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"InternLM2ForCausalLM"};
    f.gguf_architecture = "internlm2";
    f.gguf_rope_interleaved = true;  // llama.cpp: rope type NORM, q/k permuted by the converter
    f.hf_config = hf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_llama_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
