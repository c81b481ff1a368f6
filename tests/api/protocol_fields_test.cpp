// vLLM's request fields: each one the engine implements lands where the engine reads it; each
// one it does not is a 400 naming it (unless it holds its default); structured-output fields
// are parsed into one constraint (several, or a malformed one, are 400s); unknown fields are only
// reported. Plus the generation_config.json defaults and the model resolver's Hugging Face cache
// lookup.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "api/generation_config.h"
#include "api/model_resolver.h"
#include "api/server/protocol.h"
#include "protocol_test_util.h"

namespace vllm::api {
namespace {

namespace fs = std::filesystem;

TEST(ProtocolFields, SamplingControlsAndPromptOptionsLandInTheRequest) {
  auto r = parse_completion_request(J(R"({"prompt":"hi","logit_bias":{"5":-2.5,"17":100},
      "allowed_token_ids":[3,4],"bad_words":["foo"," bar"],"prompt_logprobs":2,
      "truncate_prompt_tokens":7,"truncation_side":"right","return_token_ids":true,
      "return_tokens_as_token_ids":true,"add_special_tokens":false,"priority":-3,
      "request_id":"abc","user":"u","spaces_between_special_tokens":false,
      "use_beam_search":false,"length_penalty":1.0,"unknown_thing":1})"));
  const auto& s = r.sampling;
  ASSERT_EQ(s.logit_bias.size(), 2u);
  EXPECT_EQ(s.logit_bias[0], (std::pair<int32_t, float>{5, -2.5f}));
  EXPECT_EQ(s.logit_bias[1], (std::pair<int32_t, float>{17, 100.0f}));
  EXPECT_EQ(*s.allowed_token_ids, (std::vector<int32_t>{3, 4}));
  EXPECT_EQ(r.bad_words, (std::vector<std::string>{"foo", " bar"}));
  EXPECT_EQ(*s.prompt_logprobs, 2);
  EXPECT_EQ(*r.truncate_prompt_tokens, 7);
  EXPECT_FALSE(r.truncate_left);
  EXPECT_TRUE(r.return_token_ids && r.return_tokens_as_token_ids);
  EXPECT_EQ(r.add_special_tokens, std::optional<bool>(false));
  EXPECT_EQ(r.priority, -3);
  EXPECT_EQ(*r.request_id, "abc");
  // Defaults of unimplemented fields pass; only the truly unknown one is reported.
  EXPECT_EQ(r.ignored_fields, std::vector<std::string>{"unknown_thing"});
}

TEST(ProtocolFields, EchoWithLogprobsAsksForPromptLogprobsAndMaxTokensZeroNeedsEcho) {
  // lm-evaluation-harness's log-likelihood request.
  auto r = parse_completion_request(
      J(R"({"prompt":[[1,2,3]],"temperature":0,"max_tokens":1,"logprobs":1,"seed":1234,
            "echo":true})"));
  EXPECT_TRUE(r.echo);
  EXPECT_EQ(*r.sampling.logprobs, 1);
  EXPECT_EQ(*r.sampling.prompt_logprobs, 1);
  EXPECT_FALSE(r.echo_only);
  r = parse_completion_request(J(R"({"prompt":"x","max_tokens":0,"echo":true,"logprobs":0})"));
  EXPECT_TRUE(r.echo_only);
  EXPECT_EQ(*r.sampling.max_tokens, 1);  // the engine still runs one step
  EXPECT_EQ(
      error_of([] { parse_completion_request(J(R"({"prompt":"x","max_tokens":0})")); }).param(),
      "max_tokens");
  // Without echo, logprobs alone do not score the prompt.
  r = parse_completion_request(J(R"({"prompt":"x","logprobs":2})"));
  EXPECT_FALSE(r.sampling.prompt_logprobs);
}

TEST(ProtocolFields, ChatOnlyFields) {
  auto c = parse_chat_request(J(R"({"messages":[{"role":"user","content":"x"},
      {"role":"assistant","content":"The answer is"}],"continue_final_message":true,
      "echo":true,"chat_template":"{{ messages[0].content }}","documents":[{"title":"t"}],
      "reasoning_effort":"low","include_reasoning":false,"return_prompt_text":true})"));
  EXPECT_TRUE(c.continue_final_message);
  EXPECT_FALSE(c.add_generation_prompt);  // implied by continue_final_message
  EXPECT_TRUE(c.echo);
  EXPECT_EQ(*c.chat_template, "{{ messages[0].content }}");
  EXPECT_EQ(c.chat_template_kwargs["documents"][0]["title"], "t");
  EXPECT_EQ(c.chat_template_kwargs["reasoning_effort"], "low");
  EXPECT_EQ(c.chat_template_kwargs["enable_thinking"], true);
  EXPECT_FALSE(c.include_reasoning);
  EXPECT_TRUE(c.return_prompt_text);
  EXPECT_TRUE(c.ignored_fields.empty());
}

// --reasoning-effort-map: the validated effort rewritten for the template, enable_thinking
// from the rewritten value; efforts not in the map pass through.
TEST(ProtocolFields, ReasoningEffortMapRewritesTheEffortTheTemplateSees) {
  ParseOptions o;
  o.reasoning_effort_map = {{"medium", "low"}, {"xhigh", "max"}, {"minimal", "none"}};
  auto body = [](const char* e) {
    const std::string b =
        std::string(R"({"messages":[{"role":"user","content":"x"}],"reasoning_effort":")") + e +
        "\"}";
    return J(b.c_str());
  };
  auto c = parse_chat_request(body("medium"), o);
  EXPECT_EQ(c.chat_template_kwargs["reasoning_effort"], "low");
  c = parse_chat_request(body("xhigh"), o);
  EXPECT_EQ(c.chat_template_kwargs["reasoning_effort"], "max");
  c = parse_chat_request(body("high"), o);
  EXPECT_EQ(c.chat_template_kwargs["reasoning_effort"], "high");
  c = parse_chat_request(body("minimal"), o);
  EXPECT_EQ(c.chat_template_kwargs["reasoning_effort"], "none");
  EXPECT_EQ(c.chat_template_kwargs["enable_thinking"], false);
  // The request's own value is still checked before the map.
  EXPECT_EQ(error_of([&] { parse_chat_request(body("extreme"), o); }).param(), "reasoning_effort");
}

TEST(ProtocolFields, ConflictsAndBadValuesAre400sNamingTheField) {
  struct Case {
    const char* body;
    const char* param;
  };
  const Case completion[] = {
      {R"({"prompt":"x","logit_bias":{"abc":1}})", "logit_bias"},
      {R"({"prompt":"x","logit_bias":{"-1":1}})", "logit_bias"},
      {R"({"prompt":"x","logit_bias":{"5":100.5}})", "logit_bias"},
      {R"({"prompt":"x","logit_bias":{"5":"1"}})", "logit_bias"},
      {R"({"prompt":"x","logit_bias":[1]})", "logit_bias"},
      {R"({"prompt":"x","allowed_token_ids":[]})", "allowed_token_ids"},
      {R"({"prompt":"x","allowed_token_ids":[-1]})", "allowed_token_ids"},
      {R"({"prompt":"x","allowed_token_ids":"1"})", "allowed_token_ids"},
      {R"({"prompt":"x","bad_words":[""]})", "bad_words"},
      {R"({"prompt":"x","bad_words":[1]})", "bad_words"},
      {R"({"prompt":"x","logprobs":21})", "logprobs"},
      {R"({"prompt":"x","logprobs":-1})", "logprobs"},  // the whole vocabulary > 20
      {R"({"prompt":"x","prompt_logprobs":21})", "prompt_logprobs"},
      {R"({"prompt":"x","prompt_logprobs":1,"stream":true})", "prompt_logprobs"},
      {R"({"prompt":"x","truncate_prompt_tokens":0})", "truncate_prompt_tokens"},
      {R"({"prompt":"x","truncate_prompt_tokens":-2})", "truncate_prompt_tokens"},
      {R"({"prompt":"x","truncation_side":"middle"})", "truncation_side"},
      {R"({"prompt":"x","priority":"high"})", "priority"},
      {R"({"prompt":"x","use_beam_search":true})", "use_beam_search"},
      {R"({"prompt":"x","length_penalty":0.5})", "length_penalty"},
      {R"({"prompt":"x","best_of":3})", "best_of"},
      {R"({"prompt":"x","suffix":"end"})", "suffix"},
      {R"({"prompt":"x","prompt_embeds":"AAAA"})", "prompt_embeds"},
      {R"({"prompt":"x","logits_processors":["a.b"]})", "logits_processors"},
      {R"({"prompt":"x","cache_salt":""})", "cache_salt"},
      {R"({"prompt":"x","cache_salt":5})", "cache_salt"},
      {R"({"prompt":"x","kv_transfer_params":{"a":1}})", "kv_transfer_params"},
      {R"({"prompt":"x","logprob_token_ids":[1]})", "logprob_token_ids"},
      {R"({"prompt":"x","thinking_token_budget":-2})", "thinking_token_budget"},
      {R"({"prompt":"x","stream_interval":4})", "stream_interval"},
      {R"({"prompt":"x","watermarking":true})", "watermarking"},
      // Structured outputs: at most one constraint, each well-formed.
      {R"({"prompt":"x","guided_regex":"a+","guided_choice":["a"]})", "guided_choice"},
      {R"({"prompt":"x","guided_json":{"type":"object"},"response_format":{"type":"json_object"}})",
       "guided_json"},
      {R"({"prompt":"x","structured_outputs":{"regex":"a","choice":["a"]}})", "structured_outputs"},
      {R"({"prompt":"x","structured_outputs":{"no_such_key":1}})", "structured_outputs"},
      {R"({"prompt":"x","guided_choice":"a"})", "guided_choice"},
      {R"({"prompt":"x","guided_regex":5})", "guided_regex"},
      {R"({"prompt":"x","response_format":{"type":"xml"}})", "response_format"},
      {R"({"prompt":"x","structural_tag":"{}"})", "structural_tag"},
  };
  for (const auto& c : completion) {
    ApiError e = error_of([&] { parse_completion_request(J(c.body)); });
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body << " -> " << e.what();
  }
  const Case chat[] = {
      {R"({"messages":[{"role":"user","content":"x"}],"continue_final_message":true,
           "add_generation_prompt":true})",
       "continue_final_message"},
      // tool_choice needs tools; a named tool must be one of them; tools must be well-formed.
      {R"({"messages":[{"role":"user","content":"x"}],"tool_choice":"required"})", "tool_choice"},
      {R"({"messages":[{"role":"user","content":"x"}],
           "tools":[{"type":"function","function":{"name":"g"}}],
           "tool_choice":{"type":"function","function":{"name":"f"}}})",
       "tool_choice"},
      {R"({"messages":[{"role":"user","content":"x"}],
           "tools":[{"type":"function","function":{"name":"g"}}],"tool_choice":"sometimes"})",
       "tool_choice"},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function"}]})", "tools"},
      {R"({"messages":[{"role":"user","content":"x"}],
           "tools":[{"type":"function","function":{"name":"g","parameters":"x"}}]})",
       "tools[0].function.parameters"},
      {R"({"messages":[{"role":"user","content":"x"}],"tools":[]})", "tools"},
      // A forced tool call and a response_format cannot both constrain the output.
      {R"({"messages":[{"role":"user","content":"x"}],
           "tools":[{"type":"function","function":{"name":"g"}}],"tool_choice":"required",
           "response_format":{"type":"json_object"}})",
       "response_format"},
      {R"({"messages":[{"role":"user","content":"x"}],
           "response_format":{"type":"json_schema","json_schema":{}}})",
       "response_format"},
      {R"({"messages":[{"role":"user","content":"x","tool_calls":[{"function":{}}]},
           {"role":"assistant","content":null,"tool_calls":[{"function":{"arguments":"{}"}}]}]})",
       "messages[1].tool_calls"},
      {R"({"messages":[{"role":"user","content":"x"}],"mm_processor_kwargs":{"a":1}})",
       "mm_processor_kwargs"},
      {R"({"messages":[{"role":"user","content":"x"}],"reasoning_effort":"extreme"})",
       "reasoning_effort"},
      {R"({"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":21})",
       "top_logprobs"},
  };
  for (const auto& c : chat) {
    ApiError e = error_of([&] { parse_chat_request(J(c.body)); });
    EXPECT_EQ(e.status(), 400) << c.body;
    EXPECT_EQ(e.param(), c.param) << c.body << " -> " << e.what();
  }
  // tool_choice none and response_format text change nothing; constraints land in the request.
  EXPECT_NO_THROW(parse_chat_request(J(R"({"messages":[{"role":"user","content":"x"}],
      "tool_choice":"none","response_format":{"type":"text"}})")));
  const ChatRequest js = parse_chat_request(J(R"({"messages":[{"role":"user","content":"x"}],
      "response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"integer"}}}})"));
  ASSERT_TRUE(js.constraint);
  EXPECT_EQ(js.constraint->kind, engine::so::GrammarKind::kJsonSchema);
  EXPECT_EQ(nlohmann::json::parse(js.constraint->text), nlohmann::json({{"type", "integer"}}));
  const CompletionRequest ch =
      parse_completion_request(J(R"({"prompt":"x","structured_outputs":{"choice":["a","b"]}})"));
  ASSERT_TRUE(ch.constraint);
  EXPECT_EQ(ch.constraint->kind, engine::so::GrammarKind::kChoice);
  EXPECT_EQ(nlohmann::json::parse(ch.constraint->text), nlohmann::json({"a", "b"}));
  // guided_decoding_backend is accepted and only noted (as vLLM, which ignores it).
  EXPECT_FALSE(parse_completion_request(J(R"({"prompt":"x","guided_regex":"a",
      "guided_decoding_backend":"xgrammar"})"))
                   .debug_notes.empty());
  // A history with a tool call: content null becomes "", arguments are parsed into objects.
  const ChatRequest hist = parse_chat_request(J(R"({"messages":[{"role":"user","content":"x"},
      {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
       "function":{"name":"f","arguments":"{\"a\": 1}"}}]},
      {"role":"tool","tool_call_id":"c1","content":"r"}]})"));
  EXPECT_EQ(hist.messages[1]["content"], "");
  EXPECT_EQ(hist.messages[1]["tool_calls"][0]["function"]["arguments"],
            nlohmann::ordered_json({{"a", 1}}));
  EXPECT_EQ(hist.messages[2]["tool_call_id"], "c1");
  // --max-logprobs raises or removes the limit.
  ParseOptions o;
  o.max_logprobs = 50;
  EXPECT_EQ(*parse_completion_request(J(R"({"prompt":"x","logprobs":40})"), o).sampling.logprobs,
            40);
  o.max_logprobs = -1;
  EXPECT_EQ(*parse_completion_request(J(R"({"prompt":"x","logprobs":-1})"), o).sampling.logprobs,
            -1);
}

