// Kimi K2's parsers: --tool-call-parser kimi_k2 (src/api/server/kimi_tool_parser.h) and
// --reasoning-parser kimi_k2 (reasoning_parser.h), alone and together as the chat serving
// composes them (parse_chat_output, serving.h).
//
// The gate: tests/golden/tool_parsers/kimi_k2.json holds what vLLM 0.33 itself returns for 48
// outputs under seven configurations (the tool parser alone, with the reasoning parser, thinking
// switched off, a prompt that closed the reasoning, tool_choice "none"), whole and streamed one
// token per delta, each call with its id (tools/make_kimi_k2_parser_goldens.py runs vLLM's own
// parsers). Whole responses must equal vLLM's, ids included where vLLM takes them from the
// model. Streams, cut at every point and in random pieces, must reassemble to the whole response
// (where vLLM's stream differs from its whole response only by unstripped or missing arguments,
// this follows the whole response), and under a prompt that closed the reasoning to vLLM's
// stream, which then starts in the content.
#include <gtest/gtest.h>

#include <array>
#include <nlohmann/json.hpp>

#include "api/server/kimi_tool_parser.h"
#include "parser_goldens.h"

namespace vllm::api {
namespace {

using namespace goldens;

const ojson& golden() { return cached("kimi_k2.json"); }

struct Config {
  Composed c;
  bool closed = false;  // the prompt closed the reasoning (streams start in the content)
};

// Generation's set-up for a golden case (request_inputs.cpp, serving.cpp).
Config config_of(const ojson& k) {
  const ojson& g = golden();
  Config cfg;
  const ojson kwargs = k["chat_template_kwargs"];
  const bool none = k["tool_choice"] == "none";
  if (!k["reasoning_parser"].is_null()) {
    const ReasoningParserKind kind = *reasoning_parser_by_name("kimi_k2");
    if (reasoning_enabled(kind, kwargs)) cfg.c.reasoning = kind;
    const ThinkTags tags =
        think_tags([&](std::string_view x) { return id_in(g["tags"], x); }, kind);
    cfg.c.thought =
        prompt_ends_reasoning(ids(k["prompt"].get<std::string>(), g["tags"]), tags, kind);
    EXPECT_TRUE(tags.boundaries.empty());  // a whole output never starts in the content
    cfg.closed = cfg.c.thought;
  }
  cfg.c.tools = ToolParserKind::kKimiK2;
  cfg.c.tool_options.tools = g["tools"];
  cfg.c.tool_options.reasoning_markup =
      !k["reasoning_parser"].is_null() && reasoning_enabled(ReasoningParserKind::kGlm45, kwargs);
  cfg.c.tool_options.suppress_calls = none;
  cfg.c.drop_calls = none;
  return cfg;
}

std::string label(const ojson& c) {
  return c["name"].get<std::string>() + " / " + c["reasoning_parser"].dump() + " " +
         c["chat_template_kwargs"].dump() + " " + c["tool_choice"].get<std::string>() +
         (c["prompt"].get<std::string>().find("</think>") != std::string::npos ? " closed" : "");
}

using IdCalls = std::vector<std::array<std::string, 3>>;  // name, arguments, id

IdCalls id_calls_of(const ojson& v) {
  IdCalls c;
  for (const auto& t : v)
    c.push_back({t[0].get<std::string>(), t[1].get<std::string>(), t[2].get<std::string>()});
  return c;
}

bool random_id(const std::string& id) { return id.rfind("chatcmpl-tool-", 0) == 0; }

// Ids vLLM made up itself are random: any such id matches another.
void expect_calls(const IdCalls& got, const IdCalls& want, const std::string& at) {
  ASSERT_EQ(got.size(), want.size()) << at;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i][0], want[i][0]) << at;
    EXPECT_EQ(got[i][1], want[i][1]) << at;
    if (random_id(want[i][2]))
      EXPECT_TRUE(random_id(got[i][2]) && got[i][2].size() == 46) << at << ": " << got[i][2];
    else
      EXPECT_EQ(got[i][2], want[i][2]) << at;
  }
}

// Whether vLLM's token-by-token stream of a case reassembles to its whole response (its random
// ids aside).
bool vllm_stream_is_whole_with_ids(const ojson& c) {
  const ojson& vw = c["whole"];
  const ojson& vs = c["stream"];
  const auto text_of = [](const ojson& v) { return v.is_null() ? ojson("") : v; };
  if (vs["content"] != text_of(vw["content"]) || vs["reasoning"] != text_of(vw["reasoning"]))
    return false;
  const IdCalls a = id_calls_of(vs["tool_calls"]), b = id_calls_of(vw["tool_calls"]);
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i][0] != b[i][0] || a[i][1] != b[i][1] ||
        (a[i][2] != b[i][2] && !(random_id(a[i][2]) && random_id(b[i][2]))))
      return false;
  return true;
}

struct Whole {
  std::optional<std::string> reasoning, content;
  IdCalls calls;
};

Whole whole_of(const Config& cfg, const std::string& text) {
  const Composed& s = cfg.c;
  ParsedChatOutput p = parse_chat_output(text, s.reasoning, false, s.tools, s.tool_options);
  Whole w{p.reasoning, p.content, {}};
  if (!s.drop_calls)
    for (const ToolCall& t : p.tools.calls) w.calls.push_back({t.name, t.arguments, t.id});
  return w;
}

