// /v1/responses translation (responses_api.h): request items become vLLM's chat messages,
// a chat completion becomes the Response object, and a chat stream with reasoning, text and
// two tool calls becomes vLLM's event sequence. The served path is in
// tests/e2e/test_responses_api.py; reasoning is exercised here, where a chat stream carrying
// it can be written down.
#include "api/server/responses_api.h"

#include <gtest/gtest.h>

#include "api/server/api_error.h"
#include "protocol_test_util.h"

namespace vllm::api {
namespace {

using json = nlohmann::json;

ResponsesCall to_chat(const char* body, bool auto_tools = true) {
  ResponsesOptions o;
  o.auto_tools = auto_tools;
  return responses_to_chat(J(body), o);
}

TEST(ResponsesApi, ItemsBecomeVllmChatMessages) {
  const ResponsesCall c = to_chat(R"({
    "model": "m", "instructions": "Be brief.", "max_output_tokens": 9, "temperature": 0,
    "input": [
      {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
      {"type": "reasoning", "id": "rs_1", "summary": [],
       "content": [{"type": "reasoning_text", "text": "Call the tool."}]},
      {"type": "function_call", "call_id": "c1", "name": "w", "arguments": "{\"a\":1}"},
      {"type": "function_call", "call_id": "c2", "name": "w", "arguments": "{}"},
      {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
      {"type": "message", "role": "assistant",
       "content": [{"type": "output_text", "text": "Sunny."}]}],
    "tools": [{"type": "function", "name": "w", "parameters": {"type": "object"}}],
    "tool_choice": {"type": "function", "name": "w"},
    "text": {"format": {"type": "json_schema", "name": "x", "schema": {"type": "object"}}},
    "reasoning": {"effort": "low"}, "some_new_field": 1})");
  const ojson& m = c.chat["messages"];
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0], J(R"({"role": "system", "content": "Be brief."})"));
  EXPECT_EQ(m[1]["role"], "user");
  // The reasoning and both calls are one assistant message, as vLLM merges them.
  EXPECT_EQ(m[2]["reasoning"], "Call the tool.");
  ASSERT_EQ(m[2]["tool_calls"].size(), 2u);
  EXPECT_EQ(m[2]["tool_calls"][1]["id"], "c2");
  EXPECT_EQ(m[3], J(R"({"role": "tool", "tool_call_id": "c1", "content": "sunny"})"));
  EXPECT_EQ(m[4]["content"][0]["text"], "Sunny.");
  EXPECT_EQ(c.chat["max_tokens"], 9);
  EXPECT_EQ(c.chat["tools"][0]["function"]["name"], "w");
  EXPECT_EQ(c.chat["tool_choice"], J(R"({"type": "function", "function": {"name": "w"}})"));
  EXPECT_EQ(c.chat["response_format"]["json_schema"]["name"], "x");
  EXPECT_EQ(c.chat["reasoning_effort"], "low");
  EXPECT_EQ(c.ignored, std::vector<std::string>{"some_new_field"});
  EXPECT_EQ(c.echo["max_output_tokens"], 9);
  EXPECT_EQ(c.id.rfind("resp_", 0), 0u);
}

TEST(ResponsesApi, AutoToolsWithoutAParserRenderButDoNotParse) {
  const char* body = R"({"input": "x", "tools": [{"type": "function", "name": "w"}]})";
  EXPECT_EQ(to_chat(body, false).chat["tool_choice"], "none");
  EXPECT_EQ(to_chat(body, true).chat["tool_choice"], "auto");
  // No tools: no tool_choice reaches the chat request (vLLM passes it only with tools).
  EXPECT_FALSE(
      to_chat(R"({"input": "x", "tool_choice": "required"})").chat.contains("tool_choice"));
}

TEST(ResponsesApi, RefusalsNameTheField) {
  auto param = [](const char* body) {
    try {
      to_chat(body);
    } catch (const ApiError& e) {
      return std::to_string(e.status()) + " " + e.param();
    }
    return std::string("accepted");
  };
  EXPECT_EQ(param(R"({"input": "x", "previous_response_id": "resp_1"})"),
            "404 previous_response_id");
  EXPECT_EQ(param(R"({"input": "x", "background": true})"), "400 background");
  EXPECT_EQ(param(R"({"input": "x", "background": true, "store": false})"), "400 background");
  EXPECT_EQ(param(R"({"input": "x", "tools": [{"type": "file_search"}]})"), "400 tools[0].type");
  EXPECT_EQ(param(R"({"input": [{"type": "reasoning", "encrypted_content": "zz"}]})"), "400 input");
  EXPECT_EQ(param(R"({"input": "x", "truncation": "middle"})"), "400 truncation");
  EXPECT_EQ(param(R"({"input": "x", "include": ["file_search_call.results"]})"), "400 include");
  EXPECT_EQ(param(R"({"input": "x", "store": true, "include": ["reasoning.encrypted_content"]})"),
            "accepted");
}

TEST(ResponsesApi, CompletionBecomesResponseItems) {
  const ResponsesCall c = to_chat(R"({"input": "x", "metadata": {"k": "v"}})");
  const json completion = json::parse(R"({
    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
      "role": "assistant", "reasoning": "think", "content": "Calling.",
      "tool_calls": [{"id": "chatcmpl-tool-1", "type": "function",
                      "function": {"name": "w", "arguments": "{}"}}]}}],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12,
              "prompt_tokens_details": {"cached_tokens": 3}}})");
  const json r = response_from_chat(
      completion, c, 123, [](const std::string& s) { return static_cast<int64_t>(s.size()); });
  EXPECT_EQ(r["status"], "completed");
  EXPECT_EQ(r["metadata"]["k"], "v");
  ASSERT_EQ(r["output"].size(), 3u);
  EXPECT_EQ(r["output"][0]["type"], "reasoning");
  EXPECT_EQ(r["output"][0]["content"][0]["text"], "think");
  EXPECT_EQ(r["output"][1]["content"][0]["text"], "Calling.");
  EXPECT_EQ(r["output"][2]["call_id"], "chatcmpl-tool-1");
  EXPECT_EQ(r["usage"]["input_tokens_details"]["cached_tokens"], 3);
  EXPECT_EQ(r["usage"]["output_tokens_details"]["reasoning_tokens"], 5);  // "think"
}

