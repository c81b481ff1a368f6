// The <think> splits worked by hand (tests/api/think_parsers_test.cpp and minimax_parsers_test.cpp
// hold vLLM 0.33's own answers): deepseek_r1's whole-output rules (str.partition on the tags),
// qwen3's and glm45's engine rules, the streaming state machines including tags cut across
// deltas at every possible point, and is_reasoning_end over the prompt.
#include "api/server/reasoning_parser.h"

#include <gtest/gtest.h>

namespace vllm::api {
namespace {

TEST(ReasoningParser, DeepseekR1WholeOutputIsPartitionedOnTheTags) {
  auto s = split_reasoning("<think>plan it</think>The answer.");
  EXPECT_EQ(s.reasoning, "plan it");
  EXPECT_EQ(s.content, "The answer.");
  // No end tag: all reasoning (R1's template puts <think> in the prompt).
  s = split_reasoning("<think>unfinished thought");
  EXPECT_EQ(s.reasoning, "unfinished thought");
  EXPECT_EQ(s.content, std::nullopt);
  s = split_reasoning("plan it</think>The answer.");
  EXPECT_EQ(s.reasoning, "plan it");
  EXPECT_EQ(s.content, "The answer.");
  s = split_reasoning("</think>{}");
  EXPECT_EQ(s.reasoning, "");  // an empty reasoning is "", not null
  EXPECT_EQ(s.content, "{}");
  s = split_reasoning("");
  EXPECT_EQ(s.reasoning, "");
  EXPECT_EQ(s.content, std::nullopt);
  // Text before the first <think> is dropped, even when that <think> follows the end tag.
  s = split_reasoning("Hmm <think>plan</think>x");
  EXPECT_EQ(s.reasoning, "plan");
  EXPECT_EQ(s.content, "x");
  s = split_reasoning("a</think>b<think>c</think>d");
  EXPECT_EQ(s.reasoning, "c");
  EXPECT_EQ(s.content, "d");
  s = split_reasoning("<think>only thinking</think>");
  EXPECT_EQ(s.reasoning, "only thinking");
  EXPECT_FALSE(s.content);  // empty content is null, as vLLM returns
}

TEST(ReasoningParser, Qwen3WholeOutputStartsInTheReasoning) {
  auto s = split_reasoning_qwen3("no tags at all", false);
  EXPECT_EQ(s.reasoning, "no tags at all");
  EXPECT_EQ(s.content, std::nullopt);
  // Every <think> in the reasoning dropped, trailing whitespace kept (glm45 strips it).
  s = split_reasoning_qwen3("Hmm <think>a<think>b \n</think>\n\nx", false);
  EXPECT_EQ(s.reasoning, "Hmm ab \n");
  EXPECT_EQ(s.content, "\n\nx");
  // After the end a </think> is dropped and a <think> is text (glm45 reopens the reasoning).
  s = split_reasoning_qwen3("a</think>b<think>c</think>d", false);
  EXPECT_EQ(s.reasoning, "a");
  EXPECT_EQ(s.content, "b<think>cd");
  // <tool_call> ends the reasoning and stays.
  s = split_reasoning_qwen3("plan <tool_call>{}</tool_call>", false);
  EXPECT_EQ(s.reasoning, "plan ");
  EXPECT_EQ(s.content, "<tool_call>{}</tool_call>");
  // The prompt closed it: content, end tags dropped; "</think>" alone is nothing at all.
  s = split_reasoning_qwen3("x</think>y", true);
  EXPECT_EQ(s.reasoning, std::nullopt);
  EXPECT_EQ(s.content, "xy");
  s = split_reasoning_qwen3("</think>", false);
  EXPECT_EQ(s.reasoning, std::nullopt);
  EXPECT_EQ(s.content, std::nullopt);
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
  // As vLLM's deepseek_r1 stream: no <think> generated means it was in the prompt.
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
  EXPECT_EQ(reasoning_parser_by_name("granite"), ReasoningParserKind::kGranite);
  EXPECT_EQ(reasoning_parser_by_name("granite4"), std::nullopt);  // not implemented here
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
