// Harmony parsing through the chat serving path (Generation over AsyncEngine), without a gpt-oss
// model: the tiny Qwen3 is made to write harmony text by a regex grammar (the parser reads the
// text, so ordinary tokens spelling the tags read the same as gpt-oss's special tokens), with
// ServingContext::harmony on as the server turns it on for GptOssForCausalLM. Checks the whole
// message, that the stream's deltas reassemble to it, tool calls under --tool-call-parser openai
// and include_reasoning false. (The gpt-oss end-to-end test, with the real special tokens,
// belongs in tests/e2e with the tiny gpt-oss GGUF.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "api/llm.h"
#include "api/server/request_inputs.h"
#include "api/server/responses_api.h"
#include "api/server/serving.h"
#include "forced_output_serving.h"

namespace vllm::api {
namespace {

using nlohmann::json;

class HarmonyServing : public testing::ForcedOutputServing {
 protected:
  static void SetUpTestSuite() {
    ForcedOutputServing::SetUpTestSuite();
    if (ctx_) ctx_->harmony = true;
  }

  // A chat request whose output is `text` (forced by the grammar).
  static std::shared_ptr<Generation> run(const std::string& text, bool stream, ojson extra = {}) {
    ojson body = {{"messages", {{{"role", "user"}, {"content", "Weather in Paris?"}}}},
                  {"max_tokens", 400},
                  {"stream", stream},
                  {"structured_outputs", {{"regex", testing::regex_literal(text)}}}};
    for (auto& [k, v] : extra.items()) body[k] = v;
    ChatRequest r = parse_chat_request(body);
    InputOptions io;
    io.max_model_len = engine_->config().max_model_len;
    // With harmony on, prepare_chat would put the regex inside harmony's final message (as vLLM
    // does for gpt-oss); here it must force the whole text, so the request is prepared as for
    // another model and given harmony's setting by hand (HarmonyServing.PrepareChat checks it).
    io.harmony = false;
    io.auto_tool_parser = ToolParserKind::kOpenAI;
    PreparedInputs in = prepare_chat(*llm_, r, io);
    r.sampling.skip_special_tokens = false;
    return Generation::start(*ctx_, Generation::Kind::kChat, r, std::move(in.prompts),
                             std::move(in.options));
  }
};

const std::string kText =
    "<|channel|>analysis<|message|>Paris, so sunny.<|end|><|start|>assistant"
    "<|channel|>final<|message|>Sunny.";

TEST_F(HarmonyServing, PrepareChat) {
  ChatRequest r =
      parse_chat_request({{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                          {"response_format",
                           {{"type", "json_schema"},
                            {"json_schema", {{"name", "a"}, {"schema", {{"type", "object"}}}}}}}});
  InputOptions io;
  io.max_model_len = engine_->config().max_model_len;
  io.harmony = true;
  prepare_chat(*llm_, r, io);
  EXPECT_FALSE(r.sampling.skip_special_tokens);  // the parser needs harmony's tokens
  // The response format shapes the final message only (strict_tools.h harmony_output_tag).
  ASSERT_TRUE(r.constraint.has_value());
  EXPECT_EQ(r.constraint->kind, engine::so::GrammarKind::kStructuralTag);
  EXPECT_NE(r.constraint->text.find("<|channel|>final json<|message|>"), std::string::npos);
}

TEST_F(HarmonyServing, ChatMessageAndStreamSplitTheChannels) {
  json whole = run(kText, false)->collect();
  const json& m = whole["choices"][0]["message"];
  EXPECT_EQ(m["reasoning"], "Paris, so sunny.") << whole.dump();
  EXPECT_EQ(m["content"], "Sunny.") << whole.dump();
  EXPECT_FALSE(m.contains("tool_calls"));
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "stop");
  std::string finish;
  const json s = streamed(run(kText, true), finish);
  EXPECT_EQ(s["reasoning"], m["reasoning"]);
  EXPECT_EQ(s["content"], m["content"]);
  EXPECT_EQ(finish, "stop");
}

TEST_F(HarmonyServing, IncludeReasoningFalseDropsIt) {
  const ojson extra = {{"include_reasoning", false}};
  json whole = run(kText, false, extra)->collect();
  EXPECT_TRUE(whole["choices"][0]["message"]["reasoning"].is_null()) << whole.dump();
  EXPECT_EQ(whole["choices"][0]["message"]["content"], "Sunny.");
  std::string finish;
  const json s = streamed(run(kText, true, extra), finish);
  EXPECT_TRUE(s["reasoning"].is_null()) << s.dump();
  EXPECT_EQ(s["content"], "Sunny.");
}

TEST_F(HarmonyServing, ToolCallsWithTheOpenAIParser) {
  const std::string text =
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant"
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
      "{\"location\":\"Paris\"}";
  const ojson tools = {
      {"tools",
       {{{"type", "function"},
         {"function", {{"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}}}},
      {"tool_choice", "auto"}};
  json whole = run(text, false, tools)->collect();
  const json& m = whole["choices"][0]["message"];
  ASSERT_EQ(m["tool_calls"].size(), 1u) << whole.dump();
  EXPECT_EQ(m["tool_calls"][0]["function"]["name"], "get_weather");
  EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], "{\"location\": \"Paris\"}");
  EXPECT_TRUE(m["content"].is_null());
  EXPECT_EQ(m["reasoning"], "Need weather.");
  EXPECT_EQ(whole["choices"][0]["finish_reason"], "tool_calls");
  std::string finish;
  const json s = streamed(run(text, true, tools), finish);
  ASSERT_EQ(s["calls"].size(), 1u) << s.dump();
  EXPECT_EQ(s["calls"][0]["name"], "get_weather");
  EXPECT_EQ(s["calls"][0]["arguments"], "{\"location\":\"Paris\"}");  // as written, as vLLM
  EXPECT_EQ(finish, "tool_calls");
  // Without tools in the request (so no tool parser) the call is dropped, as vLLM drops it.
  whole = run(text, false)->collect();
  EXPECT_FALSE(whole["choices"][0]["message"].contains("tool_calls")) << whole.dump();
  EXPECT_TRUE(whole["choices"][0]["message"]["content"].is_null());
}

// gpt-oss is what vLLM's Responses API is mostly used with: a /v1/responses request for the
// same forced output gives vLLM's reasoning and function_call items, whole and streamed.
TEST_F(HarmonyServing, ResponsesApiItemsFromTheChannels) {
  const std::string text =
      "<|channel|>analysis<|message|>Need weather.<|end|><|start|>assistant"
      "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
      "{\"location\":\"Paris\"}";
  auto items = [&](bool stream) {
    ResponsesOptions ro;
    ro.auto_tools = true;
    const ResponsesCall call = responses_to_chat(
        {{"input", "Weather in Paris?"},
         {"max_output_tokens", 400},
         {"stream", stream},
         {"tools",
          {{{"type", "function"}, {"name", "get_weather"}, {"parameters", {{"type", "object"}}}}}},
         {"structured_outputs", {{"regex", testing::regex_literal(text)}}}},
        ro);
    ChatRequest r = parse_chat_request(call.chat);
    InputOptions io;
    io.max_model_len = engine_->config().max_model_len;
    io.harmony = false;  // the regex forces the whole text (see run above)
    io.auto_tool_parser = ToolParserKind::kOpenAI;
    PreparedInputs in = prepare_chat(*llm_, r, io);
    r.sampling.skip_special_tokens = false;
    auto g = Generation::start(*ctx_, Generation::Kind::kChat, r, std::move(in.prompts),
                               std::move(in.options));
    auto count = [](const std::string& s) { return static_cast<int64_t>(s.size()); };
    if (!stream) return response_from_chat(g->collect(), call, 0, count);
    ResponsesStream rs(call, 0, count);
    json last;
    auto write = [&](const std::string& ev) {
      for (const auto& e : rs.feed(ev)) last = json::parse(e.substr(e.find("data: ") + 6));
      return true;
    };
    while (g->stream_step(write, std::chrono::milliseconds(200))) {
    }
    EXPECT_EQ(last["type"], "response.completed") << last.dump();
    return last["response"];
  };
  for (const bool stream : {false, true}) {
    const json r = items(stream);
    const json& out = r["output"];
    ASSERT_EQ(out.size(), 2u) << r.dump();
    EXPECT_EQ(out[0]["type"], "reasoning");
    EXPECT_EQ(out[0]["content"][0]["text"], "Need weather.");
    EXPECT_EQ(out[1]["type"], "function_call");
    EXPECT_EQ(out[1]["name"], "get_weather");
    // Re-serialized as vLLM's json.dumps in whole responses, as written in streams.
    EXPECT_EQ(out[1]["arguments"],
              stream ? "{\"location\":\"Paris\"}" : "{\"location\": \"Paris\"}");
    EXPECT_EQ(r["status"], "completed");
    EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 13);  // "Need weather."
  }
}

}  // namespace
}  // namespace vllm::api
