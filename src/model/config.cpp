// Reading ModelConfig from config.json / generation_config.json and from GGUF metadata.
#include "model/config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/mapped_file.h"
#include "model/rope_scaling.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace fs = std::filesystem;
using nlohmann::json;

bool ModelConfig::layer_is_moe(int64_t layer) const {
  if (num_experts == 0) return false;
  if (std::find(mlp_only_layers.begin(), mlp_only_layers.end(), layer) != mlp_only_layers.end())
    return false;
  return decoder_sparse_step > 0 && (layer + 1) % decoder_sparse_step == 0;
}

void set_sliding_window_pattern(ModelConfig& c, int64_t window, int64_t period) {
  c.sliding_window.assign(static_cast<size_t>(c.num_layers), static_cast<int32_t>(window));
  if (period > 0)
    for (int64_t i = period - 1; i < c.num_layers; i += period)
      c.sliding_window[static_cast<size_t>(i)] = 0;
}

void rotate_only_sliding_layers(ModelConfig& c) {
  c.no_rope.assign(static_cast<size_t>(c.num_layers), false);
  for (int64_t i = 0; i < c.num_layers; ++i) c.no_rope[i] = c.layer_window(i) == 0;
}

int64_t read_gguf_sliding_window(ModelConfig& c, const GgufFile& g, const std::string& p,
                                 int64_t default_window, int64_t default_period) {
  const int64_t window = g.get_int_or(p + "attention.sliding_window", default_window);
  if (window <= 0) return 0;
  if (window > limits::kMaxContext)
    throw LoadError(g.path(), p + "attention.sliding_window = " + std::to_string(window) +
                                  " (must be at most " + std::to_string(limits::kMaxContext) + ")");
  const std::string pat = p + "attention.sliding_window_pattern";
  const GgufValue* v = g.find(pat);
  if (v && v->kind == GgufValue::Kind::kIntArray) {
    if (static_cast<int64_t>(v->ints.size()) != c.num_layers)
      throw LoadError(g.path(), pat + " has " + std::to_string(v->ints.size()) + " entries for " +
                                    std::to_string(c.num_layers) + " layers");
    c.sliding_window.assign(static_cast<size_t>(c.num_layers), 0);
    for (size_t i = 0; i < v->ints.size(); ++i)
      if (v->ints[i] != 0) c.sliding_window[i] = static_cast<int32_t>(window);
    return window;
  }
  const int64_t period = g.get_int_or(pat, default_period);  // 0: every layer
  if (period < 0 || period > limits::kMaxLayers)
    throw LoadError(g.path(), pat + " = " + std::to_string(period) + " (must be in [0, " +
                                  std::to_string(limits::kMaxLayers) + "])");
  set_sliding_window_pattern(c, window, period);
  return window;
}

int32_t ModelConfig::max_sliding_window() const {
  int32_t w = 0;
  for (int32_t x : sliding_window) w = std::max(w, x);
  return w;
}

namespace {

// config.json and generation_config.json are a few kB; this only stops a hostile folder from
// making the loader read without end.
constexpr size_t kMaxConfigBytes = 16 << 20;

}  // namespace

namespace {

json parse_json(const std::string& text, const std::string& source) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    throw LoadError(source, std::string("not valid JSON: ") + e.what());
  }
}

// eos_token_id: an integer or a list of them (null and non-numbers are skipped, as before).
void add_eos(ModelConfig& c, const json& v) {
  auto push = [&](const json& x) {
    if (!x.is_number()) return;
    const int64_t id = tok::json_int(x, "eos_token_id", 0, limits::kMaxVocab - 1);
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), id) == c.eos_token_ids.end())
      c.eos_token_ids.push_back(id);
  };
  if (v.is_array()) {
    for (const auto& x : v) push(x);
  } else {
    push(v);
  }
}

