// Streaming: token-by-token detokenization over the whole corpus, and stop strings that span
// tokens.
#include <gtest/gtest.h>

#include "tok_test_util.h"

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
