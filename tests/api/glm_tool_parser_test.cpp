// GLM-4.5 tool calls (--tool-call-parser glm45 / glm47, src/api/server/glm_tool_parser.h) and
// the schema typing of bare-text argument values (schema_coerce.h). Expected values are what
// vLLM 0.33's engine-based Glm47MoeParser returns for the same text (vllm/parser/glm47_moe.py:
// the _ARG_RE regex, json.dumps(ensure_ascii=False); vllm/parser/engine/parser_engine.py:
// _fix_arg_types, _strip_content_whitespace, validate_tool_names; vllm/tool_parsers/utils.py:
// coerce_to_schema_type), worked through by hand in the comments. Streams are fed at every split
// point and reassembled as a client would.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "api/server/schema_coerce.h"
#include "api/server/tool_parsers.h"

namespace vllm::api {
namespace {

using ojson = nlohmann::ordered_json;

const ojson& weather_tools() {
  static const ojson t = ojson::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}, "days": {"type": "integer"},
                     "metric": {"type": "boolean"}, "temp": {"type": "number"},
                     "opts": {"type": "object"}, "tags": {"type": "array"},
                     "note": {"type": ["string", "null"]}}}}},
    {"type": "function", "function": {"name": "now",
      "parameters": {"type": "object", "properties": {}}}}])");
  return t;
}

ToolParserOptions opts(const ojson& tools = weather_tools(), bool markup = false) {
  ToolParserOptions o;
  o.tools = tools;
  o.reasoning_markup = markup;
  return o;
}

ExtractedToolCalls whole(const std::string& text, const ToolParserOptions& o = opts()) {
  return extract_tool_calls(ToolParserKind::kGlm45, text, o);
}

// Feeds the text in the given pieces and reassembles content and calls as a client would.
struct Streamed {
  std::string content;
  std::vector<ToolCall> calls;
};
Streamed stream(const std::vector<std::string>& pieces, const ToolParserOptions& o = opts()) {
  auto p = ToolCallParser::make(ToolParserKind::kGlm45, o);
  Streamed s;
  auto take = [&](ParsedDelta& d) {
    s.content += d.content;
    for (auto& t : d.calls) {
      if (t.header) {
        EXPECT_EQ(t.index, static_cast<int>(s.calls.size()));
        EXPECT_TRUE(t.arguments.empty());
        s.calls.push_back({t.id, t.name, ""});
      } else {
        EXPECT_EQ(t.index + 1, static_cast<int>(s.calls.size())) << "fragment for an old call";
        s.calls.back().arguments += t.arguments;
      }
    }
  };
  for (const std::string& piece : pieces) {
    ParsedDelta d;
    p->feed(piece, d);
    take(d);
  }
  ParsedDelta d;
  p->finish(d);
  take(d);
  return s;
}

// Splits at every point (and at every pair of points when the text is short), one character
// at a time and in random pieces (the texts are ASCII where they are cut).
std::vector<std::vector<std::string>> chunkings(const std::string& t) {
  std::vector<std::vector<std::string>> out;
  for (size_t a = 0; a <= t.size(); ++a) {
    out.push_back({t.substr(0, a), t.substr(a)});
    if (t.size() <= 120)
      for (size_t b = a; b <= t.size(); b += 5)
        out.push_back({t.substr(0, a), t.substr(a, b - a), t.substr(b)});
  }
  std::vector<std::string> chars;
  for (char c : t) chars.emplace_back(1, c);
  out.push_back(chars);
  std::mt19937_64 rng(7);
  for (int k = 0; k < 20; ++k) {
    std::vector<std::string> v;
    for (size_t i = 0; i < t.size();) {
      const size_t n = std::min<size_t>(t.size() - i, 1 + rng() % 9);
      v.push_back(t.substr(i, n));
      i += n;
    }
    out.push_back(v);
  }
  return out;
}

void expect_stream_matches_whole(const std::string& text, const ToolParserOptions& o = opts()) {
  const ExtractedToolCalls w = whole(text, o);
  for (const auto& pieces : chunkings(text)) {
    const Streamed s = stream(pieces, o);
    ASSERT_EQ(s.calls.size(), w.calls.size()) << text;
    for (size_t i = 0; i < w.calls.size(); ++i) {
      EXPECT_EQ(s.calls[i].name, w.calls[i].name) << text;
      EXPECT_EQ(s.calls[i].arguments, w.calls[i].arguments) << text << " / " << pieces.size();
    }
    EXPECT_EQ(s.content, w.content.value_or("")) << text << " / " << pieces.size();
  }
}

