// GPT-OSS (GptOssForCausalLM, GGUF `gpt-oss`; OpenAI's gpt-oss-20b and gpt-oss-120b): the
// Llama block with biases on q/k/v/o, a learned sink logit per query head in every softmax
// (AttnBatch::sinks), a 128-token sliding window on every other layer (layer_types; llama.cpp's
// period 2), YaRN rotary, and a sparse MoE block on every layer: a router with a bias whose softmax
// runs over its top-k logits, experts with biases on all three projections and a clamped SwiGLU,
// (clamp(up, -7, 7) + 1) * g * sigmoid(1.702 g), g = min(gate, 7).
//
// The experts come in three forms, all read as the stacked mlp.experts.{gate,up,down}_proj
// tensors the shared MoE loader slices:
//  * the released checkpoints (quantization_config mxfp4): mlp.experts.gate_up_proj_blocks /
//    _scales (uint8 [X, 2F, E/32, 16] and [X, 2F, E/32]; rows 2f gate, 2f + 1 up; each byte's
//    low nibble the even element) and down_proj_blocks / _scales, rewritten here into GGML's
//    MXFP4 blocks (the exponent byte, then element j in the low nibble of byte j and element
//    j + 16 in its high nibble, the same e2m1 codes): one copy, as llama.cpp's converter makes;
//  * an unquantized export (BF16 / F16 / F32): mlp.experts.gate_up_proj [X, E, 2F] and
//    down_proj [X, F, E], input dimension first, transposed here;
//  * a GGUF: ffn_{gate,up,down}_exps (MXFP4 or any other type), already split and transposed.
//
// YaRN's correction range: config.json's `truncate: false` (OpenAI's reference and
// transformers keep it unrounded) is followed; a GGUF has no key for it and is read as
// llama.cpp reads every YaRN file, rounded outward, so the same file gives llama.cpp's tokens
// (on the tiny test model the two readings move logits by up to 0.64; tests/golden/gpt_oss).
#include <algorithm>
#include <cstring>
#include <memory>

#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"
#include "vt/dtype.h"

namespace vllm::model {

namespace {

using nlohmann::json;

// transformers' GptOssConfig defaults for what config.json leaves out: even layers slide, and
// YaRN x32 over 4096 positions with the correction range unrounded.
json hf_config_json(const json& j) {
  json out = j;
  if (!j.contains("layer_types") || j["layer_types"].is_null()) {
    const int64_t n = tok::json_int_or(j, "num_hidden_layers", 0, 0, limits::kMaxLayers);
    json types = json::array();
    for (int64_t i = 0; i < n; ++i)
      types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
    out["layer_types"] = types;
  }
  auto absent = [&](const char* k) { return !j.contains(k) || j[k].is_null(); };
  if (absent("rope_scaling") && absent("rope_parameters"))
    out["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", 32.0},
                           {"beta_fast", 32.0},   {"beta_slow", 1.0},
                           {"truncate", false},   {"original_max_position_embeddings", 4096}};
  return out;
}

void set_flags(ModelConfig& c) {
  c.attention_bias = true;
  c.o_bias = true;
  c.attention_sinks = true;
  c.moe_bias = true;
  c.topk_before_softmax = true;
  c.decoder_sparse_step = 1;
}

void hf_config(ModelConfig& c, const json& j) {
  set_flags(c);
  c.moe_intermediate_size = c.intermediate_size;  // GptOssConfig: the experts' width
  // The reference's constants, and the config fields transformers reads them from.
  c.swiglu_alpha = tok::json_float_or(j, "swiglu_alpha", 1.702, 0, 1e3);
  c.swiglu_limit = tok::json_float_or(j, "swiglu_limit", 7.0, 1e-6, 1e6);
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  read_gguf_experts(c, g, p);
  set_flags(c);
  c.swiglu_alpha = 1.702;  // llama.cpp's LLM_FFN_SWIGLU_OAI_MOE constants
  c.swiglu_limit = 7.0;
  // llama.cpp: the window on every layer but each 2nd (load_swa_pattern(ml, 2)).
  read_gguf_sliding_window(c, g, p, 0, 2);
}

// A new tensor of the store, in memory the store keeps.
void add_tensor(WeightStore& s, const TensorRef& from, const std::string& name, vt::DType dtype,
                std::vector<int64_t> shape, std::shared_ptr<std::vector<uint8_t>> bytes) {
  TensorRef t;
  t.name = name;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data = bytes->data();
  t.n_bytes = bytes->size();
  t.file = from.file;
  t.stored_name = from.stored_name.empty() ? from.name : from.stored_name;
  s.keep_converted(std::move(bytes));  // freed once packed (WeightStore::release_converted)
  s.add(std::move(t));
}

// An F32 / BF16 / F16 tensor of exactly `shape`, or a LoadError naming it.
const TensorRef& float_tensor(const WeightStore& s, const std::string& name,
                              const std::vector<int64_t>& shape) {
  const TensorRef& t = s.get(name, shape);
  if (t.dtype != vt::DType::F32 && t.dtype != vt::DType::BF16 && t.dtype != vt::DType::F16)
    throw LoadError(t.file, "tensor " + t.label() + " must be F32, BF16 or F16");
  return t;
}

// A uint8 tensor of exactly `shape`, or a LoadError naming it.
const TensorRef& u8_tensor(const WeightStore& s, const std::string& name,
                           const std::vector<int64_t>& shape) {
  const TensorRef* t = s.find(name);
  if (!t) throw LoadError(s.describe_source(), "missing tensor '" + name + "'");
  if (t->unsupported_type != "U8")
    throw LoadError(t->file,
                    "tensor " + t->label() + " must be U8 (MXFP4 " +
                        (name.find("_scales") != std::string::npos ? "exponents" : "codes") +
                        "), not " +
                        (t->unsupported_type.empty() ? std::string(vt::dtype_info(t->dtype).name)
                                                     : t->unsupported_type));
  if (t->shape != shape) {
    TensorRef want;
    want.shape = shape;
    throw LoadError(t->file, "tensor " + t->label() + " has shape " + t->shape_str() +
                                 ", expected " + want.shape_str());
  }
  return *t;
}

// Rows [r0, r0 + step * n) by `step` of each expert of a checkpoint's MXFP4 pair (blocks
// [X, R, B, 16], exponents [X, R, B]) as GGML MXFP4 rows [X, n, 32 B].
std::shared_ptr<std::vector<uint8_t>> mxfp4_rows(const TensorRef& blocks, const TensorRef& scales,
                                                 int64_t X, int64_t R, int64_t B, int64_t r0,
                                                 int64_t step, int64_t n) {
  auto out = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(X * n * B * 17));
  const auto* q = static_cast<const uint8_t*>(blocks.data);
  const auto* e = static_cast<const uint8_t*>(scales.data);
  uint8_t* o = out->data();
  for (int64_t x = 0; x < X; ++x)
    for (int64_t i = 0; i < n; ++i) {
      const int64_t r = x * R + r0 + i * step;
      for (int64_t b = 0; b < B; ++b, o += 17) {
        const uint8_t* src = q + (r * B + b) * 16;  // element 2k low nibble, 2k + 1 high
        auto code = [src](int el) { return (src[el >> 1] >> (4 * (el & 1))) & 0xF; };
        o[0] = e[r * B + b];
        for (int j = 0; j < 16; ++j) o[1 + j] = static_cast<uint8_t>(code(j) | code(j + 16) << 4);
      }
    }
  return out;
}

