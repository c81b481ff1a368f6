// --tool-call-parser granite (granite_tool_parser.h) against what vLLM 0.33's own engine-based
// GraniteParser returns: tests/golden/tool_parsers/granite.json, made by
//   python3 tools/make_qwen3_coder_parser_goldens.py --parser granite
// Whole responses must equal vLLM's; streams cut anywhere must end as the whole response (vLLM's
// own stream keeps text after the calls, the unstripped name and the uncoerced arguments, and
// sends no arguments that are not an object), but for whitespace before the first word, which
// goes out with it.
#include <gtest/gtest.h>

#include "api/server/granite_tool_parser.h"
#include "parser_goldens.h"

namespace vllm::api {
namespace {

using namespace goldens;

TEST(GraniteToolGolden, WholeResponsesAreVllmsAndStreamsEndAlike) {
  const ojson& g = cached("granite.json");
  ASSERT_GE(g["cases"].size(), 40u);
  size_t with_calls = 0, same_stream = 0;
  for (const auto& c : g["cases"]) {
    const std::string at = c["name"].get<std::string>() + " / granite";
    const std::string text = c["text"].get<std::string>();
    const Composed k = compose(nullptr, ojson::object(), "", g["parser"], g["tools"], g["tags"]);
    const Result w = whole(k, text);
    expect_whole(w, c["whole"], at);
    with_calls += !w.calls.empty();
    for (const auto& pieces : chunkings(text, g["tags"], 37)) {
      const Streamed s = stream(k, pieces);
      expect_content_but_lead(s.content, w.content.value_or(""), !w.calls.empty(),
                              at + " " + std::to_string(pieces.size()));
      EXPECT_EQ(s.calls, w.calls) << at << " " << pieces.size();
    }
    if (vllm_stream_is_whole(c)) {
      ++same_stream;
      expect_stream(stream(k, tokens(text, g["tags"])), c["stream"], at + " (token by token)");
    }
  }
  EXPECT_GE(with_calls, 25u);
  EXPECT_GE(same_stream, 25u);
  EXPECT_EQ(tool_parser_by_name("granite"), ToolParserKind::kGranite);
}

TEST(GraniteToolParser, ArgumentsAsVllmsEngineReadsThem) {
  // The "arguments" object as written, also cut short; "{}" without one.
  EXPECT_EQ(granite_element_arguments(R"({"name": "f", "arguments": {"a":  [1, "}"]}})"),
            R"({"a":  [1, "}"]})");
  EXPECT_EQ(granite_element_arguments(R"({"name": "f", "arguments": {"a": "x)"), R"({"a": "x)");
  EXPECT_EQ(granite_element_arguments(R"({"name": "f"})"), "{}");
  // A key named "arguments" inside another value is not the member.
  EXPECT_EQ(granite_element_arguments(R"({"x": {"arguments": {"b": 1}}, "name": "f"})"), "{}");
  // String values typed by the schema, then written as json.dumps does; nothing to type: as is.
  const ojson tools = ojson::parse(R"([{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "properties": {"n": {"type": "integer"},
      "o": {"type": "object", "properties": {"b": {"type": "boolean"}}},
      "l": {"type": "array", "items": {"type": "number"}}}}}}])");
  EXPECT_EQ(fix_arg_types(R"({"n": "7", "o": {"b": "false"}, "l": ["1.50", 2]})", tools, "f"),
            R"({"n": 7, "o": {"b": false}, "l": [1.5, 2]})");
  EXPECT_EQ(fix_arg_types(R"({"n":7,  "x": "7"})", tools, "f"), R"({"n":7,  "x": "7"})");
  EXPECT_EQ(fix_arg_types(R"({"n": "7")", tools, "f"), R"({"n": "7")");    // not JSON yet
  EXPECT_EQ(fix_arg_types(R"({"n": "7"})", tools, "g"), R"({"n": "7"})");  // no schema
}

}  // namespace
}  // namespace vllm::api
