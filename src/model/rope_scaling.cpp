#include "model/rope_scaling.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "model/load_error.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

using json = nlohmann::json;

std::vector<float> ModelConfig::rope_inv_freq() const {
  // Same float arithmetic as transformers: base ** (arange(0, d, 2) / d) in float32.
  const int64_t rd = rope_dim();  // transformers: dim = head_dim * partial_rotary_factor
  std::vector<float> inv(rd / 2);
  // longrope's factors (HF: 1 / (ext_factors * base ** (arange / d))), none otherwise.
  const std::vector<float>* ext_factors = nullptr;
  if (rope_scaling.type == "longrope")
    ext_factors = rope_scaling.use_long ? &rope_scaling.long_factor : &rope_scaling.short_factor;
  for (int64_t i = 0; i < rd / 2; ++i) {
    float expo = static_cast<float>(2 * i) / static_cast<float>(rd);
    const float ext = ext_factors && !ext_factors->empty() ? (*ext_factors)[i] : 1.0f;
    inv[i] = 1.0f / (ext * std::pow(static_cast<float>(rope_theta), expo));
  }
  if (rope_scaling.type == "yarn") {
    // transformers' _compute_yarn_parameters, in its float32 / double mix.
    const double base = rope_theta, dim = static_cast<double>(rd);
    const double orig = static_cast<double>(rope_scaling.original_max_position_embeddings);
    auto corr = [&](double rot) {
      return dim * std::log(orig / (rot * 2 * M_PI)) / (2 * std::log(base));
    };
    double lo = corr(rope_scaling.beta_fast), hi = corr(rope_scaling.beta_slow);
    if (rope_scaling.truncate) {
      lo = std::floor(lo);
      hi = std::ceil(hi);
    }
    lo = std::max(lo, 0.0);
    hi = std::min(hi, dim - 1);
    if (lo == hi) hi += 0.001;
    const float factor = static_cast<float>(rope_scaling.factor);
    for (int64_t i = 0; i < rd / 2; ++i) {
      const float pos =
          std::pow(static_cast<float>(base), static_cast<float>(2 * i) / static_cast<float>(dim));
      const float ramp =
          std::clamp((static_cast<float>(i) - static_cast<float>(lo)) / static_cast<float>(hi - lo),
                     0.0f, 1.0f);
      const float extrap = 1.0f - ramp;
      inv[i] = (1.0f / (factor * pos)) * (1.0f - extrap) + (1.0f / pos) * extrap;
    }
  } else if (rope_scaling.type == "linear") {
    for (auto& f : inv) f = f / static_cast<float>(rope_scaling.factor);
  } else if (rope_scaling.type == "llama3") {
    const double factor = rope_scaling.factor, lo = rope_scaling.low_freq_factor,
                 hi = rope_scaling.high_freq_factor;
    const double old_len = static_cast<double>(rope_scaling.original_max_position_embeddings);
    const double low_wavelen = old_len / lo, high_wavelen = old_len / hi;
    for (auto& f : inv) {
      const double wavelen = 2 * M_PI / f;
      if (wavelen > low_wavelen) {
        f = static_cast<float>(f / factor);
      } else if (wavelen >= high_wavelen) {
        const double smooth = (old_len / wavelen - lo) / (hi - lo);
        f = static_cast<float>((1 - smooth) * f / factor + smooth * f);
      }
    }
  }
  return inv;
}

float ModelConfig::attention_scale() const {
  return attention_multiplier > 0
             ? static_cast<float>(attention_multiplier)
             : 1.0f / std::sqrt(static_cast<float>(query_pre_attn_scalar > 0
                                                       ? query_pre_attn_scalar
                                                       : static_cast<double>(head_dim)));
}