// A stream's reassembly (goldens::stream) with each call's id.
struct Stream {
  std::string reasoning, content;
  IdCalls calls;
};

Stream stream_of(const Config& cfg, const std::vector<std::string>& pieces) {
  const Streamed s = stream(cfg.c, pieces);
  Stream out{s.reasoning, s.content, {}};
  for (size_t i = 0; i < s.calls.size(); ++i)
    out.calls.push_back({s.calls[i].first, s.calls[i].second, s.ids[i]});
  return out;
}

TEST(KimiK2Golden, WholeResponsesAreVllms) {
  const ojson& g = golden();
  ASSERT_GE(g["cases"].size(), 300u);
  const auto id_of = [&](std::string_view s) { return id_in(g["tags"], s); };
  for (const auto& c : g["cases"]) {
    const Config cfg = config_of(c);
    const std::string text = c["text"].get<std::string>();
    const Whole w = whole_of(cfg, text);
    EXPECT_EQ(w.reasoning, opt_string(c["whole"]["reasoning"])) << label(c);
    EXPECT_EQ(w.content, opt_string(c["whole"]["content"])) << label(c);
    expect_calls(w.calls, id_calls_of(c["whole"]["tool_calls"]), label(c));
    // usage's reasoning_tokens (Generation::reasoning_tokens) over the golden's token ids.
    if (!c["whole"].contains("reasoning_tokens")) continue;
    const int64_t want = c["whole"]["reasoning_tokens"].get<int64_t>();
    if (!cfg.c.reasoning) {
      EXPECT_EQ(want, 0) << label(c);  // thinking switched off: nothing is reasoning
      continue;
    }
    EXPECT_EQ(count_reasoning_tokens(*cfg.c.reasoning, think_tags(id_of, *cfg.c.reasoning),
                                     ids(text, g["tags"]), false),
              want)
        << label(c);
  }
}

TEST(KimiK2Golden, StreamsReassembleToTheWholeResponse) {
  const ojson& g = golden();
  int checked = 0, as_vllm_stream = 0;
  for (const auto& c : g["cases"]) {
    const Config cfg = config_of(c);
    const std::string text = c["text"].get<std::string>();
    // The calls as vLLM's whole response returns them; the text as its stream sends it when the
    // prompt closed the reasoning (its whole response does not read the prompt), as its whole
    // response otherwise.
    const IdCalls want_calls = id_calls_of(c["whole"]["tool_calls"]);
    std::string want_reasoning = c["whole"]["reasoning"].is_null() ? "" : c["whole"]["reasoning"];
    std::string want_content = c["whole"]["content"].is_null() ? "" : c["whole"]["content"];
    if (cfg.closed) {
      want_reasoning = c["stream"]["reasoning"].get<std::string>();
      want_content = c["stream"]["content"].get<std::string>();
      ++as_vllm_stream;
    }
    size_t k = 0;
    for (const auto& pieces : chunkings(text, g["tags"], 7 + checked)) {
      const std::string at = label(c) + " cut " + std::to_string(k++);
      const Stream s = stream_of(cfg, pieces);
      EXPECT_EQ(s.reasoning, want_reasoning) << at;
      EXPECT_EQ(s.content, want_content) << at;
      expect_calls(s.calls, want_calls, at);
    }
    ++checked;
  }
  EXPECT_EQ(as_vllm_stream, 48);
}

// Where vLLM's token-by-token stream differs from its whole response, it is by the arguments
// only (sent unstripped, nothing for empty ones, the header of an unfinished call unstripped),
// under a prompt that closed the reasoning, or by a </think> inside the arguments (which its
// whole response drops): the cases the stream here follows the whole response in.
TEST(KimiK2Golden, VllmsStreamDiffersOnlyWhereExpected) {
  const ojson& g = golden();
  int differ = 0;
  for (const auto& c : g["cases"]) {
    if (config_of(c).closed || vllm_stream_is_whole_with_ids(c)) continue;
    ++differ;
    const std::string name = c["name"].get<std::string>();
    EXPECT_TRUE(name == "empty_args" || name == "spaced_args" || name == "call_end_without_args" ||
                name == "cut_in_header" || name == "cut_in_header_spaced" ||
                name == "cut_after_header" || name == "call_end_in_header" ||
                name == "call_end_in_header_indexed" || name == "think_end_in_args")
        << label(c);
  }
  EXPECT_GT(differ, 0);
}

TEST(KimiK2, ParserNamesAndRefusals) {
  EXPECT_EQ(tool_parser_by_name("kimi_k2"), ToolParserKind::kKimiK2);
  EXPECT_EQ(reasoning_parser_by_name("kimi_k2"), ReasoningParserKind::kKimiK2);
  // thinking / enable_thinking: unset thinks, either one true thinks, both false or null do not.
  EXPECT_TRUE(reasoning_enabled(ReasoningParserKind::kKimiK2, ojson::object()));
  EXPECT_FALSE(reasoning_enabled(ReasoningParserKind::kKimiK2, {{"thinking", false}}));
  EXPECT_TRUE(reasoning_enabled(ReasoningParserKind::kKimiK2,
                                {{"thinking", false}, {"enable_thinking", true}}));
  EXPECT_FALSE(reasoning_enabled(ReasoningParserKind::kKimiK2, {{"enable_thinking", 0}}));
}

}  // namespace
}  // namespace vllm::api
