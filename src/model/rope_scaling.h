// Rotary-embedding scaling: config.json's rope_scaling (linear, llama3, longrope, yarn) read
// into ModelConfig::rope_scaling, and the context cap longrope needs. The frequencies
// themselves are ModelConfig::rope_inv_freq (rope_scaling.cpp).
#pragma once

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "model/config.h"

namespace vllm::model {

// Reads config.json's rope_scaling (absent, null or "default": none). An unknown type is a
// LoadError naming it; a bad field a tok::JsonFieldError.
void read_hf_rope_scaling(ModelConfig& c, const nlohmann::json& config);

// longrope runs within its original length only (the short factors): caps the context there,
// saying why (`key` names where the original length came from) when that shortens it.
void cap_at_longrope_original(ModelConfig& c, const std::string& key);

}  // namespace vllm::model
