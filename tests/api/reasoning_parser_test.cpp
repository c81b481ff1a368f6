// Qwen3 reasoning split as current vLLM's Qwen3ReasoningParser: the whole-output rules (the
// end tag decides; the start tag may be in the prompt), the streaming state machine including
// tags cut across deltas at every possible point, and is_reasoning_end over the prompt.
#include "api/server/reasoning_parser.h"

#include <gtest/gtest.h>

namespace vllm::api {
namespace {

TEST(ReasoningParser, WholeOutputIsSplitAtTheEndTag) {
  auto s = split_reasoning("<think>plan it</think>The answer.");
  ASSERT_TRUE(s.reasoning && s.content);
  EXPECT_EQ(*s.reasoning, "plan it");
  EXPECT_EQ(*s.content, "The answer.");
  s = split_reasoning("<think>unfinished thought");
  EXPECT_FALSE(s.reasoning);
  EXPECT_EQ(*s.content, "<think>unfinished thought");
  // Qwen3-Thinking-2507: <think> is in the prompt, the output only closes it.
  s = split_reasoning("plan it</think>The answer.");
  ASSERT_TRUE(s.reasoning && s.content);
  EXPECT_EQ(*s.reasoning, "plan it");
  EXPECT_EQ(*s.content, "The answer.");
  s = split_reasoning("</think>{}");
  EXPECT_EQ(*s.reasoning, "");
  EXPECT_EQ(*s.content, "{}");
  s = split_reasoning("no tags at all");
  EXPECT_FALSE(s.reasoning);
  EXPECT_EQ(*s.content, "no tags at all");
  s = split_reasoning("<think>only thinking</think>");
  EXPECT_EQ(*s.reasoning, "only thinking");
  EXPECT_FALSE(s.content);  // empty content is null, as vLLM returns
}

// Feeds `text` cut at `cut`, concatenating what comes out.
std::pair<std::string, std::string> stream(const std::string& text, std::vector<size_t> cuts) {
  ReasoningStreamSplitter sp;
  std::string r, c;
  size_t at = 0;
  cuts.push_back(text.size());
  for (size_t cut : cuts) {
    auto [dr, dc] = sp.feed(text.substr(at, cut - at));
    r += dr;
    c += dc;
    at = cut;
  }
  auto [fr, fc] = sp.finish();
  return {r + fr, c + fc};
}

TEST(ReasoningParser, StreamSplitsAtTagsWhereverTheDeltasAreCut) {
  const std::string text = "<think>step 1, step 2</think>\n\nFinal answer: 42";
  for (size_t a = 0; a <= text.size(); ++a)
    for (size_t b = a; b <= text.size(); b += 3) {
      auto [r, c] = stream(text, {a, b});
      EXPECT_EQ(r, "step 1, step 2") << a << "," << b;
      EXPECT_EQ(c, "\n\nFinal answer: 42") << a << "," << b;
    }
}

TEST(ReasoningParser, StreamIsReasoningUntilTheEndTagUnlessThePromptClosedIt) {
  // As vLLM's streaming Qwen3 parser: no <think> generated means it was in the prompt.
  auto [r, c] = stream("plain <thin answer", {3, 8});
  EXPECT_EQ(r, "plain <thin answer");
  EXPECT_EQ(c, "");
  auto [r2, c2] = stream("<think>still thinking", {2, 9});
  EXPECT_EQ(r2, "still thinking");
  EXPECT_EQ(c2, "");
  const std::string text = "step one</think>{\"a\": 1}";
  for (size_t a = 0; a <= text.size(); ++a) {
    auto [r3, c3] = stream(text, {a});
    EXPECT_EQ(r3, "step one") << a;
    EXPECT_EQ(c3, "{\"a\": 1}") << a;
  }
  // enable_thinking false: the prompt ends with an empty <think></think>; all is content.
  ReasoningStreamSplitter sp(true);
  auto [r4, c4] = sp.feed("<think>x</think>y");
  EXPECT_EQ(r4, "");
  EXPECT_EQ(c4, "<think>x</think>y");
}

TEST(ReasoningParser, PromptEndsReasoningWhenItsLastThinkTagIsTheEndTag) {
  const int32_t S = 7, E = 8;
  EXPECT_TRUE(prompt_ends_reasoning({1, S, 2, E, 3}, S, E));
  EXPECT_FALSE(prompt_ends_reasoning({1, S, 2, E, 3, S, 4}, S, E));
  EXPECT_FALSE(prompt_ends_reasoning({1, 2, 3}, S, E));
  EXPECT_TRUE(prompt_ends_reasoning({E}, std::nullopt, E));
  EXPECT_FALSE(prompt_ends_reasoning({E}, S, std::nullopt));
}

TEST(ReasoningParser, TagOnlyDeltaYieldsNothing) {
  ReasoningStreamSplitter sp;
  auto [r, c] = sp.feed("<think>");
  EXPECT_EQ(r, "");
  EXPECT_EQ(c, "");
  auto [r2, c2] = sp.feed("x");
  EXPECT_EQ(r2, "x");
  auto [r3, c3] = sp.feed("</think>");
  EXPECT_EQ(r3 + c3, "");
}

}  // namespace
}  // namespace vllm::api
