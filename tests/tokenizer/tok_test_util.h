// Shared helpers for tokenizer tests: locating fixtures and reading the committed goldens.
#pragma once

#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "model/tokenizer_loader.h"
#include "tokenizer/tokenizer.h"

namespace vllm::tok::testing {

inline std::string qwen3_dir() { return VLLM_SOURCE_DIR "/../shared/fixtures/qwen3-tokenizer"; }
inline std::string golden_dir() { return VLLM_SOURCE_DIR "/tests/golden/tokenizer"; }
// $env when set, else `rel` under ~/.cache/vllm-cpp (where scripts/test.sh puts the files).
inline std::string env_or_cache(const char* env, const std::string& rel) {
  const char* e = std::getenv(env);
  if (e && *e) return e;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/" + rel;
}
inline std::string gguf_path() {
  return env_or_cache("VLLM_TEST_GGUF", "SmolLM2-135M-Instruct.Q4_1.gguf");
}
// The folder of the vocabularies scripts/fetch_vocabs.sh and the tools derived from them.
inline std::string vocab_dir() { return env_or_cache("VLLM_SPM_HF", "vocab"); }

// Loaded once per process: the Qwen3 vocabulary takes a while to parse.
inline const Tokenizer& qwen3() {
  static std::unique_ptr<Tokenizer> t = Tokenizer::from_files(
      qwen3_dir() + "/tokenizer.json", qwen3_dir() + "/tokenizer_config.json");
  return *t;
}
inline const Tokenizer& smollm2() {
  static std::unique_ptr<Tokenizer> t = model::load_tokenizer(gguf_path());
  return *t;
}

struct GoldenCase {
  std::string text, decoded, decoded_skip;
  std::vector<int32_t> ids;
  bool nfc = true;
};

inline std::vector<GoldenCase> read_cases(const std::string& name) {
  std::ifstream f(golden_dir() + "/" + name + ".jsonl");
  std::vector<GoldenCase> out;
  std::string line;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    GoldenCase c;
    c.text = j.at("text").get<std::string>();
    c.decoded = j.at("decoded").get<std::string>();
    c.decoded_skip = j.at("decoded_skip").get<std::string>();
    c.ids = j.at("ids").get<std::vector<int32_t>>();
    c.nfc = j.at("nfc").get<bool>();
    out.push_back(std::move(c));
  }
  return out;
}

inline std::string read_binary(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Same construction as big_text() in tools/make_tokenizer_goldens.py.
inline std::string big_text(const std::vector<GoldenCase>& cases, size_t target = 1u << 20) {
  static const char* kSeps[] = {"\n", " ", "\n\n", ". "};
  std::string s;
  for (size_t i = 0; s.size() < target; ++i) {
    s += cases[(i * 7919) % cases.size()].text;
    s += kSeps[i % 4];
  }
  return s;
}

// Inputs that are one huge pre-token, or millions of tiny ones: what an unauthenticated client
// can send to make tokenization expensive. Deterministic; each is about `bytes` long.
struct NamedText {
  std::string name, text;
};
inline std::vector<NamedText> pathological_inputs(size_t bytes) {
  auto repeat = [&](const std::string& unit) {
    std::string s;
    s.reserve(bytes);
    while (s.size() + unit.size() <= bytes) s += unit;
    return s;
  };
  uint32_t x = 12345;
  auto rnd = [&x]() {
    x = x * 1103515245u + 12345u;
    return x >> 8;
  };
  auto random_of = [&](uint32_t lo, uint32_t hi) {
    std::string s(bytes, '\0');
    for (char& c : s) c = static_cast<char>(lo + rnd() % (hi - lo + 1));
    return s;
  };
  std::string cjk_random;  // distinct CJK ideographs: one piece that never repeats a window
  while (cjk_random.size() + 3 <= bytes) {
    const uint32_t cp = 0x4E00 + rnd() % 0x5000;
    cjk_random += static_cast<char>(0xE0 | (cp >> 12));
    cjk_random += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    cjk_random += static_cast<char>(0x80 | (cp & 0x3F));
  }
  return {
      {"a", std::string(bytes, 'a')},
      {"spaces", std::string(bytes, ' ')},
      {"newlines", std::string(bytes, '\n')},
      {"space_newline", repeat(" \n")},
      {"random_bytes", random_of(0, 255)},
      {"cjk_repeated", repeat("\xE4\xB8\xAD")},
      {"cjk_random", cjk_random},
      {"digits", random_of('0', '9')},
      {"letters_random", random_of('a', 'z')},
      {"punctuation", repeat("!")},
      {"nul", std::string(bytes, '\0')},
      {"combining_marks", "a" + repeat("\xCC\x81")},
      {"mixed_scripts", repeat("a\xE4\xB8\xAD"
                               "1!\xD0\xB6 ")},
  };
}

}  // namespace vllm::tok::testing
