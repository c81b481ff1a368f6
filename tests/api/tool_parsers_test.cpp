// Tool-call parsers (src/api/server/tool_parsers.h) and the Python-compatible JSON writer they
// use for arguments (py_json.h): arguments as vLLM's json.dumps writes them (goldens from
// tools/make_py_json_goldens.py), each format's calls and content as vLLM's parsers return
// them, and streamed deltas — whatever the chunking — reassembling to the whole result.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "api/server/py_json.h"
#include "api/server/tool_parsers.h"

namespace vllm::api {
namespace {

TEST(PyJson, MatchesPythonJsonDumps) {
  std::ifstream f(std::string(VLLM_SOURCE_DIR) + "/tests/golden/tool_calls/py_json.json");
  std::stringstream ss;
  ss << f.rdbuf();
  const auto g = nlohmann::json::parse(ss.str());
  ASSERT_GE(g["cases"].size(), 10u);
  for (const auto& c : g["cases"]) {
    const std::string in = c["input"], want = c["expected"];
    std::string out;
    ASSERT_TRUE(py_json_dumps(in, out)) << in;
    EXPECT_EQ(out, want) << in;
    // Streaming one character at a time gives the same text.
    JsonCanonicalizer jc;
    std::string streamed;
    for (char ch : in) jc.feed(ch, streamed);
    jc.finish(streamed);
    EXPECT_EQ(streamed, want) << in;
  }
  std::string out;
  EXPECT_FALSE(py_json_dumps("{\"a\": }", out));
}

// Feeds `text` in chunks of random sizes (at UTF-8 boundaries: the test texts are ASCII) and
// reassembles content and calls as a client would.
ExtractedToolCalls stream(ToolParserKind k, const std::string& text, uint64_t seed,
                          const std::string& named = {}) {
  auto p = ToolCallParser::make(k, named);
  std::mt19937_64 rng(seed);
  ParsedDelta d;
  for (size_t i = 0; i < text.size();) {
    const size_t n = std::min<size_t>(text.size() - i, 1 + rng() % 7);
    p->feed(std::string_view(text).substr(i, n), d);
    i += n;
  }
  p->finish(d);
  ExtractedToolCalls r;
  r.content = d.content;
  for (auto& t : d.calls) {
    if (t.header) {
      EXPECT_TRUE(t.arguments.empty());
      r.calls.push_back({t.id, t.name, ""});
    } else {
      r.calls.back().arguments += t.arguments;
    }
  }
  return r;
}

struct Case {
  ToolParserKind kind;
  std::string output;
  std::vector<std::pair<std::string, std::string>> calls;  // name, raw arguments JSON
  std::optional<std::string> content;
};

TEST(ToolParsers, WholeAndStreamedAgree) {
  const Case cases[] = {
      {ToolParserKind::kHermes,
       "Let me look.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\":\"Paris\", "
       "\"n\": 1.50}}\n</tool_call>\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n"
       "</tool_call>",
       {{"get_weather", "{\"city\":\"Paris\", \"n\": 1.50}"}, {"now", "{}"}},
       "Let me look.\n"},
      {ToolParserKind::kHermes, "No tools needed, 2 < 3.", {}, "No tools needed, 2 < 3."},
      {ToolParserKind::kLlama3Json,
       "{\"name\": \"search\", \"parameters\": {\"q\": \"caf\\u00e9\"}}; {\"name\": \"now\", "
       "\"arguments\": {}}",
       {{"search", "{\"q\": \"caf\\u00e9\"}"}, {"now", "{}"}},
       std::nullopt},
      {ToolParserKind::kLlama3Json, "Plain answer.", {}, "Plain answer."},
      {ToolParserKind::kMistral,
       "Sure. [TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}, "
       "{\"name\": \"now\", \"arguments\": {}}]",
       {{"get_weather", "{\"city\": \"Oslo\"}"}, {"now", "{}"}},
       "Sure. "},
      {ToolParserKind::kRequired,
       "[\n {\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\"}}]",
       {{"get_weather", "{\"city\": \"Rome\"}"}},
       ""},
  };
  for (const Case& c : cases) {
    const ExtractedToolCalls whole = extract_tool_calls(c.kind, c.output);
    ASSERT_EQ(whole.calls.size(), c.calls.size()) << c.output;
    EXPECT_EQ(whole.tools_called, !c.calls.empty()) << c.output;
    for (size_t i = 0; i < c.calls.size(); ++i) {
      std::string args;
      ASSERT_TRUE(py_json_dumps(c.calls[i].second, args));
      EXPECT_EQ(whole.calls[i].name, c.calls[i].first) << c.output;
      EXPECT_EQ(whole.calls[i].arguments, args) << c.output;
      EXPECT_EQ(whole.calls[i].id.size(), c.kind == ToolParserKind::kMistral ? 9u : 14u + 32u);
    }
    EXPECT_EQ(whole.content, c.content) << c.output;
    for (uint64_t seed = 0; seed < 20; ++seed) {
      const ExtractedToolCalls s = stream(c.kind, c.output, seed);
      ASSERT_EQ(s.calls.size(), whole.calls.size()) << c.output << " seed " << seed;
      for (size_t i = 0; i < s.calls.size(); ++i) {
        EXPECT_EQ(s.calls[i].name, whole.calls[i].name);
        EXPECT_EQ(s.calls[i].arguments, whole.calls[i].arguments) << c.output << " " << seed;
      }
      if (c.kind == ToolParserKind::kHermes || c.kind == ToolParserKind::kMistral)
        EXPECT_EQ(s.content.value_or(""), whole.content.value_or("")) << c.output;
    }
  }
}

TEST(ToolParsers, NamedFunctionTakesTheWholeOutputAsArguments) {
  const std::string out = "{\"tz\": \"UTC\"}";
  const ExtractedToolCalls w = extract_tool_calls(ToolParserKind::kNamed, out, "get_time");
  ASSERT_EQ(w.calls.size(), 1u);
  EXPECT_EQ(w.calls[0].name, "get_time");
  EXPECT_EQ(w.calls[0].arguments, out);  // vLLM returns the text itself
  const ExtractedToolCalls s = stream(ToolParserKind::kNamed, out, 3, "get_time");
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0].arguments, out);
}