TEST(ProtocolFields, GenerationConfigDefaultsFillOnlyUnsetFieldsAndCapMaxTokens) {
  ParseOptions o;
  o.defaults.merge(nlohmann::json::parse(
                       R"({"temperature":0.6,"top_p":0.95,"top_k":20,"max_new_tokens":8,
                           "do_sample":true,"eos_token_id":[1,2]})"),
                   "test");
  auto r = parse_completion_request(J(R"({"prompt":"x","top_p":0.5,"max_tokens":100})"), o);
  EXPECT_FLOAT_EQ(r.sampling.temperature, 0.6f);  // from the config
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.5f);        // the request's own
  EXPECT_EQ(r.sampling.top_k, 20);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.0f);  // unset in both: OpenAI's default
  EXPECT_EQ(*r.sampling.max_tokens, 8);     // capped by max_new_tokens
  auto c = parse_chat_request(J(R"({"messages":[{"role":"user","content":"x"}]})"), o);
  EXPECT_EQ(*c.sampling.max_tokens, 8);  // chat's "whatever fits" becomes the cap
  // What the start-up line prints: the fields set, named as vLLM prints them.
  const auto j = o.defaults.to_json();
  EXPECT_EQ(j.size(), 4u);
  EXPECT_EQ(j["max_tokens"], 8);
  EXPECT_EQ(j["top_k"], 20);
  EXPECT_TRUE(j.contains("temperature") && j.contains("top_p"));
}

struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("vllm_resolver_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(reinterpret_cast<uintptr_t>(this)));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

void touch(const fs::path& p, const std::string& text = "{}") {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(ModelResolver, FindsSnapshotsGgufQuantsAndSaysWhereItLooked) {
  TempDir t;
  const fs::path repo = t.path / "hub" / "models--Org--Model-1.5B";
  touch(repo / "refs" / "main", "abc123\n");
  touch(repo / "snapshots" / "abc123" / "config.json");
  touch(repo / "snapshots" / "abc123" / "generation_config.json", R"({"temperature":0.7})");
  touch(repo / "refs" / "v2", "def456");
  touch(repo / "snapshots" / "def456" / "config.json");
  const fs::path grepo = t.path / "hub" / "models--Org--Model-GGUF";
  touch(grepo / "refs" / "main", "g1");
  for (const char* f : {"model-Q4_K_M.gguf", "model-Q4_K_S.gguf", "model-Q8_0.gguf"})
    touch(grepo / "snapshots" / "g1" / f, "GGUF");
  ::setenv("HF_HUB_CACHE", (t.path / "hub").c_str(), 1);

  ResolvedModel m = resolve_model("Org/Model-1.5B");
  EXPECT_EQ(fs::path(m.path), repo / "snapshots" / "abc123");
  EXPECT_EQ(resolve_model("Org/Model-1.5B", "v2").path, (repo / "snapshots" / "def456").string());
  EXPECT_EQ(resolve_model("Org/Model-1.5B", "def456").path,
            (repo / "snapshots" / "def456").string());
  // generation_config.json of the snapshot is what --generation-config auto reads.
  EXPECT_FLOAT_EQ(*load_generation_defaults("auto", m.folder).temperature, 0.7f);
  EXPECT_TRUE(load_generation_defaults("vllm", m.folder).empty());
  EXPECT_TRUE(
      load_generation_defaults("auto", (grepo / "snapshots" / "g1" / "model-Q8_0.gguf").string())
          .empty());
  // QUANT picks one file, case-insensitively; Q4_K_M does not also match Q4_K_S.
  EXPECT_EQ(fs::path(resolve_model("Org/Model-GGUF:q4_k_m").path).filename(), "model-Q4_K_M.gguf");
  EXPECT_EQ(fs::path(resolve_model("Org/Model-GGUF:Q8_0").path).filename(), "model-Q8_0.gguf");
  EXPECT_EQ(fs::path(resolve_model("Org/Model-GGUF", "main", "model-Q8_0.gguf").path).filename(),
            "model-Q8_0.gguf");
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // Q4_K is ambiguous (Q4_K_M, Q4_K_S): both are listed.
  std::string e = message([] { resolve_model("Org/Model-GGUF:Q4_K"); });
  EXPECT_NE(e.find("model-Q4_K_S.gguf"), std::string::npos) << e;
  e = message([] { resolve_model("Org/Model-GGUF:Q2_K"); });
  EXPECT_NE(e.find("model-Q8_0.gguf"), std::string::npos) << e;  // what there is
  e = message([] { resolve_model("Org/Model-GGUF"); });
  EXPECT_NE(e.find("Org/Model-GGUF:QUANT"), std::string::npos) << e;
  e = message([] { resolve_model("Qwen/Qwen3-0.6B"); });
  EXPECT_NE(e.find((t.path / "hub" / "models--Qwen--Qwen3-0.6B").string()), std::string::npos) << e;
  EXPECT_NE(e.find("Nothing is downloaded"), std::string::npos) << e;
  e = message([] { resolve_model("Org/Model-1.5B", "v9"); });
  EXPECT_NE(e.find("refs/v9"), std::string::npos) << e;
  e = message([] { resolve_model("./no/such/dir/at/all"); });
  EXPECT_NE(e.find("no such file or folder"), std::string::npos) << e;
  // HF_HOME/hub is the fallback.
  ::unsetenv("HF_HUB_CACHE");
  ::setenv("HF_HOME", t.path.c_str(), 1);
  EXPECT_EQ(resolve_model("Org/Model-1.5B").path, (repo / "snapshots" / "abc123").string());
  ::unsetenv("HF_HOME");
  // A local path always wins.
  EXPECT_EQ(resolve_model(t.path.string()).path, t.path.string());
}

}  // namespace
}  // namespace vllm::api