struct Expect {
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
  std::optional<std::string> content;
};

void expect_whole(const std::string& text, const Expect& e, const ToolParserOptions& o = opts()) {
  const ExtractedToolCalls w = whole(text, o);
  EXPECT_EQ(w.tools_called, !e.calls.empty()) << text;
  ASSERT_EQ(w.calls.size(), e.calls.size()) << text;
  for (size_t i = 0; i < e.calls.size(); ++i) {
    EXPECT_EQ(w.calls[i].name, e.calls[i].first) << text;
    EXPECT_EQ(w.calls[i].arguments, e.calls[i].second) << text;
    EXPECT_EQ(w.calls[i].id.rfind("chatcmpl-tool-", 0), 0u);
    EXPECT_EQ(w.calls[i].id.size(), 14u + 32u);
  }
  EXPECT_EQ(w.content, e.content) << text;
}

TEST(Glm45ToolParser, SingleCallAfterContent) {
  // Content "I'll check.\n" is stripped because a call was made (strip_content_whitespace_
  // with_tools); the value is the raw text between the tags, a string by the schema.
  const std::string t =
      "I'll check.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Beijing"
      "</arg_value>\n</tool_call>";
  expect_whole(t, {{{"get_weather", R"({"city": "Beijing"})"}}, "I'll check."});
  expect_stream_matches_whole(t);
}

TEST(Glm45ToolParser, SeveralCallsWithTypedArguments) {
  // days: int("3"); metric: "True".lower() is "true"; temp: int("21.50") raises, float gives
  // 21.5; opts / tags: json.loads; note ["string", "null"]: null comes first in vLLM's order.
  // The second call has no <arg_key>: its name ends at </tool_call>, its arguments are {}.
  // Text between and after calls is dropped once a call was made; no content before: null.
  const std::string t =
      "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
      "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n<arg_key>metric</arg_key>\n"
      "<arg_value>True</arg_value>\n<arg_key>temp</arg_key>\n<arg_value>21.50</arg_value>\n"
      "<arg_key>opts</arg_key>\n<arg_value>{\"a\": [1, 2.0], \"b\":\"\\u00e9\"}</arg_value>\n"
      "<arg_key>tags</arg_key>\n<arg_value>[\"x\",\"y\"]</arg_value>\n<arg_key>note</arg_key>\n"
      "<arg_value>null</arg_value>\n</tool_call>\n<tool_call>now\n</tool_call>\nDone.";
  expect_whole(t, {{{"get_weather",
                     R"({"city": "Paris", "days": 3, "metric": true, "temp": 21.5, )"
                     R"("opts": {"a": [1, 2.0], "b": "é"}, "tags": ["x", "y"], "note": null})"},
                    {"now", "{}"}},
                   std::nullopt});
  expect_stream_matches_whole(t);
}

TEST(Glm45ToolParser, ValuesStayStringsWithoutASchema) {
  // No tools in the request: every name is accepted and nothing is coerced (_fix_arg_types
  // returns early). A property the schema does not list stays a string too, and so does every
  // value of a function whose properties are empty.
  const std::string t =
      "<tool_call>anything\n<arg_key>n</arg_key>\n<arg_value>5</arg_value>\n</tool_call>";
  expect_whole(t, {{{"anything", R"({"n": "5"})"}}, std::nullopt}, opts(ojson()));
  expect_stream_matches_whole(t, opts(ojson()));
  expect_whole(
      "<tool_call>get_weather\n<arg_key>extra</arg_key>\n<arg_value>7</arg_value>\n"
      "<arg_key>days</arg_key>\n<arg_value>7</arg_value>\n</tool_call>",
      {{{"get_weather", R"({"extra": "7", "days": 7})"}}, std::nullopt});
  expect_whole("<tool_call>now\n<arg_key>x</arg_key><arg_value>[1]</arg_value></tool_call>",
               {{{"now", R"({"x": "[1]"})"}}, std::nullopt});
}

