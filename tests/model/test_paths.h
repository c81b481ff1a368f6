// Where the model tests find their inputs: committed goldens in the source tree, the
// default GGUF and the generated tiny models in the cache (see scripts/test.sh).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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
// The tiny Hugging Face checkpoints (tools/make_tiny_models.py) with transformers goldens
// (tests/golden/hf/<name>): every gate that runs "each tiny model" takes this one list.
inline const std::vector<std::string>& tiny_hf_models() {
  static const std::vector<std::string> names = {
      "qwen3",         "qwen3_moe",    "llama",      "qwen2",      "mistral",     "gemma3",
      "gemma2",        "phi3",         "mixtral",    "mistral3",   "qwen2_5_vl",  "qwen3_vl",
      "smollm3",       "granite",      "olmo2",      "phi3_5",     "qwen2_yarn",  "phi4_mini",
      "glm4",          "cohere",       "cohere2",    "exaone4",    "gpt_oss",     "gpt_oss_plain",
      "qwen2_moe",     "olmoe",        "granitemoe", "glm4_moe",   "minimax_m2",  "qwen3_fp8",
      "ernie4_5",      "ernie4_5_moe", "seed_oss",   "arcee",      "gemma",       "hunyuan_dense",
      "olmo3",         "stablelm",     "phi",        "starcoder2", "deepseek_v2", "deepseek_v3",
      "glm4_moe_lite", "ministral3"};
  return names;
}
inline std::string golden_dir() { return std::string(VLLM_SOURCE_DIR) + "/tests/golden"; }
// A golden logits file: n raw little-endian floats (tools/make_hf_goldens.py and the like).
inline std::vector<float> read_f32(const std::string& path, size_t n) {
  std::vector<float> v(n);
  std::ifstream in(path, std::ios::binary);
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(float)));
  if (!in) throw std::runtime_error("short golden file " + path);
  return v;
}
// The greedy choice of a logits row (the lowest id among equal maxima).
inline int32_t argmax(const float* x, int64_t n) {
  return static_cast<int32_t>(std::max_element(x, x + n) - x);
}
inline nlohmann::json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  return nlohmann::json::parse(in);
}

}  // namespace vllm::testing
