// MiniMax-M2's parsers through the chat serving path (prepare_chat, Generation over AsyncEngine),
// without a MiniMax-M2 model: the tiny Qwen3 is made to write MiniMax-M2 text by a regex grammar
// (the parsers read text, so ordinary tokens spelling the tags read the same as MiniMax-M2's own
// tokens), with ServingContext::reasoning set as `--reasoning-parser minimax_m2` /
// `minimax_m2_append_think` sets it and `--tool-call-parser minimax_m2` for tool_choice auto.
// Checks the whole message, that the stream's deltas reassemble to it, and finish_reason.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "api/llm.h"
#include "api/server/request_inputs.h"
#include "api/server/serving.h"
#include "forced_output_serving.h"

namespace vllm::api {
namespace {

using nlohmann::json;

const std::string kText =
    "Need the weather.\n</think>\n\nSure.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n"
    "<parameter name=\"city\">Paris</parameter>\n<parameter name=\"days\">3</parameter>\n"
    "</invoke>\n</minimax:tool_call>";

const ojson& tools() {
  static const ojson t = {
      {"tools",
       {{{"type", "function"},
         {"function",
          {{"name", "get_weather"},
           {"parameters",
            {{"type", "object"},
             {"properties",
              {{"city", {{"type", "string"}}}, {"days", {{"type", "integer"}}}}}}}}}}}},
      {"tool_choice", "auto"}};
  return t;
}

class MinimaxServing : public testing::ForcedOutputServing {
 protected:
  // A chat request whose output is `text` (forced by the grammar), served with `reasoning`.
  static std::shared_ptr<Generation> run(ReasoningParserKind reasoning, const std::string& text,
                                         bool stream, const ojson& extra = ojson::object()) {
    ctx_->reasoning = reasoning;
    ojson body = {{"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}},
                  {"max_tokens", 400},
                  {"stream", stream},
                  {"structured_outputs", {{"regex", testing::regex_literal(text)}}}};
    for (auto& [k, v] : extra.items()) body[k] = v;
    InputOptions io;
    io.max_model_len = engine_->config().max_model_len;
    io.reasoning_parser = reasoning;
    io.auto_tool_parser = ToolParserKind::kMinimaxM2;
    GenerationOptions options;
    {
      ChatRequest r = parse_chat_request(body);
      options = prepare_chat(*llm_, r, io).options;
      // As vLLM's engine-based parsers ask (adjust_request); append_think alone does not.
      if (reasoning == ReasoningParserKind::kMinimaxM2 || extra.contains("tools")) {
        EXPECT_FALSE(r.sampling.skip_special_tokens);
      }
    }
    // The grammar that writes the text must hold from the first token, not (as it would with a
    // reasoning parser) only after </think>: the engine's request is prepared without one (the
    // options, how the output is read, are those prepared with it).
    io.reasoning_parser.reset();
    ChatRequest r = parse_chat_request(body);
    PreparedInputs in = prepare_chat(*llm_, r, io);
    return Generation::start(*ctx_, Generation::Kind::kChat, r, std::move(in.prompts),
                             std::move(options));
  }
};

TEST_F(MinimaxServing, ReasoningAndToolCalls) {
  json whole = run(ReasoningParserKind::kMinimaxM2, kText, false, tools())->collect();
  const json& m = whole["choices"][0]["message"];
  EXPECT_EQ(m["reasoning"], "Need the weather.") << whole.dump();
  EXPECT_EQ(m["content"], "Sure.") << whole.dump();
  ASSERT_EQ(m["tool_calls"].size(), 1u) << whole.dump();
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], R"({"city": "Paris", "days": 3})");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "tool_calls");
  std::string finish;
  const json s = streamed(run(ReasoningParserKind::kMinimaxM2, kText, true, tools()), finish);
  EXPECT_EQ(s["reasoning"], m["reasoning"]);
  EXPECT_EQ(s["content"], "\n\nSure.");  // the whitespace before the first word, as vLLM's
  ASSERT_EQ(s["calls"].size(), 1u) << s.dump();
  EXPECT_EQ(s["calls"][0]["name"], "get_weather");
  EXPECT_EQ(s["calls"][0]["arguments"], m["tool_calls"][0]["function"]["arguments"]);
  EXPECT_EQ(finish, "tool_calls");
}

TEST_F(MinimaxServing, AppendThinkKeepsTheThinkingInTheContent) {
  // With the tool parser (a call made): "<think>" put back, </think> dropped by the tool parser
  // (vLLM's composition), the content before the call, stripped.
  json whole = run(ReasoningParserKind::kMinimaxM2AppendThink, kText, false, tools())->collect();
  const json& m = whole["choices"][0]["message"];
  EXPECT_TRUE(m["reasoning"].is_null()) << whole.dump();
  EXPECT_EQ(m["content"], "<think>Need the weather.\n\n\nSure.") << whole.dump();
  ASSERT_EQ(m["tool_calls"].size(), 1u);
  std::string finish;
  json s = streamed(run(ReasoningParserKind::kMinimaxM2AppendThink, kText, true, tools()), finish);
  EXPECT_TRUE(s["reasoning"].is_null());
  EXPECT_EQ(s["content"], m["content"]);
  EXPECT_EQ(s["calls"][0]["arguments"], m["tool_calls"][0]["function"]["arguments"]);
  EXPECT_EQ(finish, "tool_calls");
  // Without tools in the request: the output as written, after "<think>".
  const std::string answer = "Plan.\n</think>\n\nHello.";
  whole = run(ReasoningParserKind::kMinimaxM2AppendThink, answer, false)->collect();
  EXPECT_EQ(whole["choices"][0]["message"]["content"], "<think>" + answer) << whole.dump();
  s = streamed(run(ReasoningParserKind::kMinimaxM2AppendThink, answer, true), finish);
  EXPECT_EQ(s["content"], "<think>" + answer);
  EXPECT_EQ(finish, "stop");
}

TEST_F(MinimaxServing, ReasoningWithoutTools) {
  const std::string answer = "Plan.  \n</think>\n\nHello.";
  json whole = run(ReasoningParserKind::kMinimaxM2, answer, false)->collect();
  const json& m = whole["choices"][0]["message"];
  EXPECT_EQ(m["reasoning"], "Plan.") << whole.dump();
  EXPECT_EQ(m["content"], "\n\nHello.");
  std::string finish;
  const json s = streamed(run(ReasoningParserKind::kMinimaxM2, answer, true), finish);
  EXPECT_EQ(s["reasoning"], "Plan.");
  EXPECT_EQ(s["content"], "\n\nHello.");
  EXPECT_EQ(finish, "stop");
}

}  // namespace
}  // namespace vllm::api