TEST(Glm45ToolParser, Glm47StyleWithoutNewlines) {
  // GLM-4.7 writes the first <arg_key> right after the name; the name still ends there.
  const std::string t =
      "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value>"
      "<arg_key>days</arg_key><arg_value>2</arg_value></tool_call>";
  expect_whole(t, {{{"get_weather", R"({"city": "Rome", "days": 2})"}}, std::nullopt});
  expect_stream_matches_whole(t);
}

TEST(Glm45ToolParser, StringValuesKeepTheirWhitespaceAndAreEscapedAsJsonDumps) {
  // A string property is not stripped (only keys are); json.dumps(ensure_ascii=False) escapes
  // the quotes, backslash and newline and keeps the non-ASCII letters.
  const std::string t =
      "Let me see.<tool_call>get_weather\n<arg_key> city </arg_key>\n<arg_value>  S\xC3\xA3o "
      "\"Paulo\" \\ \n</arg_value>\n</tool_call>";
  expect_whole(
      t, {{{"get_weather", "{\"city\": \"  S\xC3\xA3o \\\"Paulo\\\" \\\\ \\n\"}"}}, "Let me see."});
  expect_stream_matches_whole(t);
}

TEST(Glm45ToolParser, CoercionFollowsPython) {
  const auto args = [](const std::string& key, const std::string& value) {
    return whole("<tool_call>get_weather<arg_key>" + key + "</arg_key><arg_value>" + value +
                 "</arg_value></tool_call>")
        .calls.at(0)
        .arguments;
  };
  EXPECT_EQ(args("days", " 1_000 "), R"({"days": 1000})");  // int() strips, takes underscores
  EXPECT_EQ(args("days", "007"), R"({"days": 7})");
  // integer fails, then the fallback json.loads("3.0") reads a float.
  EXPECT_EQ(args("days", "3.0"), R"({"days": 3.0})");
  EXPECT_EQ(args("days", "three"), R"({"days": "three"})");
  EXPECT_EQ(args("temp", "2.0"), R"({"temp": 2})");  // float 2.0 is integral: int(val)
  EXPECT_EQ(args("temp", "1e3"), R"({"temp": 1000})");
  EXPECT_EQ(args("temp", "1e20"), R"({"temp": 100000000000000000000})");
  EXPECT_EQ(args("temp", "-0.25"), R"({"temp": -0.25})");
  EXPECT_EQ(args("temp", "1e400"), R"({"temp": "1e400"})");  // inf: kept as the string
  EXPECT_EQ(args("temp", "nan"), R"({"temp": "nan"})");
  EXPECT_EQ(args("metric", " FALSE\n"), R"({"metric": false})");
  EXPECT_EQ(args("metric", "1"), R"({"metric": true})");
  EXPECT_EQ(args("metric", "yes"), R"({"metric": "yes"})");
  EXPECT_EQ(args("opts", "not json"), R"({"opts": "not json"})");
  EXPECT_EQ(args("opts", "[1e400]"), R"({"opts": "[1e400]"})");  // not finite
  EXPECT_EQ(args("opts", " 5 "), R"({"opts": 5})");              // json.loads takes any value
  EXPECT_EQ(args("note", "Null"), R"({"note": null})");
  EXPECT_EQ(args("note", "nothing"), R"({"note": "nothing"})");
  EXPECT_EQ(args("city", "42"), R"({"city": "42"})");
}

