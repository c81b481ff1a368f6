// DeepSeek-V2 / V3 (DeepseekV2ForCausalLM: DeepSeek-V2-Lite, DeepSeek-Coder-V2-Lite;
// DeepseekV3ForCausalLM: DeepSeek-V3 / R1, Moonlight, Kimi K2; Glm4MoeLiteForCausalLM:
// GLM-4.7-Flash, V3's block with its mlp_layer_types; GGUF `deepseek2`): multi-head
// latent attention (ModelConfig::mla, layers.cpp's mla_attention_block) and DeepSeek's MoE.
//   - attention: q from q_proj, or q_a_proj -> q_a_layernorm -> q_b_proj (q_lora_rank); k and v
//     from kv_a_proj_with_mqa's latent (kv_a_layernorm, then kv_b_proj per head) and its shared
//     rotated part; heads of qk_nope_head_dim + qk_rope_head_dim for q.k, v_head_dim for v;
//     rotary in adjacent pairs (V2's complex rotation; V3's rope_interleave, rotate-half when it
//     is false); scale (qk_nope + qk_rope)^-0.5, times mscale(factor, mscale_all_dim)^2 under
//     YaRN (transformers' yarn_apply_mscale, llama.cpp's kq_scale);
//   - the first first_k_dense_replace layers dense, the rest MoE: V2's softmax router (top-k,
//     renormalized only with norm_topk_prob, times routed_scaling_factor), V3's sigmoid router
//     with e_score_correction_bias and n_group / topk_group (GLM-4.5's), plus n_shared_experts
//     shared experts as one SwiGLU MLP.
// V2's group_limited_greedy (DeepSeek-V2 236B), attention biases and a moe_layer_freq other
// than 1 are refused by name. GGUF: llama.cpp's keys (attention.q_lora_rank / kv_lora_rank,
// key_length / value_length, or key_length_mla / value_length_mla in the MQA form its current
// converter writes, rope.dimension_count, the expert keys, expert_gating_func), the per-head
// kv_b as attn_kv_b, or split as attn_k_b (stored transposed) and attn_v_b.
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/rope_scaling.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

namespace L = limits;

// The latent sizes once read: the one latent head the cache keeps (the rotated key part, then
// kv_lora_rank), and the attention scale, qk_head_dim^-0.5 (the absorbed product equals the
// expanded heads' q.k).
void mla_shapes(ModelConfig& c, int64_t rope, double mscale_all_dim) {
  c.mla = true;
  c.num_kv_heads = 1;
  c.head_dim = rope + c.kv_lora_rank;
  c.rotary_dim = rope;
  double scale = 1.0 / std::sqrt(static_cast<double>(c.qk_nope_head_dim + rope));
  if (c.rope_scaling.type == "yarn" && mscale_all_dim != 0) {
    const double m = yarn_mscale(c.rope_scaling.factor, mscale_all_dim);
    scale *= m * m;
  }
  c.attention_multiplier = scale;
}

// The config classes' defaults where config.json leaves a key out.
struct Defaults {
  int64_t experts, top_k, width, shared, dense_lead, n_group, topk_group;
  double scale;
};
constexpr Defaults kV2{64, 6, 1407, 2, 0, 1, 1, 1.0};
constexpr Defaults kV3{256, 8, 2048, 1, 3, 8, 4, 2.5};
constexpr Defaults kGlmLite{64, 4, 1536, 1, 1, 1, 1, 1.8};

