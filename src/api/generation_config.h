// Default sampling parameters from a model's generation_config.json, applied (as vLLM's
// `--generation-config auto` does) to requests that do not set them: temperature, top_p,
// top_k, min_p, repetition_penalty and max_new_tokens (a cap on max_tokens).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace vllm::api {

struct GenerationDefaults {
  std::optional<float> temperature, top_p, min_p, repetition_penalty;
  std::optional<int32_t> top_k, max_new_tokens;
  // Where they came from, or why there are none (printed at start-up).
  std::string source;

  bool empty() const {
    return !temperature && !top_p && !min_p && !repetition_penalty && !top_k && !max_new_tokens;
  }
  // {"temperature": 0.6, ...}: the fields that are set, named as vLLM prints them.
  nlohmann::json to_json() const;
  // Sets the fields present in `j` (vLLM's --override-generation-config, or a
  // generation_config.json object); throws std::invalid_argument naming a malformed field.
  void merge(const nlohmann::json& j, const std::string& where);
};

// --generation-config: "auto" reads generation_config.json beside the model (a folder; a GGUF
// file has none), "vllm" uses vLLM's own defaults (none here), anything else is a folder
// holding generation_config.json. Throws std::invalid_argument when a named folder has none
// or the file is malformed.
GenerationDefaults load_generation_defaults(const std::string& mode, const std::string& model_path);

}  // namespace vllm::api