TEST(Glm45ToolParser, SchemaTypes) {
  EXPECT_EQ(schema_types(ojson::parse(R"({"enum": [1, "a", null, true, 1.5]})")),
            (std::vector<std::string>{"boolean", "integer", "null", "number", "string"}));
  EXPECT_EQ(schema_types(ojson::parse(R"({"anyOf": [{"type": "integer"}, {"type": "null"}]})")),
            (std::vector<std::string>{"integer", "null"}));
  EXPECT_EQ(schema_types(ojson::parse(R"({"description": "x"})")),
            std::vector<std::string>{"string"});
  EXPECT_TRUE(schema_keeps_string(ojson::parse(R"({"type": "str"})")));  // an alias
  EXPECT_FALSE(schema_keeps_string(ojson::parse(R"({"type": ["string", "integer"]})")));
  // ["string", "integer"]: integer comes first in vLLM's order.
  EXPECT_EQ(coerce_to_schema_json("12", ojson::parse(R"({"type": ["string", "integer"]})")), "12");
  EXPECT_EQ(coerce_to_schema_json("12", ojson::parse(R"({"type": "int64"})")), "12");
  EXPECT_EQ(coerce_to_schema_json("{\"a\":1}", ojson::parse(R"({"type": "mystery"})")),
            R"({"a": 1})");  // no known type: the fallback json.loads
  EXPECT_EQ(py_int("-0"), "0");
  EXPECT_EQ(py_int("1__0"), std::nullopt);
  EXPECT_EQ(py_int("_1"), std::nullopt);
  EXPECT_EQ(py_finite_number(".5"), "0.5");
  EXPECT_EQ(py_finite_number("inf"), std::nullopt);
  EXPECT_EQ(py_finite_number("1.5e300").value().size(), 301u);  // the double's exact integer
}

TEST(Glm45ToolParser, UnknownAndEmptyNamesAreDropped) {
  // validate_tool_names: a name not in the request's tools makes no call. Without any call the
  // content is the text outside the call block, unstripped.
  const std::string t =
      "Hi <tool_call>unknown\n<arg_key>a</arg_key><arg_value>1</arg_value></tool_call> bye";
  expect_whole(t, {{}, "Hi  bye"});
  expect_stream_matches_whole(t);
  // An empty name is dropped too; the whitespace-only text around it is no content.
  const std::string e = "\n<tool_call>\n<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>\n";
  expect_whole(e, {{}, std::nullopt});
  expect_stream_matches_whole(e);
  // A dropped call before a kept one: the kept one is the first call, content as with calls.
  const std::string k = "Ok. <tool_call>nope</tool_call> x <tool_call>now</tool_call> y";
  expect_whole(k, {{{"now", "{}"}}, "Ok."});
  expect_stream_matches_whole(k);
}

TEST(Glm45ToolParser, TextWithoutCallsIsContent) {
  expect_whole("Just text.\n", {{}, "Just text.\n"});
  expect_stream_matches_whole("Just text.\n");
  expect_whole("", {{}, std::nullopt});
  expect_whole(" \n", {{}, " \n"});  // no call block: whitespace stays content
  expect_stream_matches_whole(" \n");
  // Tags that mean nothing outside a call are text.
  expect_whole("a</tool_call><arg_key>b", {{}, "a</tool_call><arg_key>b"});
  expect_stream_matches_whole("a</tool_call><arg_key>b");
}

TEST(Glm45ToolParser, ACallCutOffByTheEndStillCounts) {
  // The engine ends an open call at the end of the output: its complete pairs are its
  // arguments, the pair still open is not.
  expect_whole(
      "<tool_call>get_weather\n<arg_key>days</arg_key><arg_value>2</arg_value>\n"
      "<arg_key>city</arg_key>\n<arg_value>Ber",
      {{{"get_weather", R"({"days": 2})"}}, std::nullopt});
  expect_whole("<tool_call>get_weather", {{{"get_weather", "{}"}}, std::nullopt});
  expect_stream_matches_whole("<tool_call>get_weather");
  // A tag cut off by the end is text of the name: not a tool name any more.
  expect_whole("<tool_call>get_weather\n<arg_ke", {{}, std::nullopt});
}

TEST(Glm45ToolParser, RepeatedKeysKeepTheFirstPlaceAndTheLastValue) {
  expect_whole(
      "<tool_call>get_weather<arg_key>city</arg_key><arg_value>A</arg_value><arg_key>days"
      "</arg_key><arg_value>2</arg_value><arg_key>city</arg_key><arg_value>B</arg_value>"
      "</tool_call>",
      {{{"get_weather", R"({"city": "B", "days": 2})"}}, std::nullopt});
}

TEST(Glm45ToolParser, PairsAreReadAsVllmsRegexReadsThem) {
  // <arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value>: a </arg_key> that no <arg_value>
  // follows does not end the key; text between pairs is skipped.
  const std::string t =
      "<tool_call>f<arg_key>a</arg_key>x<arg_key>b</arg_key> \n <arg_value>1</arg_value>junk"
      "<arg_key>c</arg_key><arg_value>2</arg_value></tool_call>";
  expect_whole(t, {{{"f", R"({"a</arg_key>x<arg_key>b": "1", "c": "2"})"}}, std::nullopt},
               opts(ojson()));
  expect_stream_matches_whole(t, opts(ojson()));
}