// head_dim when the config does not give it: hidden_size must then split evenly over the heads.
int64_t derived_head_dim(const ModelConfig& c) {
  if (c.num_heads <= 0 || c.hidden_size <= 0) return 0;  // validate() names the bad count
  if (c.hidden_size % c.num_heads != 0)
    throw LoadError(c.source, "invalid config: " + c.field_name("hidden_size") + " = " +
                                  std::to_string(c.hidden_size) + " is not a multiple of " +
                                  c.field_name("num_attention_heads") + " = " +
                                  std::to_string(c.num_heads) + " (and " +
                                  c.field_name("head_dim") + " is not given)");
  return c.hidden_size / c.num_heads;
}

// config.json's sliding window under the family's rule (ModelFamily::hf_sliding_window).
void read_hf_sliding_window(ModelConfig& c, const json& j, const ModelFamily& f) {
  using Rule = ModelFamily::SlidingWindow;
  const Rule rule = f.hf_sliding_window;
  if (rule == Rule::kNone) return;
  if (rule == Rule::kQwen && !tok::json_bool_or(j, "use_sliding_window", false)) return;
  // Without the key, Hugging Face's Qwen, Mistral and Gemma config classes default to 4096.
  const int64_t deflt =
      rule != Rule::kEveryLayer || c.architecture == "MistralForCausalLM" ? 4096 : 0;
  if (j.contains("sliding_window") && j["sliding_window"].is_null()) return;
  const int64_t w = tok::json_int_or(j, "sliding_window", deflt, 1, limits::kMaxContext);
  if (w == 0) return;
  std::vector<int32_t> layers(static_cast<size_t>(c.num_layers), static_cast<int32_t>(w));
  if (rule == Rule::kPattern) {
    set_sliding_window_pattern(c, w,
                               tok::json_int_or(j, "sliding_window_pattern",
                                                f.sliding_window_period, 0, limits::kMaxLayers));
    layers = c.sliding_window;
  }
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    const json& t = j["layer_types"];
    if (!t.is_array() || static_cast<int64_t>(t.size()) != c.num_layers)
      throw LoadError(c.source, "invalid config: layer_types must list one entry per layer (" +
                                    std::to_string(c.num_layers) + ")");
    for (size_t i = 0; i < t.size(); ++i) {
      const std::string kind = t[i].is_string() ? t[i].get<std::string>() : t[i].dump();
      if (kind == "full_attention")
        layers[i] = 0;
      else if (kind == "sliding_attention")
        layers[i] = static_cast<int32_t>(w);
      else
        throw LoadError(c.source, "invalid config: layer_types[" + std::to_string(i) + "] = " +
                                      kind + " (supported: full_attention, sliding_attention)");
    }
  } else if (rule == Rule::kQwen) {
    const int64_t from = tok::json_int_or(j, "max_window_layers", 28, 0, limits::kMaxLayers);
    for (int64_t i = 0; i < std::min(from, c.num_layers); ++i) layers[i] = 0;
  }
  c.sliding_window.clear();
  for (int32_t x : layers)
    if (x > 0) {
      c.sliding_window = std::move(layers);
      return;
    }
}

// The flags a family fixes whatever the file says.
void apply_family_flags(ModelConfig& c, const ModelFamily& f) {
  if (f.qkv_bias) c.attention_bias = true;
  c.ungated_mlp = f.ungated_mlp;
  c.qk_norm = f.qk_norm;
  if (!f.moe) c.num_experts = 0;
}

