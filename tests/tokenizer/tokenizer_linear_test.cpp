// Tokenization work is linear in the input whatever it holds: on 1, 2 and 8 MB pathological inputs
// (one huge pre-token, or millions of one-byte ones) no BPE merge loop is longer than the
// window, and the bytes merged and heap steps taken per input byte are bounded by constants
// and do not grow with the input. Counted work, not time: timed unit tests are flaky on a
// shared machine; the speed is in bench/bench_tokenizer.cpp.
#include <gtest/gtest.h>

#include "tok_test_util.h"
#include "tokenizer/bpe.h"
#include "tokenizer/unicode.h"

namespace vllm::tok::testing {
namespace {

constexpr size_t kMB = 1 << 20;

void check_linear(const Tokenizer& tok, const char* vocab) {
  const auto small = pathological_inputs(kMB);
  const auto large = pathological_inputs(2 * kMB);
  ASSERT_EQ(small.size(), large.size());
  for (size_t k = 0; k < small.size(); ++k) {
    EncodeStats s1, s2;
    const auto ids1 = tok.encode(small[k].text, false, &s1);
    const auto ids2 = tok.encode(large[k].text, false, &s2);
    const double n1 = static_cast<double>(small[k].text.size());
    const double n2 = static_cast<double>(large[k].text.size());
    SCOPED_TRACE(std::string(vocab) + " / " + small[k].name);
    for (const EncodeStats* s : {&s1, &s2}) {
      // One merge loop over n bytes costs O(n log n); bounding n makes the total linear.
      EXPECT_LE(s->max_merge_bytes, Bpe::kMaxPieceBytes);
      // Windows overlap by at most kMaxPieceBytes - kCommitBytes plus one token.
      EXPECT_LE(static_cast<double>(s->merge_bytes), 2.0 * (s == &s1 ? n1 : n2));
      EXPECT_LE(static_cast<double>(s->merge_steps), 6.0 * (s == &s1 ? n1 : n2));
    }
    // Work per byte does not grow with the input (the piece cache only lowers the second).
    EXPECT_LE(static_cast<double>(s2.merge_steps) / n2,
              1.25 * static_cast<double>(s1.merge_steps) / n1 + 1e-3);
    EXPECT_GT(ids2.size(), ids1.size());
    // Windowing loses no bytes: the ids spell the (normalized) input.
    if (utf8_is_valid(large[k].text)) {
      std::string spelled;
      for (int32_t id : ids2) spelled += tok.token_bytes(id);
      const std::string want = &tok == &qwen3() ? nfc_normalize(large[k].text) : large[k].text;
      EXPECT_TRUE(spelled == want) << "ids do not spell the input";
    }
  }
}

TEST(TokenizerLinear, Qwen3PathologicalInputs) { check_linear(qwen3(), "qwen3"); }
TEST(TokenizerLinear, SmolLM2PathologicalInputs) { check_linear(smollm2(), "smollm2"); }

TEST(TokenizerLinear, EightMegabytesOfOneLetter) {
  // The input that took ~30 s: one 8 MB pre-token.
  const std::string text(8 * kMB, 'a');
  for (const Tokenizer* t : {&qwen3(), &smollm2()}) {
    EncodeStats s;
    const auto ids = t->encode(text, false, &s);
    EXPECT_EQ(s.pieces, 1u);
    EXPECT_LE(s.max_merge_bytes, Bpe::kMaxPieceBytes);
    EXPECT_LE(s.merge_bytes, 2 * text.size());
    size_t spelled = 0;
    for (int32_t id : ids) spelled += t->token_bytes(id).size();
    EXPECT_EQ(spelled, text.size());
  }
}

TEST(TokenizerLinear, ShortPiecesAreMergedWhole) {
  // The bound on a merge loop is what makes the work linear; it must stay a small constant.
  EXPECT_LE(Bpe::kMaxPieceBytes, 4096u);
  EXPECT_LT(Bpe::kCommitBytes, Bpe::kMaxPieceBytes);
  // Below the window nothing changes: one merge loop over the whole piece.
  for (size_t n : {size_t{200}, Bpe::kMaxPieceBytes}) {
    EncodeStats s;
    qwen3().encode(std::string(n, 'q'), false, &s);
    EXPECT_EQ(s.merge_loops, 1u);
    EXPECT_EQ(s.max_merge_bytes, n);
  }
  EncodeStats s;
  qwen3().encode(std::string(Bpe::kMaxPieceBytes + 1, 'q'), false, &s);
  EXPECT_GE(s.merge_loops, 2u);
  EXPECT_LE(s.max_merge_bytes, Bpe::kMaxPieceBytes);
}

}  // namespace
}  // namespace vllm::tok::testing