namespace {

// The pretraining length and the factor of longrope and yarn, transformers' rule (its
// standardize_rope_params): the top-level original_max_position_embeddings (Phi-3's place) wins,
// else rope_scaling's, else max_position_embeddings; `factor` is rope_scaling's (at least
// `min_factor`) or max / original. Returns the factor as given or derived (may be below 1).
double read_original_and_factor(ModelConfig& c, const json& j, const json& rs, double min_factor) {
  using tok::json_float_or;
  using tok::json_int_or;
  namespace L = limits;
  const char* p = "rope_scaling";
  const int64_t orig = json_int_or(j, "original_max_position_embeddings",
                                   json_int_or(rs, "original_max_position_embeddings",
                                               c.max_position_embeddings, 1, L::kMaxContext, p),
                                   1, L::kMaxContext);
  c.rope_scaling.original_max_position_embeddings = orig;
  const double factor =
      rs.contains("factor") && !rs["factor"].is_null()
          ? json_float_or(rs, "factor", 1.0, min_factor, L::kMaxRopeFactor, p)
          : static_cast<double>(c.max_position_embeddings) / static_cast<double>(orig);
  c.rope_scaling.factor = std::max(1.0, factor);
  return factor;
}

// longrope (Phi-3.5-mini, Phi-3-*-128k), transformers' rule: attention_factor is rope_scaling's
// or sqrt(1 + ln(factor) / ln(original)) (1 when factor <= 1), for the short and the long
// factors alike. The context is capped at the original length, where the short factors apply,
// unless the load asks for more (use_longrope_factors).
void read_longrope(ModelConfig& c, const json& j, const json& rs) {
  using tok::json_float;
  using tok::json_float_or;
  using tok::json_int_or;
  namespace L = limits;
  const char* p = "rope_scaling";
  RopeScaling& r = c.rope_scaling;
  r.type = "longrope";
  const double factor = read_original_and_factor(c, j, rs, 0);
  const int64_t orig = r.original_max_position_embeddings;
  if (!rs.contains("short_factor") || !rs["short_factor"].is_array())
    throw tok::JsonFieldError("rope_scaling.short_factor: longrope needs a list of factors");
  for (const auto& x : rs["short_factor"])
    r.short_factor.push_back(
        static_cast<float>(json_float(x, "rope_scaling.short_factor", 0, L::kMaxRopeFactor)));
  if (rs.contains("long_factor") && !rs["long_factor"].is_null()) {
    if (!rs["long_factor"].is_array())
      throw tok::JsonFieldError("rope_scaling.long_factor: must be a list of factors");
    for (const auto& x : rs["long_factor"])
      r.long_factor.push_back(
          static_cast<float>(json_float(x, "rope_scaling.long_factor", 0, L::kMaxRopeFactor)));
  }
  r.attention_factor =
      rs.contains("attention_factor") && !rs["attention_factor"].is_null()
          ? json_float_or(rs, "attention_factor", 1.0, 0, 1e3, p)
          : (factor <= 1.0 ? 1.0
                           : std::sqrt(1 + std::log(factor) / std::log(static_cast<double>(orig))));
  cap_at_longrope_original(c, "original_max_position_embeddings");
}

// YaRN (Qwen3's long-context recipe, DeepSeek-distilled models), transformers' rule:
// attention_factor given, else 0.1 ln(factor) + 1 (DeepSeek's
// mscale / mscale_all_dim ratio when both are given). The context grows to original x factor,
// as vLLM derives it.
void read_yarn(ModelConfig& c, const json& j, const json& rs) {
  using tok::json_bool_or;
  using tok::json_float_or;
  using tok::json_int_or;
  namespace L = limits;
  const char* p = "rope_scaling";
  RopeScaling& r = c.rope_scaling;
  r.type = "yarn";
  read_original_and_factor(c, j, rs, 1);
  const int64_t orig = r.original_max_position_embeddings;
  const double ms = json_float_or(rs, "mscale", 0, 0, 1e3, p);
  const double ms_all = json_float_or(rs, "mscale_all_dim", 0, 0, 1e3, p);
  if (rs.contains("attention_factor") && !rs["attention_factor"].is_null())
    r.attention_factor = json_float_or(rs, "attention_factor", 1.0, 0, 1e3, p);
  else if (ms > 0 && ms_all > 0)
    r.attention_factor = yarn_mscale(r.factor, ms) / yarn_mscale(r.factor, ms_all);
  else
    r.attention_factor = yarn_mscale(r.factor, 1.0);
  r.beta_fast = json_float_or(rs, "beta_fast", 32, 0, 1e6, p);
  r.beta_slow = json_float_or(rs, "beta_slow", 1, 0, 1e6, p);
  if (!(r.beta_fast > 0)) r.beta_fast = 32;  // transformers: `or 32`
  if (!(r.beta_slow > 0)) r.beta_slow = 1;
  r.truncate = json_bool_or(rs, "truncate", true);
  const double len = static_cast<double>(orig) * r.factor;
  c.max_position_embeddings =
      std::max<int64_t>(c.max_position_embeddings,
                        static_cast<int64_t>(std::min(len, static_cast<double>(L::kMaxContext))));
}

}  // namespace