// A quantized checkpoint (quantization_config) loads only where the family reads that method's
// tensors; any other (AWQ, GPTQ, FP8, bitsandbytes, ...) is refused by name here rather than
// at its first packed tensor.
// quantization_config fp8 (block-quantized e4m3 weights with dynamic activation scales, the form
// of Qwen3-*-FP8, DeepSeek-V3, MiniMax-M2): any family, dequantized at load.
void read_fp8_quantization(ModelConfig& c, const json& q) {
  const std::string fmt =
      q.contains("fmt") && q["fmt"].is_string() ? q["fmt"].get<std::string>() : std::string("e4m3");
  if (fmt != "e4m3" && fmt != "float8_e4m3fn")
    throw LoadError(c.source, "quantization_config.fmt = '" + fmt +
                                  "' is not supported (FP8 weights in e4m3 only)");
  if (q.contains("activation_scheme") && q["activation_scheme"] != "dynamic")
    throw LoadError(c.source, "quantization_config.activation_scheme = " +
                                  tok::json_excerpt(q["activation_scheme"]) +
                                  " is not supported (dynamic only: static input scales are not "
                                  "applied)");
  if (!q.contains("weight_block_size") || !q["weight_block_size"].is_array() ||
      q["weight_block_size"].size() != 2)
    throw LoadError(c.source,
                    "quantization_config fp8 without a two-number weight_block_size is not "
                    "supported (per-tensor FP8 scales; block-quantized checkpoints load)");
  try {
    c.fp8_block_rows = tok::json_int(q["weight_block_size"][0],
                                     "quantization_config.weight_block_size[0]", 1, 1 << 16);
    c.fp8_block_cols = tok::json_int(q["weight_block_size"][1],
                                     "quantization_config.weight_block_size[1]", 1, 1 << 16);
  } catch (const tok::JsonFieldError& e) {
    throw LoadError(c.source, std::string("invalid config: ") + e.what());
  }
}

void check_quantization(ModelConfig& c, const json& j, const ModelFamily& f) {
  if (!j.contains("quantization_config") || j["quantization_config"].is_null()) return;
  const json& q = j["quantization_config"];
  if (!q.is_object() || !q.contains("quant_method") || !q["quant_method"].is_string())
    throw LoadError(c.source, "quantization_config = " + tok::json_excerpt(q) +
                                  " has no quant_method string (a quantized checkpoint this "
                                  "loader cannot read)");
  const std::string method = q["quant_method"].get<std::string>();
  if (std::find(f.hf_quant_methods.begin(), f.hf_quant_methods.end(), method) !=
      f.hf_quant_methods.end())
    return;
  if (method == "fp8") return read_fp8_quantization(c, q);
  std::string supported = "fp8";
  for (const auto& m : f.hf_quant_methods) supported += (supported.empty() ? "" : ", ") + m;
  throw LoadError(c.source, "quantization_config.quant_method = '" + method +
                                "' is not supported for " + c.architecture + " (supported: " +
                                supported + "; or an unquantized folder or a GGUF" + ")");
}