// out[x][i][k] = in[x][k][r0 + step * i] for an unquantized [X, K, N] tensor of esize-byte
// elements: rows of the transposed matrix.
std::shared_ptr<std::vector<uint8_t>> transposed(const TensorRef& t, int64_t X, int64_t K,
                                                 int64_t N, int64_t r0, int64_t step, int64_t n,
                                                 size_t esize) {
  auto out = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(X * n * K) * esize);
  const auto* in = static_cast<const uint8_t*>(t.data);
  uint8_t* o = out->data();
  for (int64_t x = 0; x < X; ++x)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < K; ++k, o += esize)
        std::memcpy(o, in + ((x * K + k) * N + r0 + step * i) * esize, esize);
  return out;
}

// Row `x` of a stacked [X, n] bias, as f32.
std::vector<float> bias_row(const WeightStore& s, const std::string& name, int64_t x, int64_t X,
                            int64_t n) {
  const TensorRef& t = float_tensor(s, name, {X, n});
  std::vector<float> out(static_cast<size_t>(n));
  vt::cpu::dequantize_row(
      t.dtype, static_cast<const uint8_t*>(t.data) + x * vt::row_bytes(t.dtype, n), out.data(), n);
  return out;
}

// Entries [r0, r0 + step * n) by `step` of each row of a [X, N] bias, as f32 [X, n].
std::shared_ptr<std::vector<uint8_t>> bias_columns(const WeightStore& s, const std::string& name,
                                                   int64_t X, int64_t N, int64_t r0, int64_t step,
                                                   int64_t n) {
  auto out = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(X * n) * sizeof(float));
  float* o = reinterpret_cast<float*>(out->data());
  for (int64_t x = 0; x < X; ++x) {
    const std::vector<float> row = bias_row(s, name, x, X, N);
    for (int64_t i = 0; i < n; ++i) *o++ = row[static_cast<size_t>(r0 + step * i)];
  }
  return out;
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  const int64_t X = c.num_experts, E = c.hidden_size, F = c.moe_intermediate_size;
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string mlp = "model.layers." + std::to_string(i) + ".mlp.";
    s.rename(mlp + "router.weight", mlp + "gate.weight");  // the shared router name
    s.rename(mlp + "router.bias", mlp + "gate.bias");
    const std::string p = mlp + "experts.";
    const std::string gate = p + "gate_proj.", up = p + "up_proj.", down = p + "down_proj.";
    if (s.has(p + "gate_up_proj_blocks")) {
      if (E % 32 != 0 || F % 32 != 0)
        throw LoadError(s.describe_source(),
                        "MXFP4 experts need hidden_size and intermediate_size "
                        "to be multiples of 32");
      const TensorRef& gb = u8_tensor(s, p + "gate_up_proj_blocks", {X, 2 * F, E / 32, 16});
      const TensorRef& gs = u8_tensor(s, p + "gate_up_proj_scales", {X, 2 * F, E / 32});
      const TensorRef& db = u8_tensor(s, p + "down_proj_blocks", {X, E, F / 32, 16});
      const TensorRef& ds = u8_tensor(s, p + "down_proj_scales", {X, E, F / 32});
      add_tensor(s, gb, gate + "weight", vt::DType::MXFP4, {X, F, E},
                 mxfp4_rows(gb, gs, X, 2 * F, E / 32, 0, 2, F));
      add_tensor(s, gb, up + "weight", vt::DType::MXFP4, {X, F, E},
                 mxfp4_rows(gb, gs, X, 2 * F, E / 32, 1, 2, F));
      add_tensor(s, db, down + "weight", vt::DType::MXFP4, {X, E, F},
                 mxfp4_rows(db, ds, X, E, F / 32, 0, 1, E));
      for (const char* n :
           {"gate_up_proj_blocks", "gate_up_proj_scales", "down_proj_blocks", "down_proj_scales"})
        s.take(p + n);
    } else if (s.has(p + "gate_up_proj")) {
      const TensorRef& gu = float_tensor(s, p + "gate_up_proj", {X, E, 2 * F});
      const TensorRef& dp = float_tensor(s, p + "down_proj", {X, F, E});
      const size_t eg = vt::row_bytes(gu.dtype, 1), ed = vt::row_bytes(dp.dtype, 1);
      add_tensor(s, gu, gate + "weight", gu.dtype, {X, F, E},
                 transposed(gu, X, E, 2 * F, 0, 2, F, eg));
      add_tensor(s, gu, up + "weight", gu.dtype, {X, F, E},
                 transposed(gu, X, E, 2 * F, 1, 2, F, eg));
      add_tensor(s, dp, down + "weight", dp.dtype, {X, E, F}, transposed(dp, X, F, E, 0, 1, E, ed));
      s.take(p + "gate_up_proj");
      s.take(p + "down_proj");
    } else {
      continue;  // the loader names the missing mlp.experts.gate_proj.weight
    }
    const TensorRef& gub = s.get(p + "gate_up_proj_bias", {X, 2 * F});
    add_tensor(s, gub, gate + "bias", vt::DType::F32, {X, F},
               bias_columns(s, p + "gate_up_proj_bias", X, 2 * F, 0, 2, F));
    add_tensor(s, gub, up + "bias", vt::DType::F32, {X, F},
               bias_columns(s, p + "gate_up_proj_bias", X, 2 * F, 1, 2, F));
    s.take(p + "gate_up_proj_bias");
    s.rename(p + "down_proj_bias", down + "bias");
  }
}

