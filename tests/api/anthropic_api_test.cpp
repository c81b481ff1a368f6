// /v1/messages translation (anthropic_api.h): blocks become vLLM's chat messages, a chat
// completion becomes the Message, and a chat stream with reasoning, text and a tool call
// becomes Anthropic's events. The served path is in tests/e2e/test_anthropic_api.py; thinking
// is exercised here, where a chat stream carrying it can be written down.
#include "api/server/anthropic_api.h"

#include <gtest/gtest.h>

#include "api/server/api_error.h"
#include "protocol_test_util.h"

namespace vllm::api {
namespace {

using json = nlohmann::json;

TEST(AnthropicApi, BlocksBecomeVllmChatMessages) {
  const AnthropicCall c = anthropic_to_chat(J(R"({
    "model": "m", "max_tokens": 9, "stop_sequences": ["END"], "stream": true,
    "system": [{"type": "text", "text": "x-anthropic-billing-header: cc=1;"},
               {"type": "text", "text": "Be brief."}, {"type": "text", "text": " Really."}],
    "messages": [
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Use the tool.", "signature": "s"},
        {"type": "redacted_thinking", "data": "zz"},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "t1", "name": "w", "input": {"city": "Paris", "n": 1}}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "sunny"}]},
        {"type": "text", "text": "Thanks"}]},
      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t2", "content": "x"}]}],
    "tools": [{"name": "w", "input_schema": {"properties": {}}}],
    "tool_choice": {"type": "any", "disable_parallel_tool_use": true},
    "thinking": {"type": "enabled", "budget_tokens": 64},
    "output_config": {"effort": "low"}, "metadata": {"user_id": "u"}, "new_field": 1})"));
  const ojson& m = c.chat["messages"];
  ASSERT_EQ(m.size(), 6u);
  EXPECT_EQ(m[0], J(R"({"role": "system", "content": "Be brief. Really."})"));
  EXPECT_EQ(m[2]["reasoning"], "Use the tool.");
  EXPECT_EQ(m[2]["content"], "Checking.");
  EXPECT_EQ(m[2]["tool_calls"][0]["function"]["arguments"], R"({"city": "Paris", "n": 1})");
  // The tool result goes before the user's text, as vLLM appends it.
  EXPECT_EQ(m[3], J(R"({"role": "tool", "tool_call_id": "t1", "content": "sunny"})"));
  EXPECT_EQ(m[4], J(R"({"role": "user", "content": "Thanks"})"));
  // A user turn holding only tool results adds no user message.
  EXPECT_EQ(m[5]["role"], "tool");
  EXPECT_EQ(c.chat["max_tokens"], 9);
  EXPECT_EQ(c.chat["stop"][0], "END");
  EXPECT_EQ(c.chat["tool_choice"], "required");
  EXPECT_EQ(c.chat["parallel_tool_calls"], false);
  EXPECT_EQ(c.chat["tools"][0]["function"]["parameters"]["type"], "object");
  EXPECT_EQ(c.chat["thinking_token_budget"], 64);
  EXPECT_EQ(c.chat["reasoning_effort"], "low");
  EXPECT_EQ(c.chat["stream_options"]["continuous_usage_stats"], true);
  EXPECT_EQ(c.ignored, std::vector<std::string>{"new_field"});
  // thinking disabled: the template's thinking off.
  EXPECT_EQ(anthropic_to_chat(J(R"({"max_tokens": 1, "messages": [],
                                    "thinking": {"type": "disabled"}})"))
                .chat["reasoning_effort"],
            "none");
}

TEST(AnthropicApi, RefusalsNameTheField) {
  auto param = [](const char* body) {
    try {
      anthropic_to_chat(J(body));
    } catch (const ApiError& e) {
      return std::to_string(e.status()) + " " + e.param();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(param(R"({"messages": []})"), "400 max_tokens");
  EXPECT_EQ(param(R"({"max_tokens": 1, "messages": [{"role": "user", "content": [
                     {"type": "image", "source": {}}]}]})"),
            "400 messages[0].content[0]");
  EXPECT_EQ(param(R"({"max_tokens": 1, "messages": [], "tools": [{"type": "bash_20250124",
                     "name": "bash"}]})"),
            "400 tools[0].type");
  EXPECT_EQ(param(R"({"max_tokens": 1, "messages": [], "mcp_servers": []})"), "400 mcp_servers");
  EXPECT_EQ(param(R"({"max_tokens": 1, "messages": [{"role": "tool", "content": "x"}]})"),
            "400 messages[0].role");
  EXPECT_EQ(anthropic_error_body(503, "busy")["error"]["type"], "overloaded_error");
}

