// Rotary-embedding scaling: config.json's rope_scaling (linear, llama3, longrope, yarn) read
// into ModelConfig::rope_scaling, and the context cap longrope needs. The frequencies
// themselves are ModelConfig::rope_inv_freq (rope_scaling.cpp).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/config.h"

namespace vllm::model {

// transformers >= 5 saves the rope fields as one `rope_parameters` object (rope_type,
// rope_theta, partial_rotary_factor and the type's own fields), or one per layer type
// ("full_attention", "sliding_attention": Gemma 3), and no top-level rope_theta / rope_scaling.
// Rewrites them, in `config` and in its text_config, into the fields the readers take:
// rope_theta, partial_rotary_factor, rope_scaling (the object itself), and the sliding layers'
// base as rope_local_base_freq. transformers' precedence: rope_parameters' values win over the
// top-level ones; a legacy rope_scaling object replaces its scaling (its rope_theta and
// partial_rotary_factor still apply where the top level has none). Scaling on the sliding
// layers, or another layer type, is a tok::JsonFieldError naming it.
void apply_rope_parameters(nlohmann::json& config);

// YaRN's magnitude scale for `factor` (transformers' get_mscale / yarn_get_mscale, llama.cpp's):
// 0.1 m ln(factor) + 1, 1 at factor <= 1. The attention factor is mscale(factor, 1), or
// DeepSeek's mscale(factor, mscale) / mscale(factor, mscale_all_dim).
double yarn_mscale(double factor, double m);

// Reads config.json's rope_scaling (absent, null or "default": none). An unknown type is a
// LoadError naming it; a bad field a tok::JsonFieldError.
void read_hf_rope_scaling(ModelConfig& c, const nlohmann::json& config);

// longrope runs within its original length by default (the short factors): caps the context
// there, saying why (`key` names where the original length came from) when that shortens it,
// and keeps the checkpoint's length for use_longrope_factors.
void cap_at_longrope_original(ModelConfig& c, const std::string& key);

// A served context of max_model_len past longrope's original length: the long factors for
// every position (vLLM's rule: a sequence never switches factors, so its cached keys stay
// valid; transformers switches per forward pass by its length, the same for a pass past the
// original length) and the checkpoint's whole context again. `have_long`: the checkpoint has
// long factors (config.json's long_factor, a GGUF's rope_factors_long); without them the cap
// stays, its note saying so. Returns whether the long factors apply.
bool use_longrope_factors(ModelConfig& c, int64_t max_model_len, bool have_long);

}  // namespace vllm::model
