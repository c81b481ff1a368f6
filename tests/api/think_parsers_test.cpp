// The <think> reasoning parsers --reasoning-parser qwen3 / deepseek_r1 / deepseek_v3 (reasoning_
// parser.h), alone and with --tool-call-parser hermes, as the chat serving composes them
// (Generation: reasoning_enabled over the request's chat_template_kwargs, the prompt's
// prompt_ends_reasoning, parse_chat_output for whole responses, the stream splitter then the
// tool parser for streams).
//
// The gate: tests/golden/tool_parsers/think.json holds what vLLM 0.33 itself returns for 19
// outputs after four prompts under twelve configurations, whole (with the usage's
// reasoning_tokens) and streamed one token per delta (tools/make_reasoning_parser_goldens.py runs
// vLLM's own parsers). Whole responses must equal vLLM's, and so must token-by-token streams;
// streams cut anywhere else must reassemble to the token-by-token one.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "api/server/py_str.h"
#include "api/server/reasoning_parser.h"
#include "api/server/serving.h"
#include "api/server/tool_parsers.h"

namespace vllm::api {
namespace {

using ojson = nlohmann::ordered_json;
using Calls = std::vector<std::pair<std::string, std::string>>;  // name, arguments

const ojson& golden() {
  static const ojson g = [] {
    std::ifstream f(std::string(VLLM_SOURCE_DIR) + "/tests/golden/tool_parsers/think.json");
    return ojson::parse(f);
  }();
  return g;
}

// The golden's stand-in tokenizer: its tags are single tokens, every other character (a whole
// UTF-8 sequence) is a token of its own.
std::vector<std::string> tokens(const std::string& t) {
  std::vector<std::string> out;
  for (size_t i = 0; i < t.size();) {
    size_t n = 0;
    for (const auto& [tag, id] : golden()["tags"].items())
      if (t.compare(i, tag.size(), tag) == 0) n = tag.size();
    if (n == 0) utf8_at(t, i, n);
    out.push_back(t.substr(i, n));
    i += n;
  }
  return out;
}

std::optional<int32_t> id_of(std::string_view s) {
  const ojson& tags = golden()["tags"];
  const auto it = tags.find(std::string(s));
  if (it == tags.end()) return std::nullopt;
  return it->get<int32_t>();
}

std::vector<int32_t> ids(const std::string& text) {
  std::vector<int32_t> out;
  for (const std::string& t : tokens(text)) {
    if (auto id = id_of(t)) {
      out.push_back(*id);
    } else {
      size_t n = 0;
      out.push_back(1000 + static_cast<int32_t>(utf8_at(t, 0, n)));
    }
  }
  return out;
}

// What Generation sets up for one request.
struct Composed {
  std::optional<ReasoningParserKind> reasoning;  // null when the request does not think
  bool thought = false;                          // the prompt closed the reasoning
  bool prompt_closed = false;                    // ... and a whole output starts in the content
  std::optional<ToolParserKind> tools;
  ToolParserOptions tool_options;
};

Composed setup_of(const ojson& c) {
  Composed s;
  const ReasoningParserKind kind =
      *reasoning_parser_by_name(c["reasoning_parser"].get<std::string>());
  if (reasoning_enabled(kind, c["chat_template_kwargs"])) s.reasoning = kind;
  const ThinkTags tags = think_tags(id_of, kind);
  s.thought = prompt_ends_reasoning(
      ids(golden()["prompts"][c["prompt"].get<std::string>()].get<std::string>()), tags, kind);
  s.prompt_closed = s.thought && !tags.boundaries.empty();
  if (!c["tool_parser"].is_null()) {
    s.tools = tool_parser_by_name(c["tool_parser"].get<std::string>());
    s.tool_options.tools = golden()["tools"];
    s.tool_options.reasoning_markup = true;  // a reasoning parser runs (Generation)
  }
  return s;
}

struct Result {
  std::optional<std::string> reasoning, content;
  Calls calls;
};

Result whole(const Composed& s, const std::string& text) {
  ParsedChatOutput p =
      parse_chat_output(text, s.reasoning, s.prompt_closed, s.tools, s.tool_options);
  Result r{p.reasoning, p.content, {}};
  for (const ToolCall& t : p.tools.calls) r.calls.emplace_back(t.name, t.arguments);
  return r;
}

struct Streamed {
  std::string reasoning, content;
  Calls calls;
};

Streamed stream(const Composed& s, const std::vector<std::string>& pieces) {
  std::optional<ReasoningStreamSplitter> sp;
  if (s.reasoning) sp.emplace(*s.reasoning, s.thought);
  std::unique_ptr<ToolCallParser> tp;
  if (s.tools) tp = ToolCallParser::make(*s.tools, s.tool_options);
  Streamed out;
  auto step = [&](const std::string& delta, bool done) {
    std::string text = delta;
    if (sp) {
      auto [r, t] = sp->feed(delta);
      if (done) {
        auto [r2, t2] = sp->finish();
        r += r2;
        t += t2;
      }
      out.reasoning += r;
      text = t;
    }
    if (!tp) {
      out.content += text;
      return;
    }
    ParsedDelta d;
    tp->feed(text, d);
    if (done) tp->finish(d);
    out.content += d.content;
    for (const ToolCallDelta& c : d.calls) {
      if (c.header)
        out.calls.emplace_back(c.name, "");
      else
        out.calls.back().second += c.arguments;
    }
  };
  for (const std::string& p : pieces) step(p, false);
  step("", true);
  return out;
}

std::optional<std::string> opt_string(const ojson& v) {
  return v.is_null() ? std::nullopt : std::optional<std::string>(v.get<std::string>());
}

Calls calls_of(const ojson& v) {
  Calls c;
  for (const auto& t : v) c.emplace_back(t[0].get<std::string>(), t[1].get<std::string>());
  return c;
}

std::string label(const ojson& c) {
  return c["name"].get<std::string>() + " / " + c["reasoning_parser"].get<std::string>() +
         c["chat_template_kwargs"].dump() + " + " + c["tool_parser"].dump() + " after " +
         c["prompt"].get<std::string>();
}

TEST(ThinkParsersGolden, WholeResponsesAreVllms) {
  const ojson& g = golden();
  ASSERT_GE(g["cases"].size(), 900u);
  for (const auto& c : g["cases"]) {
    const Result w = whole(setup_of(c), c["text"].get<std::string>());
    EXPECT_EQ(w.reasoning, opt_string(c["whole"]["reasoning"])) << label(c);
    EXPECT_EQ(w.content, opt_string(c["whole"]["content"])) << label(c);
    EXPECT_EQ(w.calls, calls_of(c["whole"]["tool_calls"])) << label(c);
    // usage.completion_tokens_details.reasoning_tokens, as Generation::reasoning_tokens.
    const Composed s = setup_of(c);
    const int64_t n =
        s.reasoning ? count_reasoning_tokens(*s.reasoning, think_tags(id_of, *s.reasoning),
                                             ids(c["text"].get<std::string>()), s.prompt_closed)
                    : 0;
    EXPECT_EQ(n, c["whole"]["reasoning_tokens"].get<int64_t>()) << label(c);
  }
}

TEST(ThinkParsersGolden, TokenByTokenStreamsAreVllms) {
  for (const auto& c : golden()["cases"]) {
    const Streamed s = stream(setup_of(c), tokens(c["text"].get<std::string>()));
    EXPECT_EQ(s.reasoning, c["stream"]["reasoning"].get<std::string>()) << label(c);
    EXPECT_EQ(s.content, c["stream"]["content"].get<std::string>()) << label(c);
    EXPECT_EQ(s.calls, calls_of(c["stream"]["tool_calls"])) << label(c);
  }
}

TEST(ThinkParsersGolden, StreamsCutAnywhereReassembleAlike) {
  std::mt19937_64 rng(5);
  for (const auto& c : golden()["cases"]) {
    const Composed s = setup_of(c);
    const std::string text = c["text"].get<std::string>();
    const Streamed ref = stream(s, tokens(text));
    std::vector<std::vector<std::string>> cuts = {{text}};
    for (size_t a = 1; a < text.size(); ++a) cuts.push_back({text.substr(0, a), text.substr(a)});
    for (int k = 0; k < 10; ++k) {
      std::vector<std::string> v;
      for (size_t i = 0; i < text.size();) {
        const size_t n = std::min<size_t>(text.size() - i, 1 + rng() % 6);
        v.push_back(text.substr(i, n));
        i += n;
      }
      cuts.push_back(v);
    }
    for (const auto& pieces : cuts) {
      const Streamed x = stream(s, pieces);
      const std::string at = label(c) + " (" + std::to_string(pieces.size()) + " pieces)";
      EXPECT_EQ(x.reasoning, ref.reasoning) << at;
      EXPECT_EQ(x.content, ref.content) << at;
      EXPECT_EQ(x.calls, ref.calls) << at;
    }
  }
}

TEST(ThinkParsers, WhoThinks) {
  const auto kw = [](const char* s) { return ojson::parse(s); };
  using K = ReasoningParserKind;
  EXPECT_TRUE(reasoning_enabled(K::kQwen3, ojson()));
  EXPECT_TRUE(reasoning_enabled(K::kQwen3, kw(R"({"thinking": false})")));
  EXPECT_FALSE(reasoning_enabled(K::kQwen3, kw(R"({"enable_thinking": false})")));
  EXPECT_FALSE(reasoning_enabled(K::kQwen3, kw(R"({"enable_thinking": null})")));
  EXPECT_FALSE(reasoning_enabled(K::kQwen3, kw(R"({"enable_thinking": ""})")));
  EXPECT_FALSE(reasoning_enabled(K::kDeepseekV3, ojson::object()));
  EXPECT_TRUE(reasoning_enabled(K::kDeepseekV3, kw(R"({"thinking": 1})")));
  EXPECT_TRUE(
      reasoning_enabled(K::kDeepseekV3, kw(R"({"thinking": false, "enable_thinking": true})")));
  EXPECT_TRUE(reasoning_enabled(K::kDeepseekR1, kw(R"({"thinking": false})")));
  EXPECT_TRUE(reasoning_enabled(K::kGlm45, kw(R"({"other": false})")));
  EXPECT_FALSE(reasoning_enabled(K::kGlm45, kw(R"({"thinking": false})")));
  EXPECT_EQ(reasoning_parser_by_name("deepseek_r1"), K::kDeepseekR1);
  EXPECT_EQ(reasoning_parser_by_name("deepseek_v3"), K::kDeepseekV3);
  EXPECT_EQ(reasoning_parser_by_name("deepseek"), std::nullopt);
}

}  // namespace
}  // namespace vllm::api
