// Qwen3 reasoning split: the whole-output rules (both tags needed) and the streaming state
// machine, including tags cut across deltas at every possible point.
#include "api/server/reasoning_parser.h"

#include <gtest/gtest.h>

namespace vllm::api {
namespace {

TEST(ReasoningParser, WholeOutputNeedsBothTags) {
  auto s = split_reasoning("<think>plan it</think>The answer.");
  ASSERT_TRUE(s.reasoning && s.content);
  EXPECT_EQ(*s.reasoning, "plan it");
  EXPECT_EQ(*s.content, "The answer.");
  s = split_reasoning("<think>unfinished thought");
  EXPECT_FALSE(s.reasoning);
  EXPECT_EQ(*s.content, "<think>unfinished thought");
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

TEST(ReasoningParser, StreamWithoutTagsIsAllContentAndUnclosedThinkingIsReasoning) {
  auto [r, c] = stream("plain <thin answer", {3, 8});
  EXPECT_EQ(r, "");
  EXPECT_EQ(c, "plain <thin answer");
  auto [r2, c2] = stream("<think>still thinking", {2, 9});
  EXPECT_EQ(r2, "still thinking");
  EXPECT_EQ(c2, "");
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