namespace {

void apply_rope_parameters_to(json& j) {
  if (!j.is_object() || !j.contains("rope_parameters") || j["rope_parameters"].is_null()) return;
  const json& rp = j["rope_parameters"];
  if (!rp.is_object())
    throw tok::JsonFieldError("rope_parameters = " + rp.dump() + " (must be an object)");
  auto type_of = [](const json& o) {
    const json& t = o.contains("rope_type") ? o["rope_type"] : o.value("type", json("default"));
    return t.is_string() ? t.get<std::string>() : t.dump();
  };
  json flat = rp;
  if (rp.contains("full_attention") || rp.contains("sliding_attention")) {
    for (const auto& [k, v] : rp.items()) {
      if (k != "full_attention" && k != "sliding_attention")
        throw tok::JsonFieldError("rope_parameters." + k +
                                  ": unsupported layer type (supported: full_attention, "
                                  "sliding_attention)");
      if (!v.is_object() && !v.is_null())
        throw tok::JsonFieldError("rope_parameters." + k + " = " + v.dump() +
                                  " (must be an object)");
    }
    flat = rp.contains("full_attention") && rp["full_attention"].is_object() ? rp["full_attention"]
                                                                             : json::object();
    if (rp.contains("sliding_attention") && rp["sliding_attention"].is_object()) {
      const json& sl = rp["sliding_attention"];
      if (type_of(sl) != "default")
        throw tok::JsonFieldError("rope_parameters.sliding_attention.rope_type = '" + type_of(sl) +
                                  "': rope scaling on the sliding-window layers is not supported");
      if (sl.contains("partial_rotary_factor") &&
          sl["partial_rotary_factor"] != flat.value("partial_rotary_factor", json(1.0)))
        throw tok::JsonFieldError(
            "rope_parameters.sliding_attention.partial_rotary_factor = " +
            sl["partial_rotary_factor"].dump() +
            ": a rotary width of its own on the sliding-window layers is not supported");
      if (sl.contains("rope_theta")) j["rope_local_base_freq"] = sl["rope_theta"];
    }
  }
  const bool legacy = j.contains("rope_scaling") && j["rope_scaling"].is_object();
  for (const char* k : {"rope_theta", "partial_rotary_factor"})
    if (flat.contains(k) && (!legacy || !j.contains(k))) j[k] = flat[k];
  if (!legacy) j["rope_scaling"] = flat;  // "default" (plain rope) reads as none
}

}  // namespace

double yarn_mscale(double factor, double m) {
  return factor <= 1 ? 1.0 : 0.1 * m * std::log(factor) + 1.0;
}

void apply_rope_parameters(json& config) {
  apply_rope_parameters_to(config);
  if (config.is_object() && config.contains("text_config"))
    apply_rope_parameters_to(config["text_config"]);
}

void cap_at_longrope_original(ModelConfig& c, const std::string& key) {
  const int64_t orig = c.rope_scaling.original_max_position_embeddings;
  c.rope_scaling.long_max_position_embeddings = c.max_position_embeddings;
  if (c.max_position_embeddings > orig)
    c.max_len_note = "longrope: past " + key + " = " + std::to_string(orig) +
                     " the long factors apply; a longer --max-model-len selects them";
  c.max_position_embeddings = std::min(c.max_position_embeddings, orig);
}

