// OpenAI request parsing: every field lands in SamplingParams, wrong types and out-of-range
// values are 400s naming the field, unknown fields are ignored, malformed JSON and invalid
// UTF-8 are 400s.
#include "api/server/protocol.h"

#include <gtest/gtest.h>

#include "protocol_test_util.h"

namespace vllm::api {
namespace {

TEST(Protocol, CompletionFieldsMapToSamplingParams) {
  auto r = parse_completion_request(
      J(R"({"model":"m","prompt":"hi","max_tokens":7,"temperature":0.5,"top_p":0.9,"top_k":5,
            "min_p":0.1,"presence_penalty":0.5,"frequency_penalty":-0.5,
            "repetition_penalty":1.2,"seed":42,"stop":["a","b"],"ignore_eos":true,
            "logprobs":3,"n":2,"stream":true,"stream_options":{"include_usage":true},
            "stop_token_ids":[5,6],"min_tokens":1,"some_unknown_field":{"x":1}})"));
  EXPECT_EQ(*r.model, "m");
  ASSERT_EQ(r.prompt_texts.size(), 1u);
  EXPECT_EQ(r.prompt_texts[0], "hi");
  const auto& s = r.sampling;
  EXPECT_EQ(*s.max_tokens, 7);
  EXPECT_FLOAT_EQ(s.temperature, 0.5f);
  EXPECT_FLOAT_EQ(s.top_p, 0.9f);
  EXPECT_EQ(s.top_k, 5);
  EXPECT_FLOAT_EQ(s.min_p, 0.1f);
  EXPECT_FLOAT_EQ(s.presence_penalty, 0.5f);
  EXPECT_FLOAT_EQ(s.frequency_penalty, -0.5f);
  EXPECT_FLOAT_EQ(s.repetition_penalty, 1.2f);
  EXPECT_EQ(*s.seed, 42u);
  EXPECT_EQ(s.stop, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.stop_token_ids, (std::vector<int32_t>{5, 6}));
  EXPECT_TRUE(s.ignore_eos);
  EXPECT_EQ(*s.logprobs, 3);
  EXPECT_EQ(s.min_tokens, 1);
  EXPECT_EQ(r.n, 2);
  EXPECT_EQ(s.n, 1);  // fanned out by the server
  EXPECT_TRUE(r.stream && r.include_usage);
  EXPECT_EQ(r.ignored_fields, std::vector<std::string>{"some_unknown_field"});
}

TEST(Protocol, PromptFormsAndDefaults) {
  auto r = parse_completion_request(J(R"({"prompt":[1,2,3]})"));
  ASSERT_EQ(r.prompt_ids.size(), 1u);
  EXPECT_EQ(r.prompt_ids[0], (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(*r.sampling.max_tokens, 16);  // completions default
  r = parse_completion_request(J(R"({"prompt":[[1],[2,3]]})"));
  EXPECT_EQ(r.prompt_ids.size(), 2u);
  r = parse_completion_request(J(R"({"prompt":["a","b"],"max_tokens":null})"));
  EXPECT_EQ(r.prompt_texts.size(), 2u);
  EXPECT_EQ(*r.sampling.max_tokens, 16);
  auto c = parse_chat_request(J(R"({"messages":[{"role":"user","content":"x"}]})"));
  EXPECT_FALSE(c.sampling.max_tokens);  // chat default: what fits
  c = parse_chat_request(J(
      R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":9,"max_tokens":3})"));
  EXPECT_EQ(*c.sampling.max_tokens, 9);
}

TEST(Protocol, ChatMessagesContentPartsLogprobsAndKwargs) {
  auto c = parse_chat_request(J(R"({"messages":[
      {"role":"system","content":"s"},
      {"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}],
      "logprobs":true,"top_logprobs":4,
      "chat_template_kwargs":{"enable_thinking":false}})"));
  EXPECT_EQ(c.messages[1]["content"], "a\nb");
  EXPECT_TRUE(c.logprobs);
  EXPECT_EQ(*c.sampling.logprobs, 4);
  EXPECT_EQ(c.chat_template_kwargs["enable_thinking"], false);
  c = parse_chat_request(J(R"({"messages":[{"role":"user","content":"x"}]})"));
  EXPECT_FALSE(c.sampling.logprobs);
}

TEST(Protocol, WrongTypesAndRangesAre400sNamingTheField) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case completion_cases[] = {
      {R"({"prompt":"x","max_tokens":"5"})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":0})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":1e30})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":99999999999})", "max_tokens"},
      {R"({"prompt":"x","max_tokens":2.5})", "max_tokens"},
      {R"({"prompt":"x","temperature":"hot"})", "temperature"},
      {R"({"prompt":"x","stream":"yes"})", "stream"},
      {R"({"prompt":"x","n":0})", "n"},
      {R"({"prompt":"x","n":100000})", "n"},
      {R"({"prompt":"x","logprobs":21})", "logprobs"},
      {R"({"prompt":"x","stop":[1]})", "stop"},
      {R"({"prompt":"x","seed":"1"})", "seed"},
      {R"({"prompt":"x","stream_options":{"include_usage":true}})", "stream_options"},
      {R"({"prompt":{"a":1}})", "prompt"},
      {R"({"prompt":[-1]})", "prompt"},
      {R"({"max_tokens":3})", "prompt"},
      {R"({"prompt":"x","model":7})", "model"},
  };
  for (const auto& c : completion_cases) {
    ApiError e = error_of([&] { parse_completion_request(J(c.body)); });
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body << " -> " << e.what();
  }
  const char* value_cases[] = {
      R"({"prompt":"x","temperature":-1})",     R"({"prompt":"x","top_p":0})",
      R"({"prompt":"x","top_p":1.5})",          R"({"prompt":"x","min_p":2})",
      R"({"prompt":"x","presence_penalty":3})", R"({"prompt":"x","repetition_penalty":0})",
      R"({"prompt":"x","top_k":-2})",           R"({"prompt":"x","stop":[""]})",
  };
  for (const char* b : value_cases)
    EXPECT_EQ(error_of([&] { parse_completion_request(J(b)); }).status(), 400) << b;
  const Case chat_cases[] = {
      {R"({"messages":[]})", "messages"},
      {R"({"messages":"hi"})", "messages"},
      {R"({"messages":[{"content":"x"}]})", "messages[0].role"},
      {R"({"messages":[{"role":"user","content":5}]})", "messages[0].content"},
      {R"({"messages":[{"role":"user","content":"x"}],"top_logprobs":2})", "top_logprobs"},
      {R"({"messages":[{"role":"user","content":"x"}],"chat_template_kwargs":[1]})",
       "chat_template_kwargs"},
  };
  for (const auto& c : chat_cases) {
    ApiError e = error_of([&] { parse_chat_request(J(c.body)); });
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body << " -> " << e.what();
  }
  EXPECT_EQ(error_of([&] { parse_chat_request(J("[1,2]")); }).status(), 400);
}

TEST(Protocol, MalformedJsonAndInvalidUtf8Are400s) {
  EXPECT_EQ(error_of([] { parse_body("{\"prompt\": "); }).status(), 400);
  EXPECT_EQ(error_of([] { parse_body("{\"prompt\": \"\xff\xfe\"}"); }).status(), 400);
  EXPECT_EQ(error_of([] { parse_body(""); }).status(), 400);
  EXPECT_EQ(parse_body(R"({"a":1})")["a"], 1);
}

TEST(Protocol, NestingDepthIsBoundedBeforeParsing) {
  EXPECT_EQ(json_depth(R"({"a": [1, {"b": "[[[[{{"}]})"), 3u);  // brackets in strings skipped
  EXPECT_EQ(json_depth(R"({"a": "\"[["})"), 1u);                // escaped quote stays in string
  const std::string ok = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_TRUE(parse_body(ok).is_array());
  // 1,000,000 levels: a 400 naming the limit, not a stack overflow.
  const size_t deep = 1000000;
  const std::string bad = "{\"messages\": " + std::string(deep, '[') + std::string(deep, ']') + "}";
  const ApiError e = error_of([&] { parse_body(bad); });
  EXPECT_EQ(e.status(), 400);
  EXPECT_NE(std::string(e.what()).find("nesting depth"), std::string::npos);
}

TEST(Protocol, NumbersBeyondDoubleAre400sNamingTheField) {
  ApiError e = error_of([] { parse_body(R"({"prompt": "x", "max_tokens": 1e400})"); });
  EXPECT_EQ(e.status(), 400);
  EXPECT_EQ(e.param(), "max_tokens");
  e = error_of([] { parse_body(R"({"logit_bias": {"5": -1e999}})"); });
  EXPECT_EQ(e.param(), "5");
  e = error_of([] { parse_body(R"([1e400])"); });
  EXPECT_EQ(e.status(), 400);
}

TEST(Protocol, ErrorBodyHasOpenAIShape) {
  auto b = ApiError(404, "The model `x` does not exist.", "model").body();
  EXPECT_EQ(b["error"]["message"], "The model `x` does not exist.");
  EXPECT_EQ(b["error"]["type"], "NotFoundError");
  EXPECT_EQ(b["error"]["param"], "model");
  EXPECT_EQ(b["error"]["code"], 404);
}

TEST(Protocol, TokenizeAndDetokenize) {
  auto t = parse_tokenize_request(J(R"({"prompt":"hello"})"));
  EXPECT_EQ(*t.prompt, "hello");
  EXPECT_TRUE(t.add_special_tokens);
  t = parse_tokenize_request(J(R"({"messages":[{"role":"user","content":"x"}]})"));
  EXPECT_FALSE(t.add_special_tokens);
  EXPECT_EQ(error_of([] { parse_tokenize_request(J("{}")); }).status(), 400);
  auto d = parse_detokenize_request(J(R"({"tokens":[1,2]})"));
  EXPECT_EQ(d.tokens, (std::vector<int32_t>{1, 2}));
  EXPECT_EQ(error_of([] { parse_detokenize_request(J(R"({"tokens":"ab"})")); }).status(), 400);
}

}  // namespace
}  // namespace vllm::api
