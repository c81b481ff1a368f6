// Pre-tokenization: the chain of splits (Split regex, Digits, ByteLevel's GPT-2 regex) that
// cuts normalized text into the pieces BPE merges independently. Built from tokenizer.json's
// "pre_tokenizer" object or from a GGUF tokenizer.ggml.pre name.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tokenizer/regex.h"

namespace vllm::tok {

class PreTokenizer {
 public:
  // Throws std::invalid_argument naming an unsupported type/behavior; requires a ByteLevel step.
  static std::unique_ptr<PreTokenizer> from_json(const nlohmann::json& j);
  // llama.cpp's tokenizer.ggml.pre names; throws std::invalid_argument for unknown ones.
  static std::unique_ptr<PreTokenizer> from_gguf_pre(const std::string& pre);

  // Splits valid UTF-8 text; the views point into text or into scratch.
  void split(std::string_view text, std::vector<std::string_view>& out,
             std::deque<std::string>& scratch) const;
  // Calls fn(piece) for each piece split() would give, in order, until fn returns false; returns
  // false when it stopped early. Matching is lazy, so a caller that stops early (a token budget
  // ran out) pays only for the pieces it took. A piece is valid only during its call.
  template <class Fn>
  bool for_each(std::string_view text, Fn&& fn) const {
    return visit(
        0, text, [](void* f, std::string_view p) { return (*static_cast<Fn*>(f))(p); }, &fn);
  }

  bool ignore_merges_hint() const { return ignore_merges_hint_; }  // llama-bpe
  bool removes_text() const;  // some step drops what it matches (Split behavior "Removed")
  std::string describe() const;

 private:
  enum class Kind { kIsolate, kRemove, kByteLevelPrefixSpace };
  struct Step {
    Kind kind;
    std::unique_ptr<Regex> re;  // null for kByteLevelPrefixSpace
  };
  using PieceFn = bool (*)(void* ctx, std::string_view piece);
  // Depth first: each piece of step i goes through steps i+1.. before the next piece of step i
  // is looked for, which yields the pieces in the same order as splitting step by step.
  bool visit(size_t step, std::string_view piece, PieceFn fn, void* ctx) const;
  void add_regex(const std::string& pattern, Kind kind, bool literal = false);
  void add_json(const nlohmann::json& j, bool& has_byte_level);

  std::vector<Step> steps_;
  bool ignore_merges_hint_ = false;
};

// Oniguruma patterns the GGUF pre names stand for (as their tokenizer.json files spell them).
extern const char* const kGpt2Pattern;
extern const char* const kQwen2Pattern;
extern const char* const kLlama3Pattern;

}  // namespace vllm::tok