void read_hf_fields(ModelConfig& c, const json& j) {
  using tok::json_bool_or;
  using tok::json_float_or;
  using tok::json_int;
  using tok::json_int_or;
  namespace L = limits;
  if (!j.is_object()) throw LoadError(c.source, "config is not a JSON object");
  if (!j.contains("architectures") || !j["architectures"].is_array() || j["architectures"].empty())
    throw LoadError(c.source, "config has no 'architectures' list");
  c.architecture = j["architectures"][0].get<std::string>();
  for (const char* k : {"vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads"})
    if (!j.contains(k)) throw LoadError(c.source, std::string("config has no '") + k + "'");
  c.vocab_size = json_int(j.at("vocab_size"), "vocab_size", 1, L::kMaxVocab);
  c.hidden_size = json_int(j.at("hidden_size"), "hidden_size", 1, L::kMaxHidden);
  c.intermediate_size = json_int_or(j, "intermediate_size", 0, 0, L::kMaxIntermediate);
  c.num_layers = json_int(j.at("num_hidden_layers"), "num_hidden_layers", 1, L::kMaxLayers);
  c.num_heads = json_int(j.at("num_attention_heads"), "num_attention_heads", 1, L::kMaxHeads);
  c.num_kv_heads = json_int_or(j, "num_key_value_heads", c.num_heads, 1, L::kMaxHeads);
  c.head_dim = json_int_or(j, "head_dim", -1, 2, L::kMaxHeadDim);
  if (c.head_dim == -1) c.head_dim = derived_head_dim(c);
  // transformers: int(head_dim * partial_rotary_factor) dims rotate (Phi-4-mini 0.75).
  const double partial = json_float_or(j, "partial_rotary_factor", 1.0, 0, 1);
  if (!(partial > 0))
    throw tok::JsonFieldError("partial_rotary_factor = " + j["partial_rotary_factor"].dump() +
                              " (must be in (0, 1])");
  if (partial < 1) c.rotary_dim = static_cast<int64_t>(static_cast<double>(c.head_dim) * partial);
  c.rms_norm_eps = json_float_or(j, "rms_norm_eps", 1e-6, 0, 1);
  c.rope_theta = json_float_or(j, "rope_theta", 10000.0, 0, L::kMaxRopeTheta);
  c.max_position_embeddings = json_int_or(j, "max_position_embeddings", 2048, 1, L::kMaxContext);
  c.tie_word_embeddings = json_bool_or(j, "tie_word_embeddings", false);
  c.attention_bias = json_bool_or(j, "attention_bias", false);
  // The MLP activation (Gemma names it hidden_activation). Another one would silently compute
  // a different model, so it is refused by name.
  for (const char* key : {"hidden_activation", "hidden_act"}) {
    if (!j.contains(key) || j[key].is_null()) continue;
    const std::string act = j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
    if (act == "silu" || act == "swish")
      c.hidden_act = Activation::kSilu;
    else if (act == "gelu_pytorch_tanh" || act == "gelu_tanh" || act == "gelu_new")
      c.hidden_act = Activation::kGeluTanh;
    else if (act == "relu2")
      c.hidden_act = Activation::kRelu2;
    else
      throw LoadError(c.source, std::string("unsupported ") + key + " '" + act +
                                    "' (supported: silu, gelu_pytorch_tanh, gelu_new, relu2)");
    break;
  }
  read_hf_rope_scaling(c, j);
  // transformers 5 saves Qwen3-MoE's num_experts as num_local_experts (Mixtral's name).
  c.num_experts =
      json_int_or(j, "num_experts", json_int_or(j, "num_local_experts", 0, 0, L::kMaxExperts), 0,
                  L::kMaxExperts);
  c.num_experts_per_tok = json_int_or(j, "num_experts_per_tok", 0, 0, L::kMaxExperts);
  c.moe_intermediate_size = json_int_or(j, "moe_intermediate_size", 0, 0, L::kMaxIntermediate);
  c.decoder_sparse_step = json_int_or(j, "decoder_sparse_step", 1, 1, L::kMaxLayers);
  if (j.contains("mlp_only_layers") && j["mlp_only_layers"].is_array())
    for (const auto& l : j["mlp_only_layers"])
      c.mlp_only_layers.push_back(json_int(l, "mlp_only_layers", 0, L::kMaxLayers - 1));
  c.norm_topk_prob = json_bool_or(j, "norm_topk_prob", false);
  if (j.contains("bos_token_id") && j["bos_token_id"].is_number())
    c.bos_token_id = json_int(j["bos_token_id"], "bos_token_id", 0, L::kMaxVocab - 1);
  if (j.contains("eos_token_id")) add_eos(c, j["eos_token_id"]);
}

}  // namespace