bool use_longrope_factors(ModelConfig& c, int64_t max_model_len, bool have_long) {
  RopeScaling& r = c.rope_scaling;
  if (r.type != "longrope" || max_model_len <= r.original_max_position_embeddings) return false;
  if (!have_long) {
    c.max_len_note = "longrope: the checkpoint has no long factors for a context past " +
                     std::to_string(r.original_max_position_embeddings);
    return false;
  }
  r.use_long = true;
  c.max_position_embeddings = std::max(c.max_position_embeddings, r.long_max_position_embeddings);
  c.max_len_note.clear();
  return true;
}

void read_hf_rope_scaling(ModelConfig& c, const json& j) {
  using tok::json_float_or;
  using tok::json_int_or;
  namespace L = limits;
  if (!j.contains("rope_scaling") || !j["rope_scaling"].is_object()) return;
  const json& rs = j["rope_scaling"];
  std::string type = rs.value("rope_type", rs.value("type", std::string()));
  // Llama 4's attention temperature (Ministral 3, Mistral 4), over the rope's pretraining length.
  if (rs.contains("llama_4_scaling_beta") && !rs["llama_4_scaling_beta"].is_null()) {
    c.attn_temperature_scale = json_float_or(rs, "llama_4_scaling_beta", 0, 0, 1e3, "rope_scaling");
    c.attn_temperature_length =
        json_int_or(rs, "original_max_position_embeddings",
                    json_int_or(j, "original_max_position_embeddings", 0, 0, L::kMaxContext), 0,
                    L::kMaxContext);
    if (c.attn_temperature_scale > 0 && c.attn_temperature_length < 1)
      throw tok::JsonFieldError(
          "rope_scaling.llama_4_scaling_beta needs original_max_position_embeddings");
  }
  if (type == "su") type = "longrope";  // Phi-3-*-128k's first configs (vLLM and transformers)
  if (type == "longrope") {
    read_longrope(c, j, rs);
  } else if (type == "yarn") {
    read_yarn(c, j, rs);
  } else if (type == "dynamic" && rs.contains("alpha")) {
    // Hunyuan's "dynamic" with alpha is a fixed NTK stretch of the base, not dynamic scaling:
    // rope_theta * alpha^(d / (d - 2)) at every length (transformers' ntk_alpha, vLLM's
    // DynamicNTKAlphaRotaryEmbedding; what llama.cpp's converter writes into a GGUF).
    const double alpha = json_float_or(rs, "alpha", 1.0, 1e-6, 1e9, "rope_scaling");
    const double d = static_cast<double>(c.head_dim);
    if (c.head_dim <= 2)
      throw tok::JsonFieldError("head_dim must be above 2 for the NTK alpha rope");
    c.rope_theta *= std::pow(alpha, d / (d - 2));
    if (!(c.rope_theta <= L::kMaxRopeTheta))
      throw tok::JsonFieldError("rope_scaling.alpha = " + rs["alpha"].dump() +
                                ": the stretched rope base passes " +
                                std::to_string(L::kMaxRopeTheta));
  } else if (type != "default" && !type.empty()) {
    if (type != "llama3" && type != "linear")
      throw LoadError(c.source, "unsupported rope_scaling type '" + type + "'");
    const char* p = "rope_scaling";
    c.rope_scaling.type = type;
    c.rope_scaling.factor = json_float_or(rs, "factor", 1.0, 1, L::kMaxRopeFactor, p);
    c.rope_scaling.low_freq_factor =
        json_float_or(rs, "low_freq_factor", 1.0, 0, L::kMaxRopeFactor, p);
    c.rope_scaling.high_freq_factor =
        json_float_or(rs, "high_freq_factor", 4.0, 0, L::kMaxRopeFactor, p);
    c.rope_scaling.original_max_position_embeddings =
        json_int_or(rs, "original_max_position_embeddings", 8192, 1, L::kMaxContext, p);
  }
}

}  // namespace vllm::model
