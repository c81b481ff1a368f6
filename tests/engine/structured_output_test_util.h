// Shared helpers for the structured-output tests: the real tokenizers, compiling a corpus
// entry, brute-force masks (accept from a copied matcher, token by token) and random walks.
#pragma once

#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/structured_output/structured_output.h"
#include "model/tokenizer_loader.h"
#include "tokenizer/tokenizer.h"

namespace vllm::engine::so::testing {

inline std::string source_dir() { return VLLM_SOURCE_DIR; }
inline std::string qwen3_dir() { return source_dir() + "/../shared/fixtures/qwen3-tokenizer"; }
inline std::string gguf_path() {
  const char* e = std::getenv("VLLM_TEST_GGUF");
  if (e && *e) return e;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf";
}

inline const tok::Tokenizer& qwen3_tok() {
  static std::unique_ptr<tok::Tokenizer> t = tok::Tokenizer::from_files(
      qwen3_dir() + "/tokenizer.json", qwen3_dir() + "/tokenizer_config.json");
  return *t;
}
inline const tok::Tokenizer& smollm2_tok() {
  static std::unique_ptr<tok::Tokenizer> t = model::load_tokenizer(gguf_path());
  return *t;
}
inline GrammarCompiler& qwen3_compiler() {
  static GrammarCompiler c(VocabIndex::build(qwen3_tok()));
  return c;
}
inline GrammarCompiler& smollm2_compiler() {
  static GrammarCompiler c(VocabIndex::build(smollm2_tok()));
  return c;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline GrammarKind kind_of(const std::string& k) {
  if (k == "json_schema") return GrammarKind::kJsonSchema;
  if (k == "json_object") return GrammarKind::kJsonObject;
  if (k == "regex") return GrammarKind::kRegex;
  if (k == "choice") return GrammarKind::kChoice;
  if (k == "grammar") return GrammarKind::kGrammar;
  throw std::runtime_error("unknown kind " + k);
}

inline bool bit(const std::vector<uint32_t>& m, int32_t id) {
  return (m[id >> 5] >> (id & 31)) & 1;
}

// The mask by definition: token t is allowed iff a copy of the matcher accepts it.
inline std::vector<uint32_t> brute_force_mask(const Matcher& m, int32_t vocab) {
  std::vector<uint32_t> out((vocab + 31) / 32, 0);
  for (int32_t t = 0; t < vocab; ++t) {
    Matcher c = m;
    if (c.accept(t)) out[t >> 5] |= 1u << (t & 31);
  }
  return out;
}

inline std::vector<int32_t> allowed(const std::vector<uint32_t>& mask) {
  std::vector<int32_t> ids;
  for (size_t w = 0; w < mask.size(); ++w)
    for (uint32_t x = mask[w]; x; x &= x - 1)
      ids.push_back(static_cast<int32_t>(w * 32 + __builtin_ctz(x)));
  return ids;
}

}  // namespace vllm::engine::so::testing
