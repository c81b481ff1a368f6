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

// Feeds `text` to `sp` cut at `cuts`, concatenating what comes out.
std::pair<std::string, std::string> stream(const std::string& text, std::vector<size_t> cuts,
                                           ReasoningStreamSplitter sp = ReasoningStreamSplitter()) {
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

// --- glm45 (vLLM 0.33's Glm47MoeParser through its reasoning adapter) -------------------------

TEST(Glm45Reasoning, OutputStartsInTheReasoning) {
  // The engine's initial state is REASONING: without </think> everything is reasoning (qwen3:
  // content), text before <think> belongs to it, every <think> is dropped, and the reasoning
  // loses its trailing whitespace (rstrip) but not its leading one.
  auto s = split_reasoning_glm45("\n<think>Let me think.\n</think>\nThe answer.", false);
  EXPECT_EQ(s.reasoning, "\nLet me think.");
  EXPECT_EQ(s.content, "\nThe answer.");
  s = split_reasoning_glm45("no tags at all", false);
  EXPECT_EQ(s.reasoning, "no tags at all");
  EXPECT_EQ(s.content, std::nullopt);
  s = split_reasoning_glm45("<think>only thinking</think>", false);
  EXPECT_EQ(s.reasoning, "only thinking");
  EXPECT_EQ(s.content, std::nullopt);
  s = split_reasoning_glm45("<think> \n</think>", false);
  EXPECT_EQ(s.reasoning, std::nullopt);
  // <tool_call> ends the reasoning too and stays for the tool parser.
  s = split_reasoning_glm45("<think>plan<tool_call>now</tool_call>", false);
  EXPECT_EQ(s.reasoning, "plan");
  EXPECT_EQ(s.content, "<tool_call>now</tool_call>");
  // After the end: a <think> opens reasoning again, a stray </think> is dropped.
  s = split_reasoning_glm45("a</think>b</think>c<think>d</think>e", false);
  EXPECT_EQ(s.reasoning, "ad");
  EXPECT_EQ(s.content, "bce");
  // The prompt closed the reasoning: the output starts in the content.
  s = split_reasoning_glm45("x<think>y</think>z", true);
  EXPECT_EQ(s.reasoning, "y");
  EXPECT_EQ(s.content, "xz");
}

std::pair<std::string, std::string> stream_glm(const std::string& text, std::vector<size_t> cuts,
                                               bool prompt_ended = false) {
  return stream(text, std::move(cuts),
                ReasoningStreamSplitter(ReasoningParserKind::kGlm45, prompt_ended));
}

TEST(Glm45Reasoning, StreamMatchesTheWholeOutputWhereverItIsCut) {
  for (const std::string text :
       {"\n<think>step 1 \n\n</think>\nAnswer: 42", "<think>plan \n<tool_call>now</tool_call>",
        "unfinished  \n ", "<think>a <think>b</think>"}) {
    const ReasoningSplit w = split_reasoning_glm45(text, false);
    for (size_t a = 0; a <= text.size(); ++a)
      for (size_t b = a; b <= text.size(); b += 2) {
        auto [r, c] = stream_glm(text, {a, b});
        EXPECT_EQ(r, w.reasoning.value_or("")) << text << " " << a << "," << b;
        EXPECT_EQ(c, w.content.value_or("")) << text << " " << a << "," << b;
      }
  }
  // Trailing whitespace waits until more reasoning shows it was not the end.
  ReasoningStreamSplitter sp(ReasoningParserKind::kGlm45, false);
  EXPECT_EQ(sp.feed("a \n").first, "a");
  EXPECT_EQ(sp.feed("b").first, " \nb");
  // As vLLM's stream: after the end everything is content (no second reasoning block).
  auto [r, c] = stream_glm("a</think>b<think>c", {});
  EXPECT_EQ(r, "a");
  EXPECT_EQ(c, "b<think>c");
  auto [r2, c2] = stream_glm("<think>x</think>y", {}, true);
  EXPECT_EQ(r2, "");
  EXPECT_EQ(c2, "<think>x</think>y");
}

TEST(Glm45Reasoning, PromptEndsReasoningWithinTheLastTurn) {
  // is_reasoning_end: </think> or <tool_call> after the last <think>, the search stopping at a
  // turn marker (<|assistant|> etc.): an earlier turn's </think> does not count.
  ThinkTags t;
  t.start = 7;
  t.end = 8;
  t.implicit_end = {9};
  t.boundaries = {100, 101};
  EXPECT_TRUE(prompt_ends_reasoning({100, 7, 8}, t));      // enable_thinking false
  EXPECT_FALSE(prompt_ends_reasoning({7, 8, 101}, t));     // <|assistant|> after it
  EXPECT_TRUE(prompt_ends_reasoning({101, 9, 5}, t));      // a <tool_call> ends it
  EXPECT_FALSE(prompt_ends_reasoning({101, 8, 7, 5}, t));  // reopened
  t.end.reset();
  EXPECT_FALSE(prompt_ends_reasoning({8}, t));
  EXPECT_EQ(reasoning_parser_by_name("glm45"), ReasoningParserKind::kGlm45);
  EXPECT_EQ(reasoning_parser_by_name("glm47"), ReasoningParserKind::kGlm45);
  EXPECT_EQ(reasoning_parser_by_name("qwen3"), ReasoningParserKind::kQwen3);
  EXPECT_EQ(reasoning_parser_by_name("deepseek_r1"), std::nullopt);
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