// The events' types in order, and their data objects.
std::vector<json> events(const std::vector<std::string>& sse, std::vector<std::string>* types) {
  std::vector<json> out;
  for (const auto& e : sse) {
    const size_t nl = e.find('\n');
    const std::string type = e.substr(7, nl - 7);  // "event: TYPE\n"
    const json data = json::parse(e.substr(nl + 7));
    EXPECT_EQ(data["type"], type);
    types->push_back(type);
    out.push_back(data);
  }
  return out;
}

TEST(ResponsesApi, ChatStreamBecomesVllmEvents) {
  const ResponsesCall c = to_chat(R"({"input": "x", "stream": true})");
  EXPECT_EQ(c.chat["stream_options"]["include_usage"], true);
  ResponsesStream rs(c, 1, [](const std::string&) { return int64_t{2}; });
  std::vector<std::string> sse = rs.start();
  auto feed = [&](const char* chunk) {
    for (auto& e : rs.feed(chunk)) sse.push_back(e);
  };
  feed(R"(data: {"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]})"
       "\n\n");
  feed(R"(data: {"choices":[{"index":0,"delta":{"reasoning":"hm"}}]})"
       "\n\n");
  feed(": keep-alive\n\n");
  feed(R"(data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]})"
       "\n\n");
  feed(
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"t0","type":"function","function":{"name":"a","arguments":""}}]}}]})"
      "\n\n");
  feed(
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]})"
      "\n\n");
  feed(
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"t1","type":"function","function":{"name":"b","arguments":"{\"x\":"}}]}}]})"
      "\n\n");
  feed(
      R"(data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":"1}"}}]},"finish_reason":"tool_calls"}]})"
      "\n\n");
  feed(R"(data: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":6,"total_tokens":10}})"
       "\n\n");
  feed("data: [DONE]\n\n");
  const std::string keep_alive = ": keep-alive\n\n";
  ASSERT_NE(std::find(sse.begin(), sse.end(), keep_alive), sse.end());
  sse.erase(std::find(sse.begin(), sse.end(), keep_alive));
  std::vector<std::string> types;
  const std::vector<json> ev = events(sse, &types);
  const std::vector<std::string> want = {
      "response.created", "response.in_progress",
      // reasoning item
      "response.output_item.added", "response.content_part.added", "response.reasoning_text.delta",
      "response.reasoning_text.done", "response.content_part.done", "response.output_item.done",
      // message item
      "response.output_item.added", "response.content_part.added", "response.output_text.delta",
      "response.output_text.done", "response.content_part.done", "response.output_item.done",
      // two function calls
      "response.output_item.added", "response.function_call_arguments.delta",
      "response.function_call_arguments.done", "response.output_item.done",
      "response.output_item.added", "response.function_call_arguments.delta",
      "response.function_call_arguments.delta", "response.function_call_arguments.done",
      "response.output_item.done", "response.completed"};
  EXPECT_EQ(types, want);
  for (size_t i = 0; i < ev.size(); ++i) EXPECT_EQ(ev[i]["sequence_number"], i);
  const json& done = ev.back()["response"];
  ASSERT_EQ(done["output"].size(), 4u);
  EXPECT_EQ(done["output"][0]["content"][0]["text"], "hm");
  EXPECT_EQ(done["output"][1]["content"][0]["text"], "Hi");
  EXPECT_EQ(done["output"][2]["arguments"], "{}");
  EXPECT_EQ(done["output"][3]["arguments"], "{\"x\":1}");
  EXPECT_EQ(done["output"][3]["call_id"], "t1");
  EXPECT_EQ(ev[18]["output_index"], 3);
  EXPECT_EQ(done["usage"]["output_tokens"], 6);
  EXPECT_EQ(done["usage"]["output_tokens_details"]["reasoning_tokens"], 2);
}

