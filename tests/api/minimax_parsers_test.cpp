// MiniMax-M2's parsers: --tool-call-parser minimax_m2 (src/api/server/minimax_tool_parser.h) and
// --reasoning-parser minimax_m2 / minimax_m2_append_think (reasoning_parser.h), alone and
// together as the chat serving composes them (parse_chat_output, serving.h).
//
// The gate: tests/golden/tool_parsers/minimax_m2.json holds what vLLM 0.33 itself returns for 45
// outputs under five parser configurations, whole and streamed one token per delta
// (tools/make_minimax_m2_parser_goldens.py runs vLLM's own parsers). Whole responses must equal
// vLLM's. Streams, cut at every point and in random pieces, must reassemble to the whole
// response, except for the gaps vLLM's stream has too (each checked for its exact shape below).
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "api/server/minimax_tool_parser.h"
#include "parser_goldens.h"

namespace vllm::api {
namespace {

using namespace goldens;

const ojson& golden() { return cached("minimax_m2.json"); }

// The golden's prompt ends as MiniMax-M2's template ends it, inside the reasoning.
Composed config_of(const ojson& c) {
  Composed k;
  if (!c["reasoning_parser"].is_null())
    k.reasoning = reasoning_parser_by_name(c["reasoning_parser"].get<std::string>());
  if (!c["tool_parser"].is_null()) {
    k.tools = ToolParserKind::kMinimaxM2;
    k.tool_options.tools = golden()["tools"];
    k.tool_options.reasoning_markup = k.reasoning.has_value();  // as Generation
  }
  return k;
}

std::vector<std::string> tokens(const std::string& t) {
  return goldens::tokens(t, golden()["tags"]);
}

std::string label(const ojson& c) {
  return c["name"].get<std::string>() + " / " + c["reasoning_parser"].dump() + " + " +
         c["tool_parser"].dump();
}

TEST(MinimaxM2Golden, WholeResponsesAreVllms) {
  const ojson& g = golden();
  ASSERT_GE(g["cases"].size(), 200u);
  for (const auto& c : g["cases"]) {
    expect_whole(whole(config_of(c), c["text"].get<std::string>()), c["whole"], label(c));
    // The usage's reasoning_tokens (Generation::reasoning_tokens) over the golden's token ids.
    if (!c["whole"].contains("reasoning_tokens")) continue;
    const auto id_of = [&](std::string_view s) { return id_in(g["tags"], s); };
    const ReasoningParserKind kind = *config_of(c).reasoning;
    EXPECT_EQ(count_reasoning_tokens(kind, think_tags(id_of, kind),
                                     ids(c["text"].get<std::string>(), g["tags"]), false),
              c["whole"]["reasoning_tokens"].get<int64_t>())
        << label(c);
  }
}

// A stream's arguments cannot be taken back: a string value sent before the call or the output
// ended without its </parameter>, or a key written again after other keys, leave them short of
// the whole response's (vLLM's stream stops at the same place).
bool arguments_gap(const std::string& name) {
  return name == "unclosed_parameter" || name == "cut_in_value" || name == "repeated_key" ||
         name == "repeated_last_key";
}

TEST(MinimaxM2Golden, StreamsReassembleToTheWholeResponse) {
  const ojson& g = golden();
  // vLLM's token-by-token stream of each output under the tool parser alone (under
  // minimax_m2_append_think its stream parses calls only after a </think>).
  std::map<std::string, Calls> vllm_streamed;
  for (const auto& c : g["cases"])
    if (c["reasoning_parser"].is_null() && !c["tool_parser"].is_null())
      vllm_streamed[c["name"].get<std::string>()] = calls_of(c["stream"]["tool_calls"]);
  for (const auto& c : g["cases"]) {
    const std::string name = c["name"].get<std::string>();
    const Composed k = config_of(c);
    const std::string text = c["text"].get<std::string>();
    const Result w = whole(k, text);
    for (const auto& pieces : chunkings(text, g["tags"], 11, true)) {
      const Streamed s = stream(k, pieces);
      const std::string at = label(c) + " (" + std::to_string(pieces.size()) + " pieces)";
      EXPECT_EQ(s.reasoning, w.reasoning.value_or("")) << at;
      ASSERT_EQ(s.calls.size(), w.calls.size()) << at;
      for (size_t i = 0; i < w.calls.size(); ++i) {
        EXPECT_EQ(s.calls[i].first, w.calls[i].first) << at;
        if (arguments_gap(name)) {
          // The whole arguments when nothing was sent too early, else what vLLM's stream sends
          // (token by token) or less of it.
          ASSERT_GT(vllm_streamed[name].size(), i) << at;
          const std::string v = vllm_streamed[name][i].second;
          const std::string& a = s.calls[i].second;
          EXPECT_TRUE(a == w.calls[i].second || v.compare(0, a.size(), a) == 0 ||
                      name.rfind("repeated_", 0) == 0)
              << at << ": " << a;
          if (pieces == tokens(text)) {
            EXPECT_EQ(a, v) << at;
          }
        } else {
          EXPECT_EQ(s.calls[i].second, w.calls[i].second) << at;
        }
      }
      std::string expect = w.content.value_or("");
      if (k.reasoning == ReasoningParserKind::kMinimaxM2AppendThink && k.tools && w.calls.empty())
        // Without a call vLLM's whole response keeps the reasoning parser's content; a stream
        // cannot know there will be none and sends the tool parser's (without </think> and the
        // call markup it dropped), as vLLM's stream does from the </think> on.
        expect = extract_tool_calls(ToolParserKind::kMinimaxM2, "<think>" + text, k.tool_options)
                     .content.value_or("");
      expect_content_but_lead(s.content, expect, !w.calls.empty(), at);
    }
  }
}

TEST(MinimaxM2Golden, OneTokenStreamsMatchVllmsWhereItsStreamMatchesItsWholeResponse) {
  const ojson& g = golden();
  size_t same = 0;
  for (const auto& c : g["cases"]) {
    if (!vllm_stream_is_whole(c)) continue;
    const Composed k = config_of(c);
    // minimax_m2_append_think with the tool parser and no call: vLLM's stream parses nothing
    // before a </think>, so it sends the raw text its whole response keeps; the stream here
    // sends the tool parser's content throughout (see the test above).
    if (k.reasoning == ReasoningParserKind::kMinimaxM2AppendThink && k.tools &&
        c["whole"]["tool_calls"].empty())
      continue;
    ++same;
    expect_stream(stream(k, tokens(c["text"].get<std::string>())), c["stream"], label(c));
  }
  EXPECT_GE(same, 140u);
}

// ---- Hand-worked cases (vLLM 0.33's vllm/parser/minimax_m2.py over the parser engine). ----

const ojson& weather_tools() { return golden()["tools"]; }

ToolParserOptions opts(const ojson& tools = weather_tools(), bool markup = false) {
  ToolParserOptions o;
  o.tools = tools;
  o.reasoning_markup = markup;
  return o;
}

ExtractedToolCalls extract(const std::string& text, const ToolParserOptions& o = opts()) {
  return extract_tool_calls(ToolParserKind::kMinimaxM2, text, o);
}

TEST(MinimaxM2ToolParser, CallsAreTypedByTheSchema) {
  // days: int("3"); metric "True".lower(); temp: float 21.5; opts / tags: json.loads; note
  // ["string", "null"]: null comes first; unit: an enum of strings. The second call (bare name,
  // single quotes) has no parameters: {}.
  const auto x = extract(
      "I'll check.\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n"
      "<parameter name=\"city\">Paris</parameter>\n<parameter "
      "name=\"days\">3</parameter>\n"
      "<parameter name=\"metric\">True</parameter>\n<parameter "
      "name=\"temp\">21.50</parameter>\n"
      "<parameter name=\"opts\">{\"a\": [1, 2.0]}</parameter>\n"
      "<parameter name=\"tags\">[\"x\"]</parameter>\n<parameter "
      "name=\"note\">null</parameter>\n"
      "</invoke>\n<invoke name='now'></invoke>\n</minimax:tool_call>");
  EXPECT_TRUE(x.tools_called);
  ASSERT_EQ(x.calls.size(), 2u);
  EXPECT_EQ(x.calls[0].name, "get_weather");
  EXPECT_EQ(
      x.calls[0].arguments,
      R"({"city": "Paris", "days": 3, "metric": true, "temp": 21.5, "opts": {"a": [1, 2.0]}, )"
      R"("tags": ["x"], "note": null})");
  EXPECT_EQ(x.calls[1].name, "now");
  EXPECT_EQ(x.calls[1].arguments, "{}");
  EXPECT_EQ(x.content, "I'll check.");
  EXPECT_EQ(x.calls[0].id.size(), 14u + 32u);
}

TEST(MinimaxM2ToolParser, ParametersAreReadAsVllmsRegexReadsThem) {
  // _PARAM_RE: whitespace inside the tags, a value ended by the next <parameter name= when its
  // </parameter> is missing, an empty name skipped, a value never closed left out.
  const auto x = extract(
      "<invoke name=\"now\">< parameter  name = 'a b' >1< / parameter "
      "><parameter name=c>2"
      "<parameter name=\"\">3</parameter><parameter name=\"d\">4</invoke>",
      opts(ojson()));
  ASSERT_EQ(x.calls.size(), 1u);
  EXPECT_EQ(x.calls[0].arguments, R"({"a b": "1", "c": "2"})");
  // A quoted name that is not followed by '>' is read bare, quotes and all.
  const auto y =
      extract("<invoke name=\"now\"><parameter name=\"k\"x>v</parameter></invoke>", opts(ojson()));
  EXPECT_EQ(y.calls.at(0).arguments, R"({"\"k\"x": "v"})");
}

TEST(MinimaxM2ToolParser, MalformedOutputFallsBackAsVllmDoes) {
  // An unknown name makes no call: the content is the text outside the calls, unstripped.
  auto x = extract(
      "Hi <minimax:tool_call><invoke "
      "name=\"nope\"></invoke></minimax:tool_call> bye");
  EXPECT_FALSE(x.tools_called);
  EXPECT_EQ(x.content, "Hi  bye");
  // A block cut off before its first call is left out of the content; a tag cut off is text.
  x = extract("Sure.\n<minimax:tool_call>\n");
  EXPECT_EQ(x.content, "Sure.\n");
  x = extract("Sure.\n<minimax:tool_c");
  EXPECT_EQ(x.content, "Sure.\n<minimax:tool_c");
  // A missing </invoke>: the rest of the output is that call's body.
  x = extract(
      "<minimax:tool_call><invoke name=\"get_weather\"><parameter "
      "name=\"city\">A</parameter>"
      "</minimax:tool_call>\nMore <invoke name=\"now\"></invoke> text");
  ASSERT_EQ(x.calls.size(), 1u);
  EXPECT_EQ(x.calls[0].arguments, R"({"city": "A"})");
  EXPECT_EQ(x.content, std::nullopt);
  // A stray </minimax:tool_call> in the content is dropped; other tags there are text.
  x = extract("a</minimax:tool_call>b</invoke>c");
  EXPECT_EQ(x.content, "ab</invoke>c");
}

TEST(MinimaxM2ToolParser, ReasoningMarkupInTheContent) {
  // With a reasoning parser running, a </think> left in the content is dropped; <think> is text.
  const std::string t = "a<think>b</think>c<minimax:tool_call><invoke name=\"now\"></invoke>";
  EXPECT_EQ(extract(t, opts(weather_tools(), true)).content, "a<think>bc");
  EXPECT_EQ(extract(t).content, "a<think>b</think>c");
}

std::string stream_args(const std::vector<std::string>& pieces, std::string* content = nullptr) {
  auto p = ToolCallParser::make(ToolParserKind::kMinimaxM2, opts());
  std::string args;
  for (size_t i = 0; i <= pieces.size(); ++i) {
    ParsedDelta d;
    if (i < pieces.size())
      p->feed(pieces[i], d);
    else
      p->finish(d);
    for (const auto& c : d.calls) args += c.arguments;
    if (content) *content += d.content;
  }
  return args;
}

TEST(MinimaxM2ToolParser, StreamSendsNamesAndStringValuesAsTheyCome) {
  auto p = ToolCallParser::make(ToolParserKind::kMinimaxM2, opts());
  ParsedDelta d;
  p->feed("Checking.\n\n<minimax:tool_call>\n<invoke name=\"get_weather\">\n", d);
  EXPECT_EQ(d.content, "Checking.");  // the whitespace before the call is held, then dropped
  ASSERT_EQ(d.calls.size(), 1u);
  EXPECT_TRUE(d.calls[0].header);
  EXPECT_EQ(d.calls[0].name, "get_weather");
  ParsedDelta d2;
  p->feed("<parameter name=\"city\">Par", d2);
  ASSERT_EQ(d2.calls.size(), 1u);
  EXPECT_EQ(d2.calls[0].arguments, R"({"city": "Par)");
  ParsedDelta d3;
  p->feed("is</param", d3);  // "</param" may be the closing tag: held
  ASSERT_EQ(d3.calls.size(), 1u);
  EXPECT_EQ(d3.calls[0].arguments, "is");
  ParsedDelta d4;
  p->feed("eter>\n<parameter name=\"days\">1", d4);  // an integer waits for the next key or end
  ASSERT_EQ(d4.calls.size(), 1u);
  EXPECT_EQ(d4.calls[0].arguments, R"(", "days": )");
  ParsedDelta d5;
  p->feed("0</parameter>\n</invoke>\n</minimax:tool_call>", d5);
  ASSERT_EQ(d5.calls.size(), 1u);
  EXPECT_EQ(d5.calls[0].arguments, R"(10})");
  ParsedDelta d6;
  p->finish(d6);
  EXPECT_TRUE(d6.content.empty() && d6.calls.empty());
}

TEST(MinimaxM2ToolParser, SpacedClosingTagsAreHeldBackInTheStream) {
  // vLLM's stream sends "< / parameter " as value text before it sees the tag; held here.
  const std::vector<std::string> pieces = {
      "<minimax:tool_call><invoke name=\"get_weather\"><parameter "
      "name=\"city\">Lima",
      "< / par", "ameter >", "</invoke>"};
  EXPECT_EQ(stream_args(pieces), R"({"city": "Lima"})");
}

TEST(MinimaxM2ToolParser, NamesWithSpacesAreStrippedInStreamsToo) {
  // vLLM's whole response strips the name and keeps the call; its stream does not strip it and
  // drops the call as an unknown name. Here both keep it.
  std::string content;
  EXPECT_EQ(stream_args({"<invoke name=\" get_weather \">", "<parameter name=\"city\">X",
                         "</parameter></invoke> after"},
                        &content),
            R"({"city": "X"})");
  EXPECT_EQ(content, "");
}

TEST(MinimaxM2ToolParser, LongStringValuesStreamInLinearTime) {
  const std::string value(200000, 'x');
  auto p = ToolCallParser::make(ToolParserKind::kMinimaxM2, opts());
  std::string args;
  auto take = [&](ParsedDelta& d) {
    for (auto& c : d.calls) args += c.arguments;
  };
  ParsedDelta d;
  p->feed(
      "<minimax:tool_call>\n<invoke name=\"write_file\">\n<parameter "
      "name=\"content\">",
      d);
  take(d);
  for (size_t i = 0; i < value.size(); i += 3) {
    ParsedDelta di;
    p->feed(value.substr(i, 3) + (i % 999 == 0 ? "<" : ""), di);  // '<' not starting a tag
    take(di);
  }
  ParsedDelta e;
  p->feed("</parameter>\n</invoke>\n</minimax:tool_call>", e);
  take(e);
  std::string expect;
  for (size_t i = 0; i < value.size(); i += 3) expect += value.substr(i, 3) + (i % 999 ? "" : "<");
  EXPECT_EQ(args, "{\"content\": \"" + expect + "\"}");
}

TEST(MinimaxM2ToolParser, NamesAreRegistered) {
  EXPECT_EQ(tool_parser_by_name("minimax_m2"), ToolParserKind::kMinimaxM2);
  EXPECT_EQ(tool_parser_by_name("minimax"), std::nullopt);
  EXPECT_NE(std::string(tool_parser_names()).find("minimax_m2"), std::string::npos);
  EXPECT_EQ(reasoning_parser_by_name("minimax_m2"), ReasoningParserKind::kMinimaxM2);
  EXPECT_EQ(reasoning_parser_by_name("minimax_m2_append_think"),
            ReasoningParserKind::kMinimaxM2AppendThink);
  EXPECT_EQ(reasoning_parser_by_name("minimax_m3"), std::nullopt);
}

// ---- Reasoning. ----

TEST(MinimaxM2Reasoning, WholeOutputs) {
  auto s = split_reasoning_minimax_m2("Think.\n</think>\n\nThe answer.");
  EXPECT_EQ(s.reasoning, "Think.");
  EXPECT_EQ(s.content, "\n\nThe answer.");
  s = split_reasoning_minimax_m2("still thinking  \n");  // no </think>: all reasoning
  EXPECT_EQ(s.reasoning, "still thinking");
  EXPECT_EQ(s.content, std::nullopt);
  // <minimax:tool_call> ends the reasoning and stays.
  s = split_reasoning_minimax_m2("plan <minimax:tool_call><invoke name=\"now\"></invoke>");
  EXPECT_EQ(s.reasoning, "plan");
  EXPECT_EQ(s.content, "<minimax:tool_call><invoke name=\"now\"></invoke>");
  // After the end: <think> is text, </think> is dropped, and so is a </minimax:tool_call> that
  // nothing opened.
  s = split_reasoning_minimax_m2("a</think>b<think>c</think>d</minimax:tool_call>e");
  EXPECT_EQ(s.reasoning, "a");
  EXPECT_EQ(s.content, "b<think>cde");
  s = split_reasoning(ReasoningParserKind::kMinimaxM2AppendThink, "x</think>y", false);
  EXPECT_EQ(s.reasoning, std::nullopt);
  EXPECT_EQ(s.content, "<think>x</think>y");
}

TEST(MinimaxM2Reasoning, PromptEndsReasoning) {
  // is_reasoning_end over the prompt: </think> or <minimax:tool_call> after the last <think>
  // (no turn markers bound the search).
  ThinkTags t;
  t.start = 7;
  t.end = 8;
  t.implicit_end = {9};
  EXPECT_FALSE(prompt_ends_reasoning({1, 7, 2}, t, ReasoningParserKind::kMinimaxM2));
  EXPECT_TRUE(prompt_ends_reasoning({7, 9, 2}, t, ReasoningParserKind::kMinimaxM2));
  // append_think looks at <think> / </think> only.
  EXPECT_FALSE(prompt_ends_reasoning({7, 9, 2}, t, ReasoningParserKind::kMinimaxM2AppendThink));
  EXPECT_TRUE(prompt_ends_reasoning({7, 8, 2}, t, ReasoningParserKind::kMinimaxM2AppendThink));
  // A stream whose prompt closed the reasoning: all content, no "<think>" put back.
  Composed closed;
  closed.reasoning = ReasoningParserKind::kMinimaxM2AppendThink;
  closed.thought = true;
  const Streamed r = stream(closed, {"a</think>b"});
  EXPECT_EQ(r.content, "a</think>b");
  // minimax_m2: all content, read as after the reasoning (a </think> there is dropped; vLLM's
  // stream hands it to its tool parser, which drops it too, or keeps it without one).
  closed.reasoning = ReasoningParserKind::kMinimaxM2;
  const Streamed m = stream(closed, {"a</think>b"});
  EXPECT_EQ(m.reasoning, "");
  EXPECT_EQ(m.content, "ab");
}

}  // namespace
}  // namespace vllm::api
