// Where the model tests find their inputs: committed goldens in the source tree, the
// default GGUF and the generated tiny models in the cache (see scripts/test.sh).
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace vllm::testing {

inline std::string cache_dir() {
  if (const char* c = std::getenv("VLLM_CPP_CACHE")) return c;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp";
}
inline std::string default_gguf() {
  if (const char* p = std::getenv("VLLM_TEST_GGUF")) return p;
  return cache_dir() + "/SmolLM2-135M-Instruct.Q4_1.gguf";
}
inline std::string tiny_models_dir() {
  if (const char* p = std::getenv("VLLM_TINY_MODELS")) return p;
  return cache_dir() + "/tiny-models";
}
inline std::string golden_dir() { return std::string(VLLM_SOURCE_DIR) + "/tests/golden"; }
inline nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

}  // namespace vllm::testing
