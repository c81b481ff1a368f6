// encode_bounded: the ids of encode() whenever they fit the budget, false as soon as they cannot,
// and a refusal that costs work proportional to the budget rather than to the text.
#include <gtest/gtest.h>

#include "tok_test_util.h"
#include "tokenizer/bpe.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/unicode.h"

namespace vllm::tok::testing {
namespace {

// At the exact budget the ids equal encode()'s; one below it the text is refused.
void check_at_budget(const Tokenizer& tok, const std::string& text, bool add_special) {
  const auto want = tok.encode(text, add_special);
  std::vector<int32_t> got{-1};
  ASSERT_TRUE(tok.encode_bounded(text, add_special, want.size(), got)) << text;
  EXPECT_EQ(got, want) << text;
  ASSERT_TRUE(tok.encode_bounded(text, add_special, want.size() + 100, got)) << text;
  EXPECT_EQ(got, want) << text;
  if (!want.empty()) {
    EXPECT_FALSE(tok.encode_bounded(text, add_special, want.size() - 1, got)) << text;
    EXPECT_TRUE(got.empty());
  }
}

void check_corpus(const Tokenizer& tok, const std::string& name) {
  const auto cases = read_cases(name);
  ASSERT_GE(cases.size(), 300u);
  for (const auto& c : cases) {
    check_at_budget(tok, c.text, true);
    check_at_budget(tok, c.text, false);
  }
  check_at_budget(tok, big_text(cases), true);
}

TEST(EncodeBounded, Qwen3CorpusEqualsEncode) { check_corpus(qwen3(), "qwen3"); }
TEST(EncodeBounded, SmolLM2CorpusEqualsEncode) { check_corpus(smollm2(), "smollm2"); }

TEST(EncodeBounded, PathologicalInputsEqualEncode) {
  for (const Tokenizer* t : {&qwen3(), &smollm2()}) {
    for (const auto& in : pathological_inputs(64 << 10)) {
      SCOPED_TRACE(in.name);
      check_at_budget(*t, in.text, true);
    }
  }
}

TEST(EncodeBounded, LengthPrecheckIsSound) {
  // Qwen3: its longest token is 128 bytes and it normalizes to NFC.
  EXPECT_EQ(qwen3().max_bytes_per_id(), 128 * nfc_max_shrink());
  EXPECT_GT(smollm2().max_bytes_per_id(), 0u);
  // No text yields fewer ids than the bound promises.
  for (const Tokenizer* t : {&qwen3(), &smollm2()}) {
    const size_t k = t->max_bytes_per_id();
    for (const char* name : {"qwen3", "smollm2"}) {
      for (const auto& c : read_cases(name)) {
        EXPECT_GE(t->encode(c.text, false).size(), (c.text.size() + k - 1) / k) << c.text;
      }
    }
    // Text made of the longest tokens comes closest.
    std::string longest;
    for (int32_t id = 0; id < t->vocab_size(); ++id) {
      if (!t->is_added(id) && t->token_bytes(id).size() > longest.size())
        longest = t->token_bytes(id);
    }
    std::string text;
    for (int i = 0; i < 64; ++i) text += longest + "\n";
    EXPECT_GE(t->encode(text, false).size(), (text.size() + k - 1) / k);
  }
}

TEST(EncodeBounded, HugeTextIsRefusedWithoutBeingRead) {
  const std::string text(8 << 20, 'a');
  for (const Tokenizer* t : {&qwen3(), &smollm2()}) {
    EncodeStats s;
    std::vector<int32_t> out;
    EXPECT_FALSE(t->encode_bounded(text, true, 8192, out, &s));
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(s.pieces, 0u);  // the length pre-check refused it
  }
}

TEST(EncodeBounded, RefusalStopsEarlyBelowThePrecheck) {
  // Texts short enough to pass the length pre-check still stop at the piece or window that
  // passes the budget: the work done is a small fraction of what encoding all of it takes.
  constexpr size_t kBudget = 512;
  for (const Tokenizer* t : {&qwen3(), &smollm2()}) {
    const size_t bytes = t->max_bytes_per_id() * kBudget;
    for (const auto& in : pathological_inputs(bytes)) {
      SCOPED_TRACE(in.name);
      EncodeStats all, bounded;
      const size_t n = t->encode(in.text, false, &all).size();
      if (n <= kBudget) continue;  // e.g. 128 spaces per token: fits
      std::vector<int32_t> out;
      EXPECT_FALSE(t->encode_bounded(in.text, false, kBudget, out, &bounded));
      EXPECT_LE(bounded.pieces, kBudget + 1);
      // The merge work is bounded by the budget: at most one window per id kept, plus one.
      EXPECT_LE(bounded.merge_bytes, (kBudget + 2) * Bpe::kMaxPieceBytes);
      if (all.merge_bytes > 8 * Bpe::kMaxPieceBytes)
        EXPECT_LT(bounded.merge_bytes * 2, all.merge_bytes) << all.merge_bytes;
    }
  }
}

TEST(EncodeBounded, SpecialTokensCountAgainstTheBudget) {
  VocabData v;
  v.model = "gpt2";
  v.pre = "gpt-2";
  for (int b = 0; b < 256; ++b)
    v.tokens.push_back(ByteLevel::get().encode_byte(static_cast<uint8_t>(b)));
  v.tokens.push_back("<s>");
  v.tokens.push_back("</s>");
  v.token_types.assign(256, 1);
  v.token_types.push_back(3);
  v.token_types.push_back(3);
  v.bos_id = 256;
  v.eos_id = 257;
  v.add_bos = v.add_eos = true;
  auto t = Tokenizer::from_vocab(v);
  std::vector<int32_t> out;
  EXPECT_FALSE(t->encode_bounded("", true, 1, out));
  ASSERT_TRUE(t->encode_bounded("", true, 2, out));
  EXPECT_EQ(out, std::vector<int32_t>({256, 257}));
  EXPECT_FALSE(t->encode_bounded("ab", true, 3, out));
  ASSERT_TRUE(t->encode_bounded("ab", true, 4, out));
  EXPECT_EQ(out, t->encode("ab", true));
  ASSERT_TRUE(t->encode_bounded("ab", false, 2, out));
  EXPECT_EQ(out, t->encode("ab", false));
  EXPECT_EQ(t->max_bytes_per_id(), 4u);  // "</s>"
}

TEST(EncodeBounded, NoPrecheckWhenAnAddedTokenSwallowsWhitespace) {
  // An rstrip token eats any run of whitespace after it: no bytes-per-id bound exists, and
  // encode_bounded must still be exact.
  const std::string json = R"({"version": "1.0",
    "added_tokens": [{"id": 3, "content": "<R>", "special": false, "lstrip": false,
      "rstrip": true, "single_word": false, "normalized": false}],
    "normalizer": null,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
    "decoder": {"type": "ByteLevel"},
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "Ġ": 2}, "merges": []}})";
  auto t = Tokenizer::from_json_text(json, "");
  EXPECT_EQ(t->max_bytes_per_id(), 0u);
  const std::string text = "a<R>" + std::string(100000, ' ') + "b";
  const auto want = t->encode(text, false);
  ASSERT_EQ(want.size(), 3u);
  std::vector<int32_t> out;
  ASSERT_TRUE(t->encode_bounded(text, false, 3, out));
  EXPECT_EQ(out, want);
  EXPECT_FALSE(t->encode_bounded(text, false, 2, out));
}

}  // namespace
}  // namespace vllm::tok::testing
