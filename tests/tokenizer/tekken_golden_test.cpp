// Mistral's Tekken tokenizer (Mistral Nemo, Mistral Small 3, Ministral, Devstral) in both
// forms users download, against Hugging Face `tokenizers` and mistral_common on the real
// vocabulary (mistral_common's tekken_240718.json): the tokenizer.json form and the GGUF form
// (tokenizer.ggml.pre "tekken"). Files: tools/make_tekken_tokenizer.py (VLLM_TEKKEN_DIR);
// goldens: tools/make_tekken_goldens.py.
#include <gtest/gtest.h>

#include <cstring>

#include "tok_test_util.h"

namespace vllm::tok::testing {
namespace {

std::string tekken_dir() { return env_or_cache("VLLM_TEKKEN_DIR", "vocab"); }

const Tokenizer& tekken_hf() {
  static std::unique_ptr<Tokenizer> t = Tokenizer::from_files(
      tekken_dir() + "/tekken/tokenizer.json", tekken_dir() + "/tekken/tokenizer_config.json");
  return *t;
}

const Tokenizer& tekken_gguf() {
  static std::unique_ptr<Tokenizer> t =
      model::load_tokenizer(tekken_dir() + "/ggml-vocab-tekken.gguf");
  return *t;
}

struct TekkenCase {
  std::string text, decoded, decoded_skip;
  std::vector<int32_t> ids, ids_plain;
};

std::vector<TekkenCase> tekken_cases() {
  std::ifstream f(golden_dir() + "/tekken.jsonl");
  std::vector<TekkenCase> out;
  std::string line;
  while (std::getline(f, line)) {
    const auto j = nlohmann::json::parse(line);
    out.push_back({j.at("text").get<std::string>(), j.at("decoded").get<std::string>(),
                   j.at("decoded_skip").get<std::string>(), j.at("ids").get<std::vector<int32_t>>(),
                   j.at("ids_plain").get<std::vector<int32_t>>()});
  }
  return out;
}

void check_form(const Tokenizer& tok, const char* form) {
  SCOPED_TRACE(form);
  EXPECT_EQ(tok.vocab_size(), 131072);
  EXPECT_TRUE(tok.add_bos());
  EXPECT_EQ(tok.bos_id(), 1);
  const auto cases = tekken_cases();
  ASSERT_GE(cases.size(), 400u) << "golden file missing or short";
  for (const auto& c : cases) {
    EXPECT_EQ(tok.encode(c.text), c.ids) << "text: " << c.text;
    EXPECT_EQ(tok.encode(c.text, /*add_special_tokens=*/false), c.ids_plain) << c.text;
    std::vector<int32_t> bounded;
    EXPECT_TRUE(tok.encode_bounded(c.text, true, c.ids.size(), bounded));
    EXPECT_EQ(bounded, c.ids) << c.text;
    EXPECT_FALSE(tok.encode_bounded(c.text, true, c.ids.size() - 1, bounded)) << c.text;
    EXPECT_EQ(tok.decode(c.ids), c.decoded) << c.text;
    EXPECT_EQ(tok.decode(c.ids, /*skip_special_tokens=*/true), c.decoded_skip) << c.text;
  }
}

TEST(TekkenTokenizer, HuggingFaceFormMatchesTokenizersAndMistralCommon) {
  check_form(tekken_hf(), "tokenizer.json");
}

// llama.cpp's own tokenization of this file differs on 6 of the texts (Devanagari, Tamil and
// Thai with combining marks: its rewritten pattern leaves \p{M} out); the ids here are
// mistral_common's, which the models were trained on.
TEST(TekkenTokenizer, GgufFormMatchesMistralCommon) { check_form(tekken_gguf(), "gguf"); }

TEST(TekkenTokenizer, BigTextMatchesMistralCommon) {
  std::vector<GoldenCase> cases;
  for (const auto& c : tekken_cases()) cases.push_back({c.text, "", "", {}, true});
  const std::string text = big_text(cases, 1u << 18);
  const auto meta = nlohmann::json::parse(read_binary(golden_dir() + "/tekken.json"));
  ASSERT_EQ(text.size(), meta.at("bytes").get<size_t>());
  const std::string bin = read_binary(golden_dir() + "/tekken_big.bin");
  std::vector<int32_t> want(bin.size() / 4);
  std::memcpy(want.data(), bin.data(), bin.size());  // little-endian host
  for (const Tokenizer* tok : {&tekken_hf(), &tekken_gguf()}) {
    const auto got = tok->encode(text, false);
    ASSERT_EQ(got.size(), want.size());
    size_t first_diff = got.size();
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i]) {
        first_diff = i;
        break;
      }
    EXPECT_EQ(first_diff, got.size()) << "first mismatch at id index " << first_diff;
  }
}

// Streaming the ids gives back every byte of the text, in both forms.
TEST(TekkenTokenizer, StreamingGivesBackTheText) {
  const std::string text = "XMLHttpRequest naïve ÉCOLE\n  def f(): return 1 // done";
  for (const Tokenizer* tok : {&tekken_hf(), &tekken_gguf()}) {
    IncrementalDetokenizer d(*tok);
    std::string streamed;
    for (int32_t id : tok->encode(text, false)) streamed += d.step(id);
    streamed += d.finish();
    EXPECT_EQ(streamed, text);
  }
}

}  // namespace
}  // namespace vllm::tok::testing
