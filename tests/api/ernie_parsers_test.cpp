// ERNIE 4.5's parsers: --tool-call-parser ernie45 (src/api/server/ernie_tool_parser.h) and
// --reasoning-parser ernie45 (reasoning_parser.h), alone and together as the chat serving
// composes them (parse_chat_output, serving.h).
//
// The gate: tests/golden/tool_parsers/ernie45.json holds what vLLM 0.33 itself returns for 36
// outputs under four configurations (the tool parser alone, both parsers, the reasoning parser
// alone, both after a prompt that closed the reasoning), whole and streamed one token per delta
// (tools/make_ernie45_parser_goldens.py runs vLLM's own parsers). Whole responses must equal
// vLLM's. Streams, cut at every point and in random pieces, must reassemble to the whole
// response but for two gaps vLLM's stream has too (each checked for its exact shape); under a
// prompt that closed the reasoning (all content, which vLLM's whole response ignores) their calls
// must be vLLM's stream's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "api/server/ernie_tool_parser.h"
#include "parser_goldens.h"

namespace vllm::api {
namespace {

using namespace goldens;

const ojson& golden() { return cached("ernie45.json"); }

Composed config_of(const ojson& c) {
  return compose(c["reasoning_parser"], ojson::object(), c["prompt"].get<std::string>(),
                 c["tool_parser"], golden()["tools"], golden()["tags"]);
}

std::string label(const ojson& c) {
  return c["name"].get<std::string>() + " / " + c["reasoning_parser"].dump() + " + " +
         c["tool_parser"].dump() + (config_of(c).thought ? " closed" : "");
}

TEST(Ernie45Golden, WholeResponsesAreVllms) {
  const ojson& g = golden();
  ASSERT_EQ(g["cases"].size(), 144u);
  const auto id_of = [&](std::string_view s) { return id_in(g["tags"], s); };
  for (const auto& c : g["cases"]) {
    ASSERT_FALSE(c["whole"].contains("raises")) << label(c);
    const Composed k = config_of(c);
    const std::string text = c["text"].get<std::string>();
    expect_whole(whole(k, text), c["whole"], label(c));
    if (!c["whole"].contains("reasoning_tokens")) continue;
    EXPECT_EQ(count_reasoning_tokens(*k.reasoning, think_tags(id_of, *k.reasoning),
                                     ids(text, g["tags"]), false),
              c["whole"]["reasoning_tokens"].get<int64_t>())
        << label(c);
  }
}

TEST(Ernie45Golden, StreamsReassembleToTheWholeResponse) {
  const ojson& g = golden();
  int gaps = 0, closed = 0;
  for (const auto& c : g["cases"]) {
    const Composed k = config_of(c);
    const std::string name = c["name"].get<std::string>();
    const std::string text = c["text"].get<std::string>();
    const Result w = whole(k, text);
    size_t n = 0;
    for (const auto& pieces : chunkings(text, g["tags"], 11 + n, true)) {
      const std::string at = label(c) + " cut " + std::to_string(n++);
      const Streamed s = stream(k, pieces);
      if (k.thought) {
        // The prompt closed the reasoning: vLLM's stream is all content; its calls are these.
        EXPECT_EQ(s.reasoning, "") << at;
        EXPECT_EQ(s.calls, calls_of(c["stream"]["tool_calls"])) << at;
        continue;
      }
      EXPECT_EQ(s.calls, w.calls) << at;
      std::string want_reasoning = w.reasoning.value_or(""), want_content = w.content.value_or("");
      if (k.reasoning && name == "text_before_think") {
        // The stream cannot drop what came before a <think> it has not seen yet (vLLM's
        // neither): that text is reasoning there.
        want_reasoning = "x" + want_reasoning;
      } else if (k.reasoning && name == "response_without_end") {
        // The whitespace and the <response> went out dropped before it was clear that no
        // </response> follows (vLLM's stream drops them too).
        want_content = want_content.substr(std::string("\n\n<response>").size());
      }
      EXPECT_EQ(s.reasoning, want_reasoning) << at;
      EXPECT_EQ(s.content, want_content) << at;
    }
    gaps += k.reasoning && !k.thought &&
            (name == "text_before_think" || name == "response_without_end");
    closed += k.thought;
  }
  EXPECT_EQ(gaps, 4);
  EXPECT_EQ(closed, 36);
}

TEST(Ernie45, NamesAndRefusalsOfUnreadableCalls) {
  EXPECT_EQ(tool_parser_by_name("ernie45"), ToolParserKind::kErnie45);
  EXPECT_EQ(reasoning_parser_by_name("ernie45"), ReasoningParserKind::kErnie45);
  // A hostile output: many openers and braces without a closing tag stays linear and content.
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "<tool_call>{}}";
  ToolParserOptions o;
  const ExtractedToolCalls r = extract_tool_calls(ToolParserKind::kErnie45, text, o);
  EXPECT_TRUE(r.tools_called);
  EXPECT_TRUE(r.calls.empty());
  EXPECT_FALSE(r.content.has_value());
}

}  // namespace
}  // namespace vllm::api
