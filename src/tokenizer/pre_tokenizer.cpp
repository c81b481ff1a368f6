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

// OpenAI's o200k (GPT-4o): the Split(Isolated) regex of o200k tokenizer.json files (Phi-4-mini's),
// before ByteLevel(use_regex=false); llama.cpp's tokenizer.ggml.pre "gpt-4o" and "minimax-m2"
// (LLAMA_VOCAB_PRE_TYPE_GPT4O / _MINIMAX_M2 in llama-vocab.cpp). Tekken's case classes, plus an
// optional contraction after a letter run and digits in runs of up to three. Used as written, like
// kTekkenPattern, as Hugging Face does: llama.cpp rewrites the case classes with lookaheads for its
// own engine (ASCII [^a-z] / [^A-Z], no \p{M} in the letter runs), which splits differently, e.g.
// "cafe\u0301's" (a decomposed accent) loses its contraction there.
const char* const kO200kPattern =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// DeepSeek LLM and DeepSeek Coder (Llama-architecture GGUFs): a chain of splits, each refining
// the pieces of the one before (their tokenizer.json's Sequence of Split pre-tokenizers; the
// lists llama.cpp keeps for them). Letters are DeepSeek LLM's explicit ranges of cased
// scripts; CJK and Hangul runs are their own pieces.
const char* const kDeepseekLlmPatterns[] = {
    R"([\r\n])",
    "\\s?[A-Za-z\u00B5\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u01BA\u01BC-\u01BF\u01C4-\u0293\u0295-"
    "\u02AF"
    "\u0370-\u0373\u0376\u0377\u037B-\u037D\u037F\u0386\u0388-\u038A\u038C\u038E-\u03A1"
    "\u03A3-\u03F5\u03F7-\u0481\u048A-\u052F\u0531-\u0556\u10A0-\u10C5\u13A0-\u13F5"
    "\u13F8-\u13FD\u1C90-\u1CBA\u1CBD-\u1CBF\u1D00-\u1D2B\u1D6B-\u1D77\u1D79-\u1D9A"
    "\u1E00-\u1F15\u1F18-\u1F1D\u1F20-\u1F45\u1F48-\u1F4D\u1F50-\u1F57\u1F59\u1F5B\u1F5D"
    "\u1F5F-\u1F7D\u1F80-\u1FB4\u1FB6-\u1FBC\u1FBE\u1FC2-\u1FC4\u1FC6-\u1FCC\u1FD0-\u1FD3"
    "\u1FD6-\u1FDB\u1FE0-\u1FEC\u1FF2-\u1FF4\u1FF6-\u1FFC\u2102\u2107\u210A-\u2113\u2115"
    "\u2119-\u211D\u2124\u2126\u2128\u212A-\u212D\u212F-\u2134\u2139\u213C-\u213F"
    "\u2145-\u2149\u214E\u2183\u2184\u2C00-\u2C7B\u2C7E-\u2CE4\u2CEB-\u2CEE\u2CF2\u2CF3"
    "\uA640-\uA66D\uA680-\uA69B\uA722-\uA76F\uA771-\uA787\uA78B-\uA78E\uAB70-\uABBF"
    "\uFB00-\uFB06\uFB13-\uFB17\uFF21-\uFF3A\uFF41-\uFF5A\U00010400-\U0001044F"
    "\U000104B0-\U000104D3\U000104D8-\U000104FB\U00010C80-\U00010CB2\U00010CC0-\U00010CF2"
    "\U000118A0-\U000118DF\U0001E900-\U0001E943]+",
    "\\s?[!-/:-~\uFF01-\uFF0F\uFF1A-\uFF5E\u2018-\u201F\u3000-\u3002]+",
    R"(\s+$)",
    "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+",
    R"(\p{N}+)",
};
const char* const kDeepseekCoderPatterns[] = {
    R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", "[\u4E00-\u9FA5\u0800-\u4E00\uAC00-\uD7FF]+",
    R"(\p{N})",
};