TEST(ResponsesApi, CutStreamEndsIncompleteAndErrorsEndTheStream) {
  const ResponsesCall c = to_chat(R"({"input": "x", "stream": true})");
  ResponsesStream rs(c, 1, {});
  std::vector<std::string> types;
  std::vector<std::string> sse = rs.start();
  for (auto& e : rs.feed("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"},"
                         "\"finish_reason\":\"length\"}]}\n\n"))
    sse.push_back(e);
  for (auto& e : rs.feed("data: [DONE]\n\n")) sse.push_back(e);
  const std::vector<json> ev = events(sse, &types);
  EXPECT_EQ(types.back(), "response.incomplete");
  EXPECT_EQ(ev.back()["response"]["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(ev[ev.size() - 2]["item"]["status"], "incomplete");

  ResponsesStream bad(c, 1, {});
  std::vector<std::string> t2;
  std::vector<std::string> s2 = bad.start();
  for (auto& e : bad.feed("data: {\"error\":{\"message\":\"boom\",\"type\":\"X\"}}\n\n"))
    s2.push_back(e);
  for (auto& e : bad.feed("data: [DONE]\n\n")) s2.push_back(e);
  const std::vector<json> e2 = events(s2, &t2);
  EXPECT_EQ(t2.back(), "error");
  EXPECT_EQ(e2.back()["message"], "boom");
}

TEST(ResponsesApi, StoreContinuesAndForgetsTheOldest) {
  ResponsesStore store(2);
  store.put("resp_a", {J(R"([{"role": "system", "content": "S"},
                              {"role": "user", "content": "Hi"}])"),
                       json::parse(R"({"output": [{"type": "reasoning"},
                         {"type": "message", "content": [{"type": "output_text", "text": "Yo"}]}]})")});
  ResponsesOptions o;
  o.store = &store;
  const ResponsesCall c = responses_to_chat(
      J(R"({"input": "Again", "instructions": "New", "previous_response_id": "resp_a"})"), o);
  // vLLM's construct_input_messages: the new instructions, the stored turn without its system
  // message, the previous output's message as an assistant turn (reasoning skipped), the input.
  EXPECT_EQ(c.chat["messages"], J(R"([{"role": "system", "content": "New"},
                                      {"role": "user", "content": "Hi"},
                                      {"role": "assistant", "content": "Yo"},
                                      {"role": "user", "content": "Again"}])"));
  EXPECT_TRUE(c.store);
  EXPECT_EQ(c.echo["previous_response_id"], "resp_a");
  EXPECT_FALSE(responses_to_chat(J(R"({"input": "x", "store": false})"), o).store);
  store.put("resp_b", {});
  store.put("resp_c", {});
  EXPECT_FALSE(store.get("resp_a"));  // the oldest of three, past the capacity of two
  EXPECT_TRUE(store.get("resp_c"));
  // And past the byte budget: a 2 KB response evicts everything older once the 3 KB is full.
  ResponsesStore small(100, 3000);
  small.put("x", {J("[]"), json{{"t", std::string(1000, 'a')}}});
  small.put("y", {J("[]"), json{{"t", std::string(1000, 'b')}}});
  EXPECT_TRUE(small.get("x"));
  small.put("z", {J("[]"), json{{"t", std::string(2000, 'c')}}});
  EXPECT_FALSE(small.get("x"));
  EXPECT_FALSE(small.get("y"));
  EXPECT_TRUE(small.get("z"));
  try {
    responses_to_chat(J(R"({"input": "x", "previous_response_id": "resp_a"})"), o);
    ADD_FAILURE() << "an evicted id continued";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 404);
  }
}

// With the store, background is accepted (vLLM's order of checks: the request's store flag
// first), echoed, and its queued Response has no output and no usage.
TEST(ResponsesApi, BackgroundNeedsTheStoreAndStoreTrue) {
  ResponsesStore store;
  ResponsesOptions o;
  o.store = &store;
  const ResponsesCall c = responses_to_chat(J(R"({"input": "x", "background": true})"), o);
  EXPECT_TRUE(c.background);
  EXPECT_TRUE(c.store);
  EXPECT_EQ(c.echo["background"], true);
  const json q = queued_response(c, 7);
  EXPECT_EQ(q["status"], "queued");
  EXPECT_EQ(q["id"], c.id);
  EXPECT_EQ(q["created_at"], 7);
  EXPECT_TRUE(q["output"].is_array() && q["output"].empty());
  EXPECT_TRUE(q["usage"].is_null());
  EXPECT_EQ(q["background"], true);
  try {
    responses_to_chat(J(R"({"input": "x", "background": true, "store": false})"), o);
    ADD_FAILURE() << "accepted";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.param(), "background");
    EXPECT_NE(std::string(e.what()).find("`store` is true"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(responses_to_chat(J(R"({"input": "x"})"), o).background);
}

}  // namespace
}  // namespace vllm::api