TEST(Glm45ToolParser, ReasoningMarkupInTheContent) {
  // With a reasoning parser, the engine reads <think>...</think> left in the content as
  // reasoning (dropped from the content); without one, the tags are text.
  const std::string t = "a<think>hidden</think>b<tool_call>now</tool_call>";
  expect_whole(t, {{{"now", "{}"}}, "ab"}, opts(weather_tools(), true));
  expect_stream_matches_whole(t, opts(weather_tools(), true));
  expect_whole(t, {{{"now", "{}"}}, "a<think>hidden</think>b"});
  // A <tool_call> inside that reasoning is still a call.
  expect_whole("x<think>y<tool_call>now</tool_call>", {{{"now", "{}"}}, "x"},
               opts(weather_tools(), true));
}

TEST(Glm45ToolParser, StreamSendsNamesAndStringValuesAsTheyCome) {
  auto p = ToolCallParser::make(ToolParserKind::kGlm45, opts());
  ParsedDelta d;
  p->feed("Checking.\n\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par", d);
  EXPECT_EQ(d.content, "Checking.");  // the whitespace before the call is held, then dropped
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_TRUE(d.calls[0].header);
  EXPECT_EQ(d.calls[0].name, "get_weather");
  EXPECT_EQ(d.calls[1].arguments, R"({"city": "Par)");
  ParsedDelta d2;
  p->feed("is</arg_value", d2);  // "</arg_value" may be the closing tag: held
  ASSERT_EQ(d2.calls.size(), 1u);
  EXPECT_EQ(d2.calls[0].arguments, "is");
  ParsedDelta d3;
  p->feed(">\n<arg_key>days</arg_key>\n<arg_value>1", d3);  // an integer waits for its end
  ASSERT_EQ(d3.calls.size(), 1u);
  EXPECT_EQ(d3.calls[0].arguments, "\"");
  ParsedDelta d4;
  p->feed("0</arg_value>\n</tool_call>", d4);
  ASSERT_EQ(d4.calls.size(), 1u);
  EXPECT_EQ(d4.calls[0].arguments, R"(, "days": 10})");
  ParsedDelta d5;
  p->finish(d5);
  EXPECT_TRUE(d5.content.empty() && d5.calls.empty());
}

TEST(Glm45ToolParser, LeadingWhitespaceIsStreamedWithTheFirstWord) {
  // The one place a stream cannot match the whole response: vLLM's stream sends "\nSure." as
  // its whole response would without a call, and the whole response strips it with one.
  const std::string t = "\nSure.\n<tool_call>now</tool_call>";
  expect_whole(t, {{{"now", "{}"}}, "Sure."});
  const Streamed s = stream({t});
  EXPECT_EQ(s.content, "\nSure.");
  ASSERT_EQ(s.calls.size(), 1u);
}

TEST(Glm45ToolParser, LongStringValuesStreamInLinearTime) {
  std::string value(200000, 'x');
  auto p = ToolCallParser::make(ToolParserKind::kGlm45, opts());
  ParsedDelta d;
  p->feed("<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>", d);
  std::string args;
  for (size_t i = 0; i < value.size(); i += 3) {
    ParsedDelta di;
    p->feed(value.substr(i, 3), di);
    for (auto& c : di.calls) args += c.arguments;
  }
  ParsedDelta e;
  p->feed("</arg_value></tool_call>", e);
  for (auto& c : d.calls) args = c.arguments + args;
  for (auto& c : e.calls) args += c.arguments;
  EXPECT_EQ(args, "{\"city\": \"" + value + "\"}");
}

TEST(Glm45ToolParser, NamesAreRegistered) {
  EXPECT_EQ(tool_parser_by_name("glm45"), ToolParserKind::kGlm45);
  EXPECT_EQ(tool_parser_by_name("glm47"), ToolParserKind::kGlm45);
  EXPECT_NE(std::string(tool_parser_names()).find("glm45"), std::string::npos);
}

}  // namespace
}  // namespace vllm::api