// DeepSeek-V3's split (its tokenizer.json's three Split steps; llama.cpp's DEEPSEEK3_LLM, which
// Hunyuan's dense GGUFs, "hunyuan-dense", take too): up to three digits, runs of CJK
// ideographs and kana, then words (one leading ASCII punctuation mark kept on a Latin word),
// punctuation runs with their line breaks, and whitespace.
const char* const kDeepseekV3Patterns[] = {
    R"(\p{N}{1,3})",
    "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+",
    R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)",
};

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
  if (pre == "qwen2" || pre == "deepseek-r1-qwen" || pre == "megrez") {
    p->add_regex(kQwen2Pattern, Kind::kIsolate);
  } else if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3" || pre == "falcon3" ||
             pre == "smaug-bpe" || pre == "pixtral" || pre == "midm-2.0" || pre == "dbrx") {
    p->add_regex(kLlama3Pattern, Kind::kIsolate);
    p->ignore_merges_hint_ = true;  // Llama 3's tokenizer.json sets ignore_merges
  } else if (pre == "glm4" || pre == "chatglm-bpe") {
    // GLM-4 (GLM-4-0414, GLM-Z1, GLM-4.5; "chatglm-bpe": glm-4-9b-chat): llama.cpp's
    // LLAMA_VOCAB_PRE_TYPE_CHATGLM4 in llama-vocab.cpp (llama-cpp-python 0.3.36), Llama 3's
    // pattern. It sets ignore_merges for "glm4", not for "chatglm-bpe". Its null BOS id there is
    // only the default: tokenizer.ggml.bos_token_id, when present, replaces it, and add_bos_token
    // (absent: false) decides, as for any other name.
    p->add_regex(kLlama3Pattern, Kind::kIsolate);
    p->ignore_merges_hint_ = pre == "glm4";
  } else if (pre == "deepseek-llm") {
    for (const char* pat : kDeepseekLlmPatterns) p->add_regex(pat, Kind::kIsolate);
  } else if (pre == "deepseek-v3" || pre == "hunyuan-dense") {
    for (const char* pat : kDeepseekV3Patterns) p->add_regex(pat, Kind::kIsolate);
  } else if (pre == "deepseek-coder") {
    for (const char* pat : kDeepseekCoderPatterns) p->add_regex(pat, Kind::kIsolate);
  } else if (pre == "tekken") {
    p->add_regex(kTekkenPattern, Kind::kIsolate);
    p->ignore_merges_hint_ = true;  // a piece in the vocabulary is one token (tiktoken's rule)
  } else if (pre == "gpt-4o" || pre == "minimax-m2") {
    // llama.cpp sets no ignore_merges for these: the merges decide, as for GPT-2.
    p->add_regex(kO200kPattern, Kind::kIsolate);
  } else if (pre == "smollm" || pre == "starcoder" || pre == "codeshell" || pre == "refact" ||
             pre == "command-r") {  // command-r: Cohere's Command-R / Aya, the same chain
    // Hugging Face: Sequence[Digits(individual_digits), ByteLevel(use_regex)]; llama.cpp
    // splits \p{N} first and then applies the GPT-2 regex, which is the same chain.
    p->add_regex(R"(\p{N})", Kind::kIsolate);
    p->add_regex(kGpt2Pattern, Kind::kIsolate);
  } else if (pre == "gpt-2" || pre == "default" || pre == "exaone4" || pre == "phi-2" ||
             pre.empty()) {
    // exaone4: EXAONE 4.0's GGUFs, phi-2: Phi-2's; llama.cpp gives them the GPT-2 type.
    p->add_regex(kGpt2Pattern, Kind::kIsolate);
  } else {
    throw std::invalid_argument(
        "unsupported tokenizer.ggml.pre '" + pre +
        "' (supported: qwen2, megrez, llama-bpe, falcon3, smaug-bpe, pixtral, "
        "midm-2.0, dbrx, glm4, chatglm-bpe, deepseek-llm, deepseek-coder, deepseek-v3, "
        "hunyuan-dense, tekken, gpt-4o, "
        "minimax-m2, smollm, "
        "starcoder, "
        "refact, command-r, gpt-2, phi-2, exaone4, default)");
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