ModelConfig config_from_hf_json(const std::string& config_json, const std::string& source,
                                const std::string& generation_config_json,
                                const std::string& generation_source) {
  ModelConfig c;
  c.source = source;
  json j = parse_json(config_json, source);
  try {
    apply_rope_parameters(j);
    if (j.is_object() && j.contains("architectures") && j["architectures"].is_array() &&
        !j["architectures"].empty() && j["architectures"][0].is_string())
      if (const ModelFamily* f = family_for_hf(j["architectures"][0].get<std::string>()))
        if (f->hf_config_json) j = f->hf_config_json(j);
    read_hf_fields(c, j);
  } catch (const tok::JsonFieldError& e) {
    throw LoadError(c.source, std::string("invalid config: ") + e.what());
  } catch (const json::exception& e) {
    throw LoadError(c.source, std::string("missing or mistyped field: ") + e.what());
  }
  if (const ModelFamily* f = family_for_hf(c.architecture)) {
    apply_family_flags(c, *f);
    check_quantization(c, j, *f);
    try {
      read_hf_sliding_window(c, j, *f);
    } catch (const tok::JsonFieldError& e) {
      throw LoadError(c.source, std::string("invalid config: ") + e.what());
    }
    if (f->hf_config) {
      try {
        f->hf_config(c, j);
      } catch (const tok::JsonFieldError& e) {
        throw LoadError(c.source, std::string("invalid config: ") + e.what());
      } catch (const json::exception& e) {
        throw LoadError(c.source, std::string("missing or mistyped field: ") + e.what());
      }
    }
    if (c.hidden_act == Activation::kRelu2 && !f->ungated_mlp)
      throw LoadError(c.source,
                      "hidden_act relu2 is supported for ArceeForCausalLM's ungated MLP "
                      "only, not for " +
                          c.architecture + "'s gated one");
  } else {
    c.num_experts = 0;  // the unknown architecture is reported by the model loader
  }
  if (!generation_config_json.empty()) {
    const std::string& gs = generation_source.empty() ? source : generation_source;
    const json g = parse_json(generation_config_json, gs);
    try {
      if (!g.is_object()) throw LoadError(gs, "generation config is not a JSON object");
      if (g.contains("eos_token_id")) add_eos(c, g["eos_token_id"]);
      if (c.bos_token_id < 0 && g.contains("bos_token_id") && g["bos_token_id"].is_number())
        c.bos_token_id = tok::json_int(g["bos_token_id"], "bos_token_id", 0, limits::kMaxVocab - 1);
    } catch (const tok::JsonFieldError& e) {
      throw LoadError(gs, std::string("invalid generation config: ") + e.what());
    }
  }
  c.validate();
  return c;
}

ModelConfig config_from_hf_dir(const std::string& dir, const std::string& overrides) {
  const fs::path cfg_path = fs::path(dir) / "config.json";
  const fs::path gen = fs::path(dir) / "generation_config.json";
  const bool has_gen = fs::exists(gen);
  std::string text = read_text_file(cfg_path.string(), kMaxConfigBytes);
  if (!overrides.empty()) {
    json o;
    try {
      o = json::parse(overrides);
    } catch (const json::exception& e) {
      throw LoadError("--hf-overrides", std::string("malformed JSON: ") + e.what());
    }
    if (!o.is_object()) throw LoadError("--hf-overrides", "must be a JSON object");
    json j = parse_json(text, cfg_path.string());
    if (!j.is_object()) throw LoadError(cfg_path.string(), "config is not a JSON object");
    for (const auto& [k, v] : o.items()) j[k] = v;
    text = j.dump();
  }
  return config_from_hf_json(text, cfg_path.string(),
                             has_gen ? read_text_file(gen.string(), kMaxConfigBytes) : "",
                             gen.string());
}

void read_gguf_experts(ModelConfig& c, const GgufFile& g, const std::string& p) {
  c.num_experts = g.get_int(p + "expert_count");
  c.num_experts_per_tok = g.get_int(p + "expert_used_count");
  c.moe_intermediate_size = g.get_int_or(p + "expert_feed_forward_length", c.intermediate_size);
}

void read_gguf_sigmoid_router(ModelConfig& c, const GgufFile& g, const std::string& p) {
  // llama_expert_gating_func_type: 1 softmax, 2 sigmoid, 3 softmax over the chosen weights.
  const int64_t gating = g.get_int_or(p + "expert_gating_func", 2);
  if (gating != 2)
    throw LoadError(g.path(), p + "expert_gating_func = " + std::to_string(gating) +
                                  " is not supported for " + c.gguf_arch + " (only 2, sigmoid)");
  c.router_sigmoid = c.router_score_bias = true;
  const double scale = g.get_float_or(p + "expert_weights_scale", 0);
  c.routed_scaling_factor = scale == 0 ? 1.0 : scale;
  c.n_group = g.get_int_or(p + "expert_group_count", 1);
  c.topk_group = g.get_int_or(p + "expert_group_used_count", c.n_group);
  if (c.n_group <= 1) c.n_group = c.topk_group = 1;
}

