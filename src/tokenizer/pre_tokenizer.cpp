// Pre-tokenizer chain. Each step refines every piece of the previous step, as Hugging Face's
// Sequence pre-tokenizer does; the byte-level character mapping itself happens in BPE.
#include "tokenizer/pre_tokenizer.h"

#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace vllm::tok {

const char* const kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
const char* const kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
const char* const kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// Mistral's Tekken (tekken.json's "pattern"; Mistral Nemo, Mistral Small 3, Ministral). Used as
// written, as mistral_common and Hugging Face do: llama.cpp rewrites the case classes with
// lookaheads for its own engine, which differs from both on combining marks.
const char* const kTekkenPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

void PreTokenizer::add_regex(const std::string& pattern, Kind kind, bool literal) {
  steps_.push_back(Step{kind, std::make_unique<Regex>(pattern, literal)});
}

void PreTokenizer::add_json(const nlohmann::json& j, bool& has_byte_level) {
  const std::string type = j.value("type", "");
  if (type == "Sequence") {
    for (const auto& sub : j.at("pretokenizers")) add_json(sub, has_byte_level);
  } else if (type == "Split") {
    if (j.value("invert", false))
      throw std::invalid_argument("unsupported pre-tokenizer: Split with invert=true");
    const std::string behavior = j.value("behavior", "Isolated");
    Kind kind;
    if (behavior == "Isolated") {
      kind = Kind::kIsolate;
    } else if (behavior == "Removed") {
      kind = Kind::kRemove;
    } else {
      throw std::invalid_argument("unsupported pre-tokenizer: Split behavior '" + behavior + "'");
    }
    const auto& pat = j.at("pattern");
    if (pat.contains("Regex")) {
      add_regex(pat.at("Regex").get<std::string>(), kind);
    } else {
      add_regex(pat.at("String").get<std::string>(), kind, /*literal=*/true);
    }
  } else if (type == "Digits") {
    add_regex(j.value("individual_digits", false) ? R"(\p{N})" : R"(\p{N}+)", Kind::kIsolate);
  } else if (type == "ByteLevel") {
    has_byte_level = true;
    if (j.value("add_prefix_space", false))
      steps_.push_back(Step{Kind::kByteLevelPrefixSpace, nullptr});
    if (j.value("use_regex", true)) add_regex(kGpt2Pattern, Kind::kIsolate);
  } else {
    throw std::invalid_argument("unsupported pre-tokenizer type '" + type +
                                "' (supported: Sequence, Split, Digits, ByteLevel)");
  }
}

std::unique_ptr<PreTokenizer> PreTokenizer::from_json(const nlohmann::json& j) {
  auto p = std::unique_ptr<PreTokenizer>(new PreTokenizer());
  if (j.is_null())
    throw std::invalid_argument("unsupported pre-tokenizer: none (byte-level BPE needs ByteLevel)");
  bool has_byte_level = false;
  p->add_json(j, has_byte_level);
  if (!has_byte_level)
    throw std::invalid_argument(
        "unsupported pre-tokenizer: no ByteLevel step (only byte-level BPE is supported)");
  return p;
}

std::unique_ptr<PreTokenizer> PreTokenizer::from_gguf_pre(const std::string& pre) {
  auto p = std::unique_ptr<PreTokenizer>(new PreTokenizer());
  if (pre == "qwen2" || pre == "deepseek-r1-qwen") {
    p->add_regex(kQwen2Pattern, Kind::kIsolate);
  } else if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3") {
    p->add_regex(kLlama3Pattern, Kind::kIsolate);
    p->ignore_merges_hint_ = true;  // Llama 3's tokenizer.json sets ignore_merges
  } else if (pre == "tekken") {
    p->add_regex(kTekkenPattern, Kind::kIsolate);
    p->ignore_merges_hint_ = true;  // a piece in the vocabulary is one token (tiktoken's rule)
  } else if (pre == "smollm" || pre == "starcoder" || pre == "codeshell") {
    // Hugging Face: Sequence[Digits(individual_digits), ByteLevel(use_regex)]; llama.cpp
    // splits \p{N} first and then applies the GPT-2 regex, which is the same chain.
    p->add_regex(R"(\p{N})", Kind::kIsolate);
    p->add_regex(kGpt2Pattern, Kind::kIsolate);
  } else if (pre == "gpt-2" || pre == "default" || pre.empty()) {
    p->add_regex(kGpt2Pattern, Kind::kIsolate);
  } else {
    throw std::invalid_argument(
        "unsupported tokenizer.ggml.pre '" + pre +
        "' (supported: qwen2, llama-bpe, tekken, smollm, starcoder, gpt-2, default)");
  }
  return p;
}

bool PreTokenizer::visit(size_t step, std::string_view piece, PieceFn fn, void* ctx) const {
  if (piece.empty()) return true;
  if (step == steps_.size()) return fn(ctx, piece);
  const Step& st = steps_[step];
  if (st.kind == Kind::kByteLevelPrefixSpace) {
    if (piece[0] == ' ') return visit(step + 1, piece, fn, ctx);
    const std::string spaced = " " + std::string(piece);
    return visit(step + 1, spaced, fn, ctx);
  }
  size_t pos = 0, from = 0, b = 0, e = 0;
  while (st.re->find(piece, from, b, e)) {
    if (b > pos && !visit(step + 1, piece.substr(pos, b - pos), fn, ctx)) return false;
    if (st.kind == Kind::kIsolate && !visit(step + 1, piece.substr(b, e - b), fn, ctx))
      return false;
    pos = e;
  }
  return visit(step + 1, piece.substr(pos), fn, ctx);
}

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& out,
                         std::deque<std::string>& scratch) const {
  for_each(text, [&](std::string_view p) {
    // A piece may live in a temporary (prefix space added); a deque never moves its elements,
    // so the views handed out earlier stay valid.
    const std::less<const char*> before;
    if (before(p.data(), text.data()) || !before(p.data(), text.data() + text.size())) {
      scratch.emplace_back(p);
      p = scratch.back();
    }
    out.push_back(p);
    return true;
  });
}

bool PreTokenizer::removes_text() const {
  for (const Step& st : steps_) {
    if (st.kind == Kind::kRemove) return true;
  }
  return false;
}

std::string PreTokenizer::describe() const {
  std::string s;
  for (const Step& st : steps_) {
    if (!s.empty()) s += " -> ";
    s += st.re ? st.re->pattern() : "prefix-space";
  }
  return s;
}

}  // namespace vllm::tok
