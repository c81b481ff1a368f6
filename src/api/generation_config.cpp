// Reading generation_config.json's sampling defaults.
#include "api/generation_config.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace vllm::api {

namespace fs = std::filesystem;

nlohmann::json GenerationDefaults::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  if (repetition_penalty) j["repetition_penalty"] = *repetition_penalty;
  if (temperature) j["temperature"] = *temperature;
  if (top_k) j["top_k"] = *top_k;
  if (top_p) j["top_p"] = *top_p;
  if (min_p) j["min_p"] = *min_p;
  if (max_new_tokens) j["max_tokens"] = *max_new_tokens;
  return j;
}

void GenerationDefaults::merge(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) throw std::invalid_argument(where + ": expected a JSON object");
  auto num = [&](const char* k, std::optional<float>& out) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) return;
    if (!it->is_number())
      throw std::invalid_argument(where + ": '" + k + "' must be a number, got " + it->dump());
    out = it->get<float>();
  };
  auto integer = [&](const char* k, std::optional<int32_t>& out) {
    auto it = j.find(k);
    if (it == j.end() || it->is_null()) return;
    if (!it->is_number_integer())
      throw std::invalid_argument(where + ": '" + k + "' must be an integer, got " + it->dump());
    out = it->get<int32_t>();
  };
  num("temperature", temperature);
  num("top_p", top_p);
  num("min_p", min_p);
  num("repetition_penalty", repetition_penalty);
  integer("top_k", top_k);
  integer("max_new_tokens", max_new_tokens);
  integer("max_tokens", max_new_tokens);  // the name --override-generation-config may use
}

GenerationDefaults load_generation_defaults(const std::string& mode,
                                            const std::string& model_path) {
  GenerationDefaults d;
  if (mode == "vllm") {
    d.source = "vLLM's defaults (--generation-config vllm)";
    return d;
  }
  fs::path dir;
  if (mode == "auto") {
    if (!fs::is_directory(model_path)) {
      d.source = "none: a GGUF file carries no generation_config.json (vLLM's defaults apply)";
      return d;
    }
    dir = model_path;
  } else {
    dir = mode;
    if (!fs::exists(dir / "generation_config.json"))
      throw std::invalid_argument("--generation-config " + mode +
                                  ": no generation_config.json in that folder");
  }
  const fs::path file = dir / "generation_config.json";
  if (!fs::exists(file)) {
    d.source = "none: " + file.string() + " does not exist (vLLM's defaults apply)";
    return d;
  }
  std::ifstream in(file);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(file.string() + ": not valid JSON (" + e.what() + ")");
  }
  d.merge(j, file.string());
  d.source = file.string();
  return d;
}

}  // namespace vllm::api