// YaRN from llama.cpp's keys (Qwen3's long-context GGUFs, GPT-OSS): the factor and the
// pretraining length, the attention factor 0.1 ln(factor) + 1 (which llama.cpp's rope applies
// by itself) and beta_fast / beta_slow (default 32 / 1). llama.cpp rounds the correction range
// outward (transformers' truncate); a family may say otherwise.
void read_gguf_yarn(ModelConfig& c, const GgufFile& g, const std::string& p) {
  RopeScaling& r = c.rope_scaling;
  r.type = "yarn";
  r.factor = g.get_float(p + "rope.scaling.factor");  // checked by validate()
  r.original_max_position_embeddings = g.get_int(p + "rope.scaling.original_context_length");
  // How llama.cpp combines these with its own factor varies by model: refused, not guessed.
  // DeepSeek's yarn_log_multiplier (0.1 mscale_all_dim) is read by its family, and llama.cpp
  // takes the rotation's mscale equal to mscale_all_dim there: the ratio, so the factor on cos
  // and sin, is 1 (transformers' with config.json's equal mscale / mscale_all_dim).
  // Ministral 3's (mistral3) is mscale_all_dim itself, llama.cpp's rotation taking mscale 1:
  // the factor is mscale(factor, 1) / mscale(factor, mscale_all_dim).
  const std::string log_mul_key = p + "rope.scaling.yarn_log_multiplier";
  const bool deepseek_log_mul = c.gguf_arch == "deepseek2" && g.has(log_mul_key);
  const bool mistral3_log_mul = c.gguf_arch == "mistral3" && g.has(log_mul_key);
  for (const char* k : {"rope.scaling.yarn_attn_factor", "rope.scaling.yarn_ext_factor",
                        "rope.scaling.yarn_log_multiplier"})
    if (g.has(p + k) && !((deepseek_log_mul || mistral3_log_mul) && p + k == log_mul_key))
      throw LoadError(g.path(), p + k + " is not supported (YaRN with its default factors only)");
  r.attention_factor = deepseek_log_mul   ? 1.0
                       : mistral3_log_mul ? yarn_mscale(r.factor, 1.0) /
                                                yarn_mscale(r.factor, g.get_float(log_mul_key))
                                          : yarn_mscale(r.factor, 1.0);
  r.beta_fast = g.get_float_or(p + "rope.scaling.yarn_beta_fast", 32);
  r.beta_slow = g.get_float_or(p + "rope.scaling.yarn_beta_slow", 1);
  r.truncate = true;
  auto bad = [&](const std::string& key, double v) {
    throw LoadError(
        g.path(), "invalid config: " + p + key + " = " + std::to_string(v) + " (must be positive)");
  };
  if (r.original_max_position_embeddings < 1)
    bad("rope.scaling.original_context_length",
        static_cast<double>(r.original_max_position_embeddings));
  if (!(r.beta_fast > 0 && r.beta_fast <= 1e6)) bad("rope.scaling.yarn_beta_fast", r.beta_fast);
  if (!(r.beta_slow > 0 && r.beta_slow <= 1e6)) bad("rope.scaling.yarn_beta_slow", r.beta_slow);
}