// Glm4MoeLiteConfig's mlp_layer_types ("dense" / "sparse" per layer) where given.
bool read_mlp_layer_types(ModelConfig& c, const nlohmann::json& j) {
  if (!j.contains("mlp_layer_types") || j["mlp_layer_types"].is_null()) return false;
  const auto& t = j["mlp_layer_types"];
  if (!t.is_array() || static_cast<int64_t>(t.size()) != c.num_layers)
    throw tok::JsonFieldError("mlp_layer_types must list num_hidden_layers entries");
  c.mlp_only_layers.clear();
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string v = t[i].is_string() ? t[i].get<std::string>() : t[i].dump();
    if (v == "dense")
      c.mlp_only_layers.push_back(i);
    else if (v != "sparse")
      throw tok::JsonFieldError("mlp_layer_types[" + std::to_string(i) + "] = '" + v +
                                "' (supported: dense, sparse)");
  }
  return true;
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  using tok::json_int_or;
  const bool glm_lite = c.architecture == "Glm4MoeLiteForCausalLM";
  const bool v3 = glm_lite || c.architecture == "DeepseekV3ForCausalLM";
  const Defaults& d = glm_lite ? kGlmLite : v3 ? kV3 : kV2;
  if (tok::json_bool_or(j, "attention_bias", false))
    throw tok::JsonFieldError(
        "attention_bias = true: DeepSeek's attention biases are not supported");
  c.q_lora_rank = j.contains("q_lora_rank") && !j["q_lora_rank"].is_null()
                      ? json_int_or(j, "q_lora_rank", 0, 1, L::kMaxHidden)
                      : 0;
  c.kv_lora_rank = json_int_or(j, "kv_lora_rank", 512, 1, L::kMaxHidden);
  c.qk_nope_head_dim = json_int_or(j, "qk_nope_head_dim", 128, 1, L::kMaxHeadDim);
  c.v_head_dim = json_int_or(j, "v_head_dim", 128, 1, L::kMaxHeadDim);
  const int64_t rope = json_int_or(j, "qk_rope_head_dim", 64, 2, L::kMaxHeadDim);
  if (rope % 2 != 0) throw tok::JsonFieldError("qk_rope_head_dim must be even");
  // V2's complex rotation pairs adjacent dims; V3 with rope_interleave (its default) too.
  c.rope_style = !v3 || tok::json_bool_or(j, "rope_interleave", true)
                     ? vt::cpu::RopeStyle::kInterleaved
                     : vt::cpu::RopeStyle::kNeox;
  double ms_all = 0;
  if (j.contains("rope_scaling") && j["rope_scaling"].is_object())
    ms_all = tok::json_float_or(j["rope_scaling"], "mscale_all_dim", 0, 0, 1e3);
  mla_shapes(c, rope, ms_all);
  // The MoE (DeepseekV2Config / DeepseekV3Config defaults where config.json leaves a key out).
  c.num_experts = json_int_or(j, "n_routed_experts", d.experts, 1, L::kMaxExperts);
  c.num_experts_per_tok = json_int_or(j, "num_experts_per_tok", d.top_k, 1, L::kMaxExperts);
  c.moe_intermediate_size =
      json_int_or(j, "moe_intermediate_size", d.width, 1, L::kMaxIntermediate);
  c.shared_expert_intermediate_size =
      json_int_or(j, "n_shared_experts", d.shared, 0, 64) * c.moe_intermediate_size;
  c.routed_scaling_factor = tok::json_float_or(j, "routed_scaling_factor", d.scale, 1e-6, 1e6);
  c.norm_topk_prob = tok::json_bool_or(j, "norm_topk_prob", v3);
  if (json_int_or(j, "moe_layer_freq", 1, 1, L::kMaxLayers) != 1)
    throw tok::JsonFieldError(
        "moe_layer_freq: only 1 (every layer past the dense ones) is supported");
  c.decoder_sparse_step = 1;
  if (!read_mlp_layer_types(c, j))
    set_dense_lead(c, json_int_or(j, "first_k_dense_replace", d.dense_lead, 0, L::kMaxLayers));
  if (v3) {
    c.router_sigmoid = c.router_score_bias = true;
    c.n_group = json_int_or(j, "n_group", d.n_group, 1, L::kMaxExperts);
    c.topk_group = json_int_or(j, "topk_group", d.topk_group, 1, L::kMaxExperts);
  } else {
    const std::string method = j.contains("topk_method") && j["topk_method"].is_string()
                                   ? j["topk_method"].get<std::string>()
                                   : "greedy";
    if (method != "greedy")
      throw tok::JsonFieldError("topk_method '" + method +
                                "': DeepSeek-V2's router is supported with greedy only");
  }
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  drop_gguf_nextn_layers(c, g, p);  // GLM-4.7-Flash's converter may export its MTP layer
  read_gguf_experts(c, g, p);
  c.shared_expert_intermediate_size =
      g.get_int_or(p + "expert_shared_count", 0) * c.moe_intermediate_size;
  c.norm_topk_prob = g.get_bool_or(p + "expert_weights_norm", false);
  // Without the key llama.cpp takes softmax (the first V2 / V2.5 GGUFs), but sigmoid for
  // GLM-4.7-Flash's shape (47 or 48 layers, 154880 ids).
  const bool glm_lite = (c.num_layers == 47 || c.num_layers == 48) && c.vocab_size == 154880;
  const int64_t gating = g.get_int_or(p + "expert_gating_func", glm_lite ? 2 : 1);
  if (gating == 2) {
    read_gguf_sigmoid_router(c, g, p);
  } else if (gating == 1 || gating == 0) {
    const double s = g.get_float_or(p + "expert_weights_scale", 1.0);
    c.routed_scaling_factor = s == 0 ? 1.0 : s;
  } else {
    throw LoadError(g.path(), p + "expert_gating_func = " + std::to_string(gating) +
                                  " (supported: 1 softmax, 2 sigmoid)");
  }
  c.decoder_sparse_step = 1;
  set_dense_lead(c, g.get_int_or(p + "leading_dense_block_count", 0));
  c.q_lora_rank = g.get_int_or(p + "attention.q_lora_rank", 0);
  c.kv_lora_rank = g.get_int(p + "attention.kv_lora_rank");
  const int64_t rope = g.get_int(p + "rope.dimension_count");
  // The MQA form (key_length = kv_lora_rank + rope) keeps the heads' sizes in the _mla keys.
  const bool mqa = g.has(p + "attention.key_length_mla");
  const int64_t kl = g.get_int(p + (mqa ? "attention.key_length_mla" : "attention.key_length"));
  c.v_head_dim = g.get_int(p + (mqa ? "attention.value_length_mla" : "attention.value_length"));
  if (rope < 2 || rope % 2 != 0 || kl <= rope || c.kv_lora_rank < 1 || c.q_lora_rank < 0 ||
      c.v_head_dim < 1 || c.v_head_dim > L::kMaxHeadDim || kl > L::kMaxHeadDim)
    throw LoadError(g.path(), "invalid config: " + p + "attention key / value lengths, " + p +
                                  "attention.kv_lora_rank or " + p +
                                  "rope.dimension_count out of range");
  c.qk_nope_head_dim = kl - rope;
  c.rope_style = vt::cpu::RopeStyle::kInterleaved;  // llama.cpp's deepseek2: rope NORM
  // llama.cpp: yarn_log_multiplier = 0.1 mscale_all_dim; kq_scale times mscale^2.
  mla_shapes(c, rope, g.get_float_or(p + "rope.scaling.yarn_log_multiplier", 0.0) / 0.1);
}