TEST(ToolParsers, BrokenCallFallsBackToContent) {
  const std::string bad = "<tool_call>\n{\"name\": \"x\", \"arguments\": {oops}}\n</tool_call>";
  const ExtractedToolCalls w = extract_tool_calls(ToolParserKind::kHermes, bad);
  EXPECT_TRUE(w.calls.empty());
  EXPECT_EQ(w.content, bad);
}

TEST(ToolParsers, ParserNames) {
  EXPECT_EQ(tool_parser_by_name("hermes"), ToolParserKind::kHermes);
  EXPECT_EQ(tool_parser_by_name("llama3_json"), ToolParserKind::kLlama3Json);
  // vLLM 0.33's aliases.
  EXPECT_EQ(tool_parser_by_name("qwen3_json"), ToolParserKind::kHermes);
  EXPECT_EQ(tool_parser_by_name("llama4_json"), ToolParserKind::kLlama3Json);
  EXPECT_EQ(tool_parser_by_name("mistral"), ToolParserKind::kMistral);
  EXPECT_EQ(tool_parser_by_name("pythonic"), ToolParserKind::kPythonic);
  EXPECT_FALSE(tool_parser_by_name("llama4_pythonic"));  // Llama 4 is not served here
  EXPECT_EQ(tool_parser_by_name("granite"), ToolParserKind::kGranite);
  // vLLM's other Granite parsers (Granite 20B FC, Granite 4) are not implemented here.
  EXPECT_FALSE(tool_parser_by_name("granite-20b-fc"));
  EXPECT_FALSE(tool_parser_by_name("granite4"));
}

}  // namespace
}  // namespace vllm::api
