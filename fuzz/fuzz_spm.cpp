// libFuzzer target: SentencePiece-style encode / decode of arbitrary bytes with Llama 2's
// vocabulary, as GGUF (scores, llama.cpp's rule) and as tokenizer.json (merges, Hugging Face's
// legacy form) — scripts/fetch_vocabs.sh and tools/make_spm_tokenizer_json.py put them in the
// cache (VLLM_SPM_VOCAB, VLLM_SPM_HF). Checks, for each: the ids spell the text after the one
// space put first (for text without added tokens or a literal "▁") (byte fallback loses no byte,
// valid UTF-8 or not), the budgeted encoder gives the same ids and refuses one id short, and the
// streamed text equals decode() but for the one leading space decode() drops.
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "model/tokenizer_loader.h"
#include "tokenizer/tokenizer.h"

namespace {

std::string cache_path(const char* env, const char* rest) {
  if (const char* e = std::getenv(env); e && *e) return e;
  const char* home = std::getenv("HOME");
  return std::string(home ? home : "/root") + "/.cache/vllm-cpp/vocab" + rest;
}

const vllm::tok::Tokenizer& gguf_form() {
  static const auto t =
      vllm::model::load_tokenizer(cache_path("VLLM_SPM_VOCAB", "/ggml-vocab-llama-spm.gguf"));
  return *t;
}

const vllm::tok::Tokenizer& json_form() {
  static const std::string dir = cache_path("VLLM_SPM_HF", "") + "/llama-legacy";
  static const auto t =
      vllm::tok::Tokenizer::from_files(dir + "/tokenizer.json", dir + "/tokenizer_config.json");
  return *t;
}

void check(const vllm::tok::Tokenizer& t, std::string_view text) {
  const std::vector<int32_t> ids = t.encode(text, false);
  std::string spelled, streamed;
  vllm::tok::IncrementalDetokenizer d(t);
  for (int32_t id : ids) {
    spelled += t.token_bytes(id);
    streamed += d.step(id);
  }
  streamed += d.finish();
  // Added tokens (<s>, </s>, <unk>) in the text are matched whole and followed by a space.
  // A literal "▁" in the text is SentencePiece's own space and decodes as one.
  const bool plain = text.find('<') == std::string_view::npos &&
                     text.find("\xE2\x96\x81") == std::string_view::npos;
  if (plain && !text.empty() && spelled != " " + std::string(text)) std::abort();
  const std::string whole = t.decode(ids);
  if (!(whole == streamed ||
        (!streamed.empty() && streamed[0] == ' ' && whole == streamed.substr(1))))
    std::abort();
  std::vector<int32_t> bounded;
  if (!t.encode_bounded(text, false, ids.size(), bounded) || bounded != ids) std::abort();
  if (!ids.empty() && t.encode_bounded(text, false, ids.size() - 1, bounded)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  check(gguf_form(), text);
  check(json_form(), text);
  return 0;
}