LayerWeights load_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = "model.layers." + std::to_string(i) + ".";
  const int64_t E = c.hidden_size, F = c.moe_intermediate_size, X = c.num_experts;
  LayerWeights w;
  w.attn = load_attention(s, c, i);  // with its o_proj bias (ModelConfig::o_bias)
  w.attn.sinks = s.vector_f32(p + "self_attn.sinks", c.num_heads);
  w.moe = true;
  MoeWeights& m = w.experts = load_moe(s, c, i);  // the stacked experts every form ends as
  m.router_bias = s.vector_f32(p + "mlp.gate.bias", X);
  const std::string ep = p + "mlp.experts.";
  for (int64_t e = 0; e < X; ++e) {
    m.gate_bias.push_back(bias_row(s, ep + "gate_proj.bias", e, X, F));
    m.up_bias.push_back(bias_row(s, ep + "up_proj.bias", e, X, F));
    m.down_bias.push_back(bias_row(s, ep + "down_proj.bias", e, X, E));
  }
  return w;
}

}  // namespace

const ModelFamily& gpt_oss_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"GptOssForCausalLM"};
    f.gguf_architecture = "gpt-oss";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kEveryLayer;  // on layer_types' entries
    f.qkv_bias = true;
    f.moe = true;
    f.hf_quant_methods = {"mxfp4"};
    f.gguf_layer_tensors = {{"attn_sinks.weight", "self_attn.sinks"},
                            {"post_attention_norm.weight", "post_attention_layernorm.weight"},
                            {"ffn_gate_inp.bias", "mlp.gate.bias"},
                            {"ffn_gate_exps.bias", "mlp.experts.gate_proj.bias"},
                            {"ffn_up_exps.bias", "mlp.experts.up_proj.bias"},
                            {"ffn_down_exps.bias", "mlp.experts.down_proj.bias"}};
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