ModelConfig config_from_gguf(const GgufFile& g) {
  ModelConfig c;
  c.source = g.path();
  c.from_gguf = true;
  const std::string arch = g.get_str("general.architecture");
  const std::string p = arch + ".";
  const ModelFamily* family = family_for_gguf(arch);
  if (!family)
    throw LoadError(g.path(), "unsupported architecture '" + arch +
                                  "' (supported: " + supported_gguf_architectures() + ")");
  c.architecture = family->hf_architectures.front();
  apply_family_flags(c, *family);
  if (family->gguf_rope_interleaved) {
    c.rope_style = vt::cpu::RopeStyle::kInterleaved;
    c.gguf_qk_permuted = true;
  }
  c.gguf_arch = arch;
  c.hidden_size = g.get_int(p + "embedding_length");
  c.num_layers = g.get_int(p + "block_count");
  c.num_heads = g.get_int(p + "attention.head_count");
  c.num_kv_heads = g.get_int_or(p + "attention.head_count_kv", c.num_heads);
  c.head_dim = g.has(p + "attention.key_length") ? g.get_int(p + "attention.key_length")
                                                 : derived_head_dim(c);
  // The layers give V the same head size as K (DeepSeek's latent attention reads its own sizes:
  // models/deepseek.cpp).
  if (arch != "deepseek2" && g.has(p + "attention.value_length") &&
      g.get_int(p + "attention.value_length") != c.head_dim)
    throw LoadError(g.path(), "invalid config: " + p + "attention.value_length = " +
                                  std::to_string(g.get_int(p + "attention.value_length")) +
                                  " differs from the key head size " + std::to_string(c.head_dim) +
                                  " (not supported)");
  c.intermediate_size = g.get_int_or(p + "feed_forward_length", 0);
  // LayerNorm families (command-r, cohere2) write layer_norm_epsilon instead.
  c.rms_norm_eps = g.has(p + "attention.layer_norm_rms_epsilon")
                       ? g.get_float(p + "attention.layer_norm_rms_epsilon")
                       : g.get_float(p + "attention.layer_norm_epsilon");
  c.rope_theta = g.get_float_or(p + "rope.freq_base", 10000.0);
  // llama.cpp rotates the first rope.dimension_count dims of each head (default: all).
  if (g.has(p + "rope.dimension_count") && g.get_int(p + "rope.dimension_count") != c.head_dim)
    c.rotary_dim = g.get_int(p + "rope.dimension_count");
  c.max_position_embeddings = g.get_int_or(p + "context_length", 2048);
  if (g.has("tokenizer.ggml.tokens"))
    c.vocab_size = static_cast<int64_t>(g.get_str_array("tokenizer.ggml.tokens").size());
  c.vocab_size = g.get_int_or(p + "vocab_size", c.vocab_size);
  std::string scaling = g.get_str_or(p + "rope.scaling.type", "");
  if (scaling == "linear") {
    c.rope_scaling.type = "linear";
    c.rope_scaling.factor = g.get_float(p + "rope.scaling.factor");
  } else if (scaling == "yarn") {
    read_gguf_yarn(c, g, p);
  } else if (!scaling.empty() && scaling != "none") {
    throw LoadError(g.path(), "unsupported rope scaling type '" + scaling + "'");
  }
  if (family->gguf_config) family->gguf_config(c, g, p);
  c.tie_word_embeddings = g.find_tensor("output.weight") == nullptr;
  c.bos_token_id = g.get_int_or("tokenizer.ggml.bos_token_id", -1);
  if (g.has("tokenizer.ggml.eos_token_id"))
    c.eos_token_ids.push_back(g.get_int("tokenizer.ggml.eos_token_id"));
  if (g.has("tokenizer.ggml.eot_token_id")) {
    int64_t eot = g.get_int("tokenizer.ggml.eot_token_id");
    if (std::find(c.eos_token_ids.begin(), c.eos_token_ids.end(), eot) == c.eos_token_ids.end())
      c.eos_token_ids.push_back(eot);
  }
  c.validate();
  return c;
}

void set_dense_lead(ModelConfig& c, int64_t k) {
  c.mlp_only_layers.clear();
  for (int64_t i = 0; i < k && i < c.num_layers; ++i) c.mlp_only_layers.push_back(i);
}

void drop_gguf_nextn_layers(ModelConfig& c, const GgufFile& g, const std::string& p) {
  const int64_t nextn = g.get_int_or(p + "nextn_predict_layers", 0);
  if (nextn < 0 || nextn >= c.num_layers)
    throw LoadError(g.path(), "invalid config: " + p +
                                  "nextn_predict_layers = " + std::to_string(nextn) +
                                  " (must be in [0, " + p + "block_count - 1])");
  c.num_layers -= nextn;
}

}  // namespace vllm::model