// A stacked [n, rows, cols] tensor (n 1: a [rows, cols] matrix) of any stored type as F32.
std::vector<float> stacked_f32(const WeightStore& s, const std::string& name, int64_t n,
                               int64_t rows, int64_t cols) {
  std::vector<float> out(static_cast<size_t>(n * rows * cols));
  for (int64_t i = 0; i < n; ++i) {
    const vt::cpu::WeightView w =
        n == 1 ? s.matrix(name, rows, cols) : s.matrix_slice(name, i, n, rows, cols);
    for (int64_t r = 0; r < rows; ++r)
      vt::cpu::dequantize_row(w.dtype, static_cast<const uint8_t*>(w.data) + r * w.row_stride,
                              out.data() + (i * rows + r) * cols, cols);
  }
  return out;
}

// The absorbed products need each head's k part of kv_b transposed, [heads][kv_lora_rank]
// [qk_nope] (q's nope part times it gives q in the latent space): the GGUFs of llama.cpp's
// current converter store exactly that (attn_k_b, next to attn_v_b, each head's v rows); for
// kv_b (Hugging Face folders, the earlier GGUF form) it is built here under the same name, in
// kv_b's type when that is BF16 or F16, else as F32.
void transpose_k_b(WeightStore& s, const ModelConfig& c) {
  const int64_t H = c.num_heads, NP = c.qk_nope_head_dim, VD = c.v_head_dim, KL = c.kv_lora_rank;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".self_attn.";
    if (s.has(p + "k_b_proj.weight") || !s.has(p + "kv_b_proj.weight")) continue;
    const std::string name = p + "kv_b_proj.weight";
    const vt::cpu::WeightView kv_b = s.matrix(name, H * (NP + VD), KL);
    // A 16-bit checkpoint's rows move as they are (the same values, half of F32's bytes for
    // every token to read); any other type is dequantized to F32.
    const bool half = kv_b.dtype == vt::DType::BF16 || kv_b.dtype == vt::DType::F16;
    const size_t esz = half ? 2 : sizeof(float);
    auto buf = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(H * KL * NP) * esz);
    auto source_row = [&](int64_t h, int64_t r) {
      return static_cast<const uint8_t*>(kv_b.data) + (h * (NP + VD) + r) * kv_b.row_stride;
    };
    if (half) {
      auto* out = reinterpret_cast<uint16_t*>(buf->data());
      for (int64_t h = 0; h < H; ++h)
        for (int64_t r = 0; r < NP; ++r) {
          const auto* row = reinterpret_cast<const uint16_t*>(source_row(h, r));
          for (int64_t k = 0; k < KL; ++k) out[(h * KL + k) * NP + r] = row[k];
        }
    } else {
      const std::vector<float> kv = stacked_f32(s, name, 1, H * (NP + VD), KL);
      auto* out = reinterpret_cast<float*>(buf->data());
      for (int64_t h = 0; h < H; ++h)
        for (int64_t r = 0; r < NP; ++r)
          for (int64_t k = 0; k < KL; ++k)
            out[(h * KL + k) * NP + r] = kv[(h * (NP + VD) + r) * KL + k];
    }
    TensorRef t;
    t.name = p + "k_b_proj.weight";
    t.dtype = half ? kv_b.dtype : vt::DType::F32;
    t.shape = {H, KL, NP};
    t.data = buf->data();
    t.n_bytes = buf->size();
    t.file = s.find(p + "kv_b_proj.weight")->file;
    t.stored_name = s.find(p + "kv_b_proj.weight")->stored_name + " (k rows, transposed)";
    s.add(std::move(t));
    s.keep_converted(std::move(buf));
  }
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t E = c.hidden_size, H = c.num_heads, QL = c.q_lora_rank, KL = c.kv_lora_rank;
  const int64_t qhd = c.qk_nope_head_dim + c.rope_dim();
  LayerWeights w;
  AttentionWeights& a = w.attn;
  a.norm = s.vector_f32(p + "input_layernorm.weight", E);
  if (QL > 0) {
    a.q_a = s.matrix(p + "self_attn.q_a_proj.weight", QL, E);
    a.q_a_norm = s.vector_f32(p + "self_attn.q_a_layernorm.weight", QL);
    a.q_b = s.matrix(p + "self_attn.q_b_proj.weight", H * qhd, QL);
  } else {
    a.q = s.matrix(p + "self_attn.q_proj.weight", H * qhd, E);
  }
  a.kv_a = s.matrix(p + "self_attn.kv_a_proj_with_mqa.weight", KL + c.rope_dim(), E);
  a.kv_a_norm = s.vector_f32(p + "self_attn.kv_a_layernorm.weight", KL);
  const int64_t NP = c.qk_nope_head_dim, VD = c.v_head_dim;
  const bool split = s.has(p + "self_attn.v_b_proj.weight");  // GGUF's attn_v_b
  const vt::cpu::WeightView kv_b =
      split ? vt::cpu::WeightView{} : s.matrix(p + "self_attn.kv_b_proj.weight", H * (NP + VD), KL);
  for (int64_t h = 0; h < H; ++h) {
    a.k_b.push_back(s.matrix_slice(p + "self_attn.k_b_proj.weight", h, H, KL, NP));
    a.v_b.push_back(split ? s.matrix_slice(p + "self_attn.v_b_proj.weight", h, H, VD, KL)
                          : rows_of(kv_b, h * (NP + VD) + NP, VD));
  }
  a.o = s.matrix(p + "self_attn.o_proj.weight", E, H * VD);
  if (c.layer_is_moe(i)) {
    w.moe = true;
    w.experts = load_moe(s, c, i);
    if (c.router_score_bias)
      w.experts.router_score_bias =
          s.vector_f32(p + "mlp.gate.e_score_correction_bias", c.num_experts);
    if (c.shared_expert_intermediate_size > 0)
      load_shared_expert(s, c, p + "mlp.shared_experts.", w.experts);
  } else {
    w.mlp = load_mlp(s, c, i);
  }
  return w;
}

