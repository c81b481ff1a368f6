// --tool-call-parser olmo3, phi4_mini_json and internlm (marked_calls_parser.h,
// pythonic_tool_parser.h) against what vLLM 0.33's own parsers return:
// tests/golden/tool_parsers/olmo3.json, phi4_mini_json.json and internlm.json, made by
//   python3 tools/make_qwen3_coder_parser_goldens.py --parser olmo3 (phi4_mini_json, internlm)
// Whole responses must equal vLLM's (but for the Phi-4 arrays vLLM cuts at their first "]" and
// the InternLM outputs vLLM's parser raises on, checked here on their own); streams cut anywhere
// must end as the whole response does, but for the text before a marker, which went out as
// content before the calls were known.
#include <gtest/gtest.h>

#include <set>

#include "api/server/marked_calls_parser.h"
#include "api/server/pythonic_tool_parser.h"
#include "parser_goldens.h"

namespace vllm::api {
namespace {

using namespace goldens;

// vLLM reads the array up to its first "]" and answers an empty message when that is not JSON.
const std::set<std::string> kPhi4Cut = {"nested_array", "bracket_in_string", "bad_json"};

void check_golden(const char* file, const char* marker, size_t min_cases) {
  const ojson& g = cached(file);
  ASSERT_GE(g["cases"].size(), min_cases) << file;
  size_t with_calls = 0;
  for (const auto& c : g["cases"]) {
    const std::string name = c["name"].get<std::string>();
    const std::string at = name + " / " + file;
    const std::string text = c["text"].get<std::string>();
    const Composed k = compose(nullptr, ojson::object(), "", g["parser"], g["tools"], g["tags"]);
    const Result w = whole(k, text);
    if (kPhi4Cut.count(name) && std::string(file) == "phi4_mini_json.json") continue;
    if (c["whole"].contains("raises")) {
      // vLLM's parser raises (its chat serving answers an error): the output is content here.
      EXPECT_EQ(w.content, text) << at;
      EXPECT_TRUE(w.calls.empty()) << at;
      continue;
    }
    expect_whole(w, c["whole"], at);
    if (!w.calls.empty()) ++with_calls;
    // Text before the marker went out as content; the rest ends as the whole response.
    const size_t m = text.find(marker);
    const std::string before =
        !w.calls.empty() && m != std::string::npos && !py_all_space(text.substr(0, m))
            ? text.substr(0, m)
            : "";
    const std::string expect = before.empty() ? w.content.value_or("") : before;
    for (const auto& pieces : chunkings(text, g["tags"], 29)) {
      const Streamed s = stream(k, pieces);
      EXPECT_EQ(s.content, expect) << at << " " << pieces.size();
      EXPECT_EQ(s.calls, w.calls) << at << " " << pieces.size();
    }
  }
  EXPECT_GE(with_calls, 8u) << file;
}

TEST(Olmo3ToolGolden, WholeResponsesAreVllmsAndStreamsEndAlike) {
  check_golden("olmo3.json", "<function_calls>", 28);
  EXPECT_EQ(tool_parser_by_name("olmo3"), ToolParserKind::kOlmo3);
}

TEST(Phi4MiniJsonToolGolden, WholeResponsesAreVllmsAndStreamsEndAlike) {
  check_golden("phi4_mini_json.json", "functools[", 26);
  EXPECT_EQ(tool_parser_by_name("phi4_mini_json"), ToolParserKind::kPhi4MiniJson);
}

TEST(InternlmToolGolden, WholeResponsesAreVllmsAndStreamsEndAlike) {
  check_golden("internlm.json", "<|action_start|><|plugin|>", 20);
  EXPECT_EQ(tool_parser_by_name("internlm"), ToolParserKind::kInternlm);
  // The text before the call stays the content, in streams as in whole responses.
  auto p = ToolCallParser::make(ToolParserKind::kInternlm, ToolParserOptions());
  ParsedDelta d;
  p->feed("Checking.<|action_start|>", d);
  EXPECT_EQ(d.content, "Checking.");  // <|action_start|> may begin the marker
  p->feed("<|plugin|>{\"name\": \"now\", \"parameters\": {}}<|action_end|>", d);
  p->finish(d);
  EXPECT_EQ(d.content, "Checking.");
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_EQ(d.calls[0].name, "now");
}

TEST(Phi4MiniJsonToolGolden, ArraysAreReadWholeWhereVllmCutsThem) {
  const ojson& g = cached("phi4_mini_json.json");
  size_t seen = 0;
  for (const auto& c : g["cases"]) {
    const std::string name = c["name"].get<std::string>();
    if (!kPhi4Cut.count(name)) continue;
    ++seen;
    // vLLM's answer: no calls and no content at all.
    EXPECT_TRUE(c["whole"]["content"].is_null()) << name;
    EXPECT_TRUE(c["whole"]["tool_calls"].empty()) << name;
    const ExtractedToolCalls r =
        extract_tool_calls(ToolParserKind::kPhi4MiniJson, c["text"].get<std::string>());
    if (name == "bad_json") {
      EXPECT_FALSE(r.tools_called);
      EXPECT_EQ(r.content, c["text"].get<std::string>());
    } else {
      ASSERT_EQ(r.calls.size(), 1u) << name;
      EXPECT_EQ(r.content, std::nullopt) << name;
    }
  }
  EXPECT_EQ(seen, kPhi4Cut.size());
  EXPECT_EQ(parse_phi4_mini_json_calls(
                R"(functools[{"name": "get_weather", "arguments": {"tags": ["a", "b"]}}])")
                ->at(0)
                .second,
            R"({"tags": ["a", "b"]})");
  EXPECT_EQ(parse_phi4_mini_json_calls(
                R"(functools[{"name": "write_file", "arguments": {"content": "x]"}}])")
                ->at(0)
                .second,
            R"({"content": "x]"})");
}

TEST(MarkedCallsParser, ContentStreamsAsItComesAndAMarkerWaits) {
  auto p = ToolCallParser::make(ToolParserKind::kOlmo3, ToolParserOptions());
  ParsedDelta d;
  p->feed("1 < 2 and <fun", d);
  EXPECT_EQ(d.content, "1 < 2 and ");  // "<fun" may begin <function_calls>
  p->feed("ny>", d);
  EXPECT_EQ(d.content, "1 < 2 and <funny>");
  p->feed(" <function_calls>now()", d);
  EXPECT_EQ(d.content, "1 < 2 and <funny> ");
  EXPECT_TRUE(d.calls.empty());
  p->feed("</function_calls>", d);
  p->finish(d);
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_EQ(d.calls[0].name, "now");
  EXPECT_EQ(d.calls[1].arguments, "{}");
  // A bare call line at the start is held to the end.
  auto q = ToolCallParser::make(ToolParserKind::kOlmo3, ToolParserOptions());
  ParsedDelta e;
  q->feed("  get_weather(city=", e);
  EXPECT_EQ(e.content, "");
  q->feed("'Oslo')\nnow()", e);
  q->finish(e);
  EXPECT_EQ(e.content, "");
  ASSERT_EQ(e.calls.size(), 4u);
  EXPECT_EQ(e.calls[1].arguments, R"({"city": "Oslo"})");
  // Text that cannot be a call list goes out at once.
  auto r = ToolCallParser::make(ToolParserKind::kOlmo3, ToolParserOptions());
  ParsedDelta f;
  r->feed("The", f);
  EXPECT_EQ(f.content, "");  // "The(" could follow
  r->feed(" weather", f);
  EXPECT_EQ(f.content, "The weather");
}

}  // namespace
}  // namespace vllm::api