TEST(AnthropicApi, CompletionBecomesMessage) {
  const json m = message_from_chat(json::parse(R"({
    "id": "chatcmpl-1", "model": "m",
    "choices": [{"index": 0, "finish_reason": "stop", "stop_reason": "END",
                 "message": {"role": "assistant", "reasoning": "hm", "content": "Hi"}}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 2,
              "prompt_tokens_details": {"cached_tokens": 4}}})"));
  EXPECT_EQ(m["content"][0]["type"], "thinking");
  EXPECT_EQ(m["content"][1]["text"], "Hi");
  EXPECT_EQ(m["stop_reason"], "stop_sequence");
  EXPECT_EQ(m["stop_sequence"], "END");
  EXPECT_EQ(m["usage"]["input_tokens"], 6);
  EXPECT_EQ(m["usage"]["cache_read_input_tokens"], 4);
  const json empty = message_from_chat(json::parse(R"({"choices": [{"finish_reason": "length",
      "message": {"content": ""}}]})"));
  EXPECT_EQ(empty["content"], json::parse(R"([{"type": "text", "text": ""}])"));
  EXPECT_EQ(empty["stop_reason"], "max_tokens");
}

TEST(AnthropicApi, ChatStreamBecomesAnthropicEvents) {
  AnthropicStream s;
  std::vector<std::string> sse;
  auto feed = [&](const std::string& chunk) {
    for (auto& e : s.feed("data: " + chunk + "\n\n")) sse.push_back(e);
  };
  feed(
      R"({"id":"c1","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":{"prompt_tokens":5,"completion_tokens":0}})");
  feed(R"({"choices":[{"index":0,"delta":{"reasoning":"hm"}}]})");
  feed(R"({"choices":[{"index":0,"delta":{"content":"Hi"}}]})");
  feed(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t0","type":"function","function":{"name":"w","arguments":""}}]}}]})");
  feed(
      R"({"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\": 1}"}}]}}]})");
  feed(R"({"choices":[{"index":0,"delta":{"content":" after"},"finish_reason":"tool_calls"}]})");
  feed(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":9}})");
  feed("[DONE]");
  std::vector<std::string> types;
  std::vector<json> ev;
  for (const auto& e : sse) {
    const size_t nl = e.find('\n');
    types.push_back(e.substr(7, nl - 7));
    ev.push_back(json::parse(e.substr(nl + 7)));
    EXPECT_EQ(ev.back()["type"], types.back());
  }
  const std::vector<std::string> want = {
      "message_start",       "content_block_start",
      "content_block_delta", "content_block_delta",  // thinking + signature
      "content_block_stop",  "content_block_start",
      "content_block_delta", "content_block_stop",   // text
      "content_block_start", "content_block_delta",  // tool_use
      "content_block_stop",  "content_block_start",
      "content_block_delta", "content_block_stop",  // text held back
      "message_delta",       "message_stop"};
  EXPECT_EQ(types, want);
  EXPECT_EQ(ev[0]["message"]["usage"]["input_tokens"], 5);
  EXPECT_EQ(ev[1]["content_block"]["type"], "thinking");
  EXPECT_EQ(ev[3]["delta"]["type"], "signature_delta");
  EXPECT_EQ(ev[8]["content_block"]["id"], "t0");
  EXPECT_EQ(ev[8]["index"], 2);
  EXPECT_EQ(ev[9]["delta"]["partial_json"], "{\"a\": 1}");
  EXPECT_EQ(ev[12]["delta"]["text"], " after");
  EXPECT_EQ(ev[12]["index"], 3);
  EXPECT_EQ(ev[14]["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(ev[14]["usage"]["output_tokens"], 9);
}

TEST(AnthropicApi, StreamErrorIsAnErrorEvent) {
  AnthropicStream s;
  std::vector<std::string> out = s.feed("data: {\"id\":\"c\",\"choices\":[]}\n\n");
  for (auto& e : s.feed("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\n"))
    out.push_back(e);
  for (auto& e : s.feed("data: {\"error\":{\"message\":\"boom\",\"code\":503}}\n\n"))
    out.push_back(e);
  EXPECT_TRUE(s.feed("data: [DONE]\n\n").empty());
  ASSERT_GE(out.size(), 2u);
  EXPECT_EQ(out[out.size() - 2].rfind("event: content_block_stop", 0), 0u);
  const std::string& last = out.back();
  EXPECT_EQ(last.rfind("event: error", 0), 0u);
  const json e = json::parse(last.substr(last.find('\n') + 7));
  EXPECT_EQ(e["error"]["type"], "overloaded_error");
  EXPECT_EQ(e["error"]["message"], "boom");
}

}  // namespace
}  // namespace vllm::api