ModelFamily family(std::vector<std::string> hf) {
  ModelFamily f;
  f.hf_architectures = std::move(hf);
  f.moe = true;
  f.hf_config = hf_config;
  f.hf_weights = transpose_k_b;
  f.gguf_weights = transpose_k_b;
  f.load_layer = load_layer;
  return f;
}

}  // namespace

const ModelFamily& deepseek_v2_family() {
  static const ModelFamily f = [] {
    ModelFamily f = family({"DeepseekV2ForCausalLM"});
    f.gguf_architecture = "deepseek2";
    f.gguf_config = gguf_config;
    f.gguf_layer_tensors = {{"attn_q_a.weight", "self_attn.q_a_proj.weight"},
                            {"attn_q_a_norm.weight", "self_attn.q_a_layernorm.weight"},
                            {"attn_q_b.weight", "self_attn.q_b_proj.weight"},
                            {"attn_kv_a_mqa.weight", "self_attn.kv_a_proj_with_mqa.weight"},
                            {"attn_kv_a_norm.weight", "self_attn.kv_a_layernorm.weight"},
                            {"attn_kv_b.weight", "self_attn.kv_b_proj.weight"},
                            {"attn_k_b.weight", "self_attn.k_b_proj.weight"},
                            {"attn_v_b.weight", "self_attn.v_b_proj.weight"}};
    return f;
  }();
  return f;
}

const ModelFamily& deepseek_v3_family() {
  static const ModelFamily f = family({"DeepseekV3ForCausalLM", "Glm4MoeLiteForCausalLM"});
  return f;
}

}  // namespace vllm::model
