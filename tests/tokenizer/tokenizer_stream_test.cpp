// Streaming: token-by-token detokenization over the whole corpus, and stop strings that span
// tokens.
#include <gtest/gtest.h>

#include "tok_test_util.h"
#include "tokenizer/byte_level.h"

namespace vllm::tok::testing {
namespace {

const std::string kReplacement = "\xEF\xBF\xBD";

void check_stream(const Tokenizer& tok, const std::string& name) {
  const auto cases = read_cases(name);
  ASSERT_GE(cases.size(), 300u);
  size_t held_somewhere = 0;
  for (const auto& c : cases) {
    IncrementalDetokenizer d(tok);
    std::string streamed;
    for (int32_t id : c.ids) {
      const std::string piece = d.step(id);
      if (c.decoded.find(kReplacement) == std::string::npos)
        EXPECT_EQ(piece.find(kReplacement), std::string::npos) << c.text;
      streamed += piece;
      if (d.held_bytes()) ++held_somewhere;
    }
    streamed += d.finish();
    EXPECT_EQ(streamed, c.decoded) << name << ": " << c.text;
    EXPECT_EQ(d.text(), streamed);
  }
  // The corpus has CJK and emoji split across byte-level tokens: holding back must happen.
  EXPECT_GT(held_somewhere, 10u) << name;
}

TEST(IncrementalDetokenizer, Qwen3Corpus) { check_stream(qwen3(), "qwen3"); }
TEST(IncrementalDetokenizer, SmolLM2Corpus) { check_stream(smollm2(), "smollm2"); }

TEST(IncrementalDetokenizer, SkipsSpecialAndRejectsBadIds) {
  const Tokenizer& t = qwen3();
  IncrementalDetokenizer d(t, /*skip_special_tokens=*/true);
  std::string out;
  for (int32_t id : t.encode("<|im_start|>hi<|im_end|>")) out += d.step(id);
  EXPECT_EQ(out + d.finish(), "hi");
  EXPECT_THROW(d.step(t.vocab_size()), std::out_of_range);
}

TEST(IncrementalDetokenizer, LongAdversarialStreamHoldsAtMostOneCharacter) {
  // 200k byte tokens mixing lead bytes, continuation bytes and ASCII: whatever a model emits,
  // the detokenizer holds back at most one incomplete character (3 bytes), so each step's work
  // is bounded by its token's length and a long output costs linear time.
  const Tokenizer& t = qwen3();
  int32_t byte_id[256];
  for (int b = 0; b < 256; ++b) {
    const auto id = t.token_to_id(ByteLevel::get().encode_byte(static_cast<uint8_t>(b)));
    ASSERT_TRUE(id.has_value()) << b;
    byte_id[b] = *id;
  }
  static const uint8_t kBytes[] = {0xE4, 0xB8, 0xAD, 0xF0, 0x9F, 0x98, 0x80, 0xC3, 0xA9,
                                   0x80, 0xBF, 0xFF, 0xED, 0xA0, 'a',  ' ',  0xF4, 0x90};
  std::vector<int32_t> ids;
  uint32_t x = 7;
  for (int i = 0; i < 200000; ++i) {
    x = x * 1103515245u + 12345u;
    ids.push_back(byte_id[kBytes[(x >> 16) % sizeof(kBytes)]]);
  }
  IncrementalDetokenizer d(t);
  std::string streamed;
  size_t most_held = 0;
  for (int32_t id : ids) {
    streamed += d.step(id);
    most_held = std::max(most_held, d.held_bytes());
  }
  streamed += d.finish();
  EXPECT_LE(most_held, 3u);
  EXPECT_GT(most_held, 0u);
  EXPECT_TRUE(streamed == t.decode(ids));
}

TEST(StopStringMatcher, SpansTokensAndHoldsBack) {
  const Tokenizer& t = qwen3();
  const std::string text = "The answer is 42.\nEND OF STORY and more";
  const auto ids = t.encode(text);
  StopStringMatcher m({"END OF STORY", "never"});
  IncrementalDetokenizer d(t);
  std::string out;
  bool stopped = false;
  size_t tokens_used = 0;
  for (int32_t id : ids) {
    ++tokens_used;
    auto r = m.feed(d.step(id));
    out += r.text;
    // Nothing emitted so far may contain the start of the stop string beyond what is settled.
    EXPECT_EQ(out.find("END"), std::string::npos);
    if (r.stopped) {
      stopped = true;
      EXPECT_EQ(r.stop, "END OF STORY");
      break;
    }
  }
  ASSERT_TRUE(stopped);
  EXPECT_EQ(out, "The answer is 42.\n");
  EXPECT_LT(tokens_used, ids.size());
  // The stop string really spanned several tokens.
  EXPECT_GT(t.encode(" OF STORY", false).size(), 1u);
}

TEST(StopStringMatcher, PartialPrefixIsReleasedWhenItCannotMatch) {
  StopStringMatcher m({"abc"}, /*include_stop=*/true);
  EXPECT_EQ(m.feed("xxa").text, "xx");
  EXPECT_EQ(m.feed("b").text, "");
  EXPECT_EQ(m.feed("d").text, "abd");
  auto r = m.feed("zab");
  EXPECT_EQ(r.text, "z");
  r = m.feed("cq");
  EXPECT_TRUE(r.stopped);
  EXPECT_EQ(r.text, "abc");
  EXPECT_TRUE(m.feed("more").text.empty());
  StopStringMatcher m2({"<<END>>"});
  EXPECT_EQ(m2.feed("x<<EN").text, "x");
  EXPECT_EQ(m2.flush(), "<<EN");
}

}  // namespace
}  // namespace vllm::tok::testing
