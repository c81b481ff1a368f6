// Exactness against Hugging Face tokenizers: every corpus string and the 1 MB mixed text,
// for the Qwen3 tokenizer.json fixture and the SmolLM2 GGUF vocabulary.
#include <gtest/gtest.h>

#include <cstring>

#include "tok_test_util.h"

namespace vllm::tok::testing {
namespace {

void check_corpus(const Tokenizer& tok, const std::string& name) {
  const auto cases = read_cases(name);
  ASSERT_GE(cases.size(), 300u) << "golden file missing or short: " << name;
  int roundtrips = 0;
  for (const auto& c : cases) {
    EXPECT_EQ(tok.encode(c.text), c.ids) << name << " text: " << c.text;
    EXPECT_EQ(tok.decode(c.ids), c.decoded) << name << " text: " << c.text;
    EXPECT_EQ(tok.decode(c.ids, /*skip_special_tokens=*/true), c.decoded_skip) << c.text;
    if (c.nfc && c.decoded == c.text) {
      EXPECT_EQ(tok.decode(tok.encode(c.text)), c.text);
      ++roundtrips;
    }
  }
  // Only non-NFC inputs (Qwen3) and bytes missing from the vocabulary (SmolLM2) may not
  // round-trip; a broken decoder would take this far below.
  EXPECT_GE(roundtrips, static_cast<int>(cases.size()) - 16) << name;
}

void check_big(const Tokenizer& tok, const std::string& name) {
  const auto cases = read_cases(name);
  ASSERT_FALSE(cases.empty());
  const std::string text = big_text(cases);
  const auto meta = nlohmann::json::parse(read_binary(golden_dir() + "/big.json"));
  ASSERT_EQ(text.size(), meta.at("bytes").get<size_t>());
  const std::string bin = read_binary(golden_dir() + "/" + name + "_big.bin");
  ASSERT_EQ(bin.size() % 4, 0u);
  std::vector<int32_t> want(bin.size() / 4);
  std::memcpy(want.data(), bin.data(), bin.size());  // little-endian host
  const auto got = tok.encode(text);
  ASSERT_EQ(got.size(), want.size());
  size_t first_diff = got.size();
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) {
      first_diff = i;
      break;
    }
  }
  EXPECT_EQ(first_diff, got.size()) << "first mismatch at id index " << first_diff;
}

TEST(TokenizerGolden, Qwen3Corpus) { check_corpus(qwen3(), "qwen3"); }
TEST(TokenizerGolden, SmolLM2Corpus) { check_corpus(smollm2(), "smollm2"); }
TEST(TokenizerGolden, Qwen3BigText) { check_big(qwen3(), "qwen3"); }
TEST(TokenizerGolden, SmolLM2BigText) { check_big(smollm2(), "smollm2"); }

}  // namespace
}  // namespace vllm::tok::testing
