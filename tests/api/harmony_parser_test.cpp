// Harmony (gpt-oss) output split as vLLM's HarmonyParser routes it (harmony_parser.h):
// reasoning / content / tool calls from whole outputs, the recoveries where harmony would fail,
// the streaming splitter reassembling to the whole split wherever the deltas are cut, and the
// server's --reasoning-parser / --tool-call-parser checks against the model's architecture.
#include "api/server/harmony_parser.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "api/server/openai_server.h"

namespace vllm::api {
namespace {

const std::string kAnalysis = "<|channel|>analysis<|message|>User asks about Paris weather.<|end|>";
const std::string kNext = "<|start|>assistant";

// No harmony markup may reach what the client sees.
void expect_clean(const HarmonySplit& s, const std::string& text) {
  for (const char* t : {"<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>",
                        "<|return|>", "<|call|>"}) {
    EXPECT_EQ(s.reasoning.value_or("").find(t), std::string::npos) << text;
    EXPECT_EQ(s.content.value_or("").find(t), std::string::npos) << text;
  }
}

TEST(HarmonyParser, ReasoningThenFinal) {
  for (const std::string end : {"", "<|return|>"}) {  // the stop token is usually not in the text
    const std::string text = kAnalysis + kNext + "<|channel|>final<|message|>It is sunny." + end;
    const HarmonySplit s = split_harmony(text);
    ASSERT_TRUE(s.reasoning && s.content) << text;
    EXPECT_EQ(*s.reasoning, "User asks about Paris weather.");
    EXPECT_EQ(*s.content, "It is sunny.");
    EXPECT_TRUE(s.calls.empty());
    expect_clean(s, text);
  }
}

TEST(HarmonyParser, FinalOnly) {
  const HarmonySplit s = split_harmony("<|channel|>final<|message|>Hi there!<|return|>");
  EXPECT_FALSE(s.reasoning);  // empty parts are null, as vLLM returns them
  ASSERT_TRUE(s.content);
  EXPECT_EQ(*s.content, "Hi there!");
  // Reasoning only (the answer never came): content is null.
  const HarmonySplit r = split_harmony(kAnalysis);
  EXPECT_EQ(r.reasoning.value_or("?"), "User asks about Paris weather.");
  EXPECT_FALSE(r.content);
}

TEST(HarmonyParser, ToolCallWithConstrainedJson) {
  const std::string text = kAnalysis + kNext +
                           "<|channel|>commentary to=functions.get_weather <|constrain|>json"
                           "<|message|>{\"location\":\"Paris\"}<|call|>";
  const HarmonySplit s = split_harmony(text);
  EXPECT_EQ(s.reasoning.value_or("?"), "User asks about Paris weather.");
  EXPECT_FALSE(s.content);
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(s.calls[0].name, "get_weather");
  EXPECT_EQ(s.calls[0].content_type, "<|constrain|>json");
  EXPECT_EQ(s.calls[0].arguments, "{\"location\":\"Paris\"}");
  EXPECT_EQ(s.calls[0].id.rfind("chatcmpl-tool-", 0), 0u);
  // A whole response re-serializes JSON arguments as Python's json.dumps (ASCII only).
  EXPECT_EQ(harmony_arguments(s.calls[0]), "{\"location\": \"Paris\"}");
  HarmonyToolCall accented = s.calls[0];
  accented.arguments = "{\"city\":\"Z\xc3\xbcrich \xf0\x9f\x98\x80\"}";
  EXPECT_EQ(harmony_arguments(accented), "{\"city\": \"Z\\u00fcrich \\ud83d\\ude00\"}");
}

TEST(HarmonyParser, ToolCallRecipientInEitherHeaderPosition) {
  // to= before the channel (in the role part of the header), content type without <|constrain|>.
  std::string text = kAnalysis + kNext +
                     " to=functions.get_weather<|channel|>commentary json<|message|>"
                     "{\"location\": \"Paris\", \"unit\": \"c\"}<|call|>";
  HarmonySplit s = split_harmony(text);
  ASSERT_EQ(s.calls.size(), 1u) << text;
  EXPECT_EQ(s.calls[0].name, "get_weather");
  EXPECT_EQ(s.calls[0].content_type, "json");
  EXPECT_EQ(s.calls[0].arguments, "{\"location\": \"Paris\", \"unit\": \"c\"}");
  EXPECT_FALSE(s.content);
  // The very first message may be the call, its recipient before the channel.
  text = " to=functions.get_time<|channel|>commentary <|constrain|>json<|message|>{}";
  s = split_harmony(text);
  ASSERT_EQ(s.calls.size(), 1u) << text;
  EXPECT_EQ(s.calls[0].name, "get_time");
  EXPECT_EQ(s.calls[0].arguments, "{}");
  EXPECT_FALSE(s.reasoning);
  EXPECT_FALSE(s.content);
  // No content type: still JSON when it parses; a non-JSON type keeps the body as written.
  text = "<|channel|>commentary to=functions.a<|message|>{\"x\":1}<|call|>" + kNext +
         "<|channel|>commentary to=functions.b code<|message|>{\"y\":2}<|call|>";
  s = split_harmony(text);
  ASSERT_EQ(s.calls.size(), 2u);
  EXPECT_EQ(s.calls[0].name, "a");
  EXPECT_EQ(s.calls[0].content_type, "");
  EXPECT_EQ(harmony_arguments(s.calls[0]), "{\"x\": 1}");
  EXPECT_EQ(s.calls[1].name, "b");
  EXPECT_EQ(s.calls[1].content_type, "code");
  EXPECT_EQ(harmony_arguments(s.calls[1]), "{\"y\":2}");
  EXPECT_NE(s.calls[0].id, s.calls[1].id);
}

TEST(HarmonyParser, CommentaryPreambleIsContent) {
  const std::string text = kAnalysis + kNext +
                           "<|channel|>commentary<|message|>Let me check.<|end|>" + kNext +
                           "<|channel|>commentary to=functions.get_weather <|constrain|>json"
                           "<|message|>{\"location\":\"Paris\"}";
  const HarmonySplit s = split_harmony(text);
  EXPECT_EQ(s.content.value_or("?"), "Let me check.");
  ASSERT_EQ(s.calls.size(), 1u);
}

TEST(HarmonyParser, MessagesOfOneKindAreJoinedWithNewlines) {
  const std::string text = "<|channel|>analysis<|message|>one<|end|>" + kNext +
                           "<|channel|>analysis<|message|>two<|end|>" + kNext +
                           "<|channel|>commentary<|message|>pre<|end|>" + kNext +
                           "<|channel|>analysis<|message|><|end|>" + kNext +
                           "<|channel|>final<|message|>answer";
  const HarmonySplit s = split_harmony(text);
  EXPECT_EQ(s.reasoning.value_or("?"), "one\ntwo");  // an empty message adds nothing
  EXPECT_EQ(s.content.value_or("?"), "pre\nanswer");
}

TEST(HarmonyParser, TextAfterReturnIsContent) {
  // With ignore_eos (or the stop token kept) the model goes on after <|return|>: harmony would
  // raise; text outside any message is kept as content, a further message is read as usual.
  HarmonySplit s = split_harmony("<|channel|>final<|message|>Done.<|return|>and more");
  EXPECT_EQ(s.content.value_or("?"), "Done.\nand more");
  s = split_harmony("<|channel|>final<|message|>Done.<|return|>" + kNext +
                    "<|channel|>final<|message|>Again.<|return|>\n");
  EXPECT_EQ(s.content.value_or("?"), "Done.\nAgain.");  // whitespace alone is no message
  // A model that skips the format altogether: its text is the content.
  s = split_harmony("Just an answer, 1 < 2.");
  EXPECT_FALSE(s.reasoning);
  EXPECT_EQ(s.content.value_or("?"), "Just an answer, 1 < 2.");
}

TEST(HarmonyParser, TruncatedOutput) {
  // Cut inside a body: the body so far counts (harmony's process_eos completes the message).
  HarmonySplit s = split_harmony("<|channel|>analysis<|message|>Thinking abo");
  EXPECT_EQ(s.reasoning.value_or("?"), "Thinking abo");
  EXPECT_FALSE(s.content);
  s = split_harmony(kAnalysis + kNext + "<|channel|>final<|message|>Partial answ");
  EXPECT_EQ(s.content.value_or("?"), "Partial answ");
  // Cut inside a header (or a tag): the header is dropped, nothing leaks.
  for (const std::string tail : {"", "<|channel|>fin", "<|channel|>final", "<|chan",
                                 " to=functions.get_weather", "<|channel|>final<|mess"}) {
    s = split_harmony(kAnalysis + kNext + tail);
    EXPECT_EQ(s.reasoning.value_or("?"), "User asks about Paris weather.") << tail;
    EXPECT_FALSE(s.content) << tail;
    EXPECT_TRUE(s.calls.empty()) << tail;
  }
  s = split_harmony("<|channel|>analy");
  EXPECT_FALSE(s.reasoning);
  EXPECT_FALSE(s.content);
  // Cut inside a call's arguments: the call is there with what was written (not valid JSON, so
  // a whole response keeps it as it is).
  s = split_harmony("<|channel|>commentary to=functions.f <|constrain|>json<|message|>{\"a\":");
  ASSERT_EQ(s.calls.size(), 1u);
  EXPECT_EQ(harmony_arguments(s.calls[0]), "{\"a\":");
}

TEST(HarmonyParser, UnexpectedChannelsAndRecipientsAreDropped) {
  // As vLLM's _SegmentType.IGNORE: an unknown channel, no channel, a built-in tool recipient.
  const std::string text = "<|channel|>secret<|message|>hidden<|end|>" + kNext +
                           "<|message|>no channel<|end|>" + kNext +
                           "<|channel|>commentary to=browser.search <|constrain|>json"
                           "<|message|>{\"query\":\"x\"}<|call|>" +
                           kNext + "<|channel|>final<|message|>shown";
  HarmonySplit s = split_harmony(text);
  EXPECT_FALSE(s.reasoning);
  EXPECT_EQ(s.content.value_or("?"), "shown");
  EXPECT_TRUE(s.calls.empty());
  // The analysis channel is reasoning whoever it is addressed to (python, browser).
  s = split_harmony("<|channel|>analysis to=python code<|message|>print(1)");
  EXPECT_EQ(s.reasoning.value_or("?"), "print(1)");
  // "functions." alone names no function.
  s = split_harmony("<|channel|>commentary to=functions.<|message|>{}");
  EXPECT_TRUE(s.calls.empty());
  EXPECT_FALSE(s.content);
}

TEST(HarmonyParser, MarkupInsideABodyIsNotText) {
  // <|start|> ends the message it interrupts; other markup is dropped; "<" alone is text.
  HarmonySplit s =
      split_harmony("<|channel|>final<|message|>a<|constrain|>b<|channel|>c<|message|>d 1<2 <|x|>" +
                    kNext + "<|channel|>final<|message|>e");
  EXPECT_EQ(s.content.value_or("?"), "abcd 1<2 <|x|>\ne");
  expect_clean(s, "markup");
}

// --- streaming ---------------------------------------------------------------------------

struct Assembled {
  std::string reasoning, content;
  std::vector<std::pair<std::string, std::string>> calls;  // name, arguments
};

void add(Assembled& a, const HarmonyDelta& d) {
  a.reasoning += d.reasoning;
  a.content += d.content;
  for (const ToolCallDelta& c : d.calls) {
    if (c.header) {
      ASSERT_EQ(c.index, static_cast<int>(a.calls.size()));
      ASSERT_TRUE(c.arguments.empty());
      a.calls.emplace_back(c.name, "");
    } else {
      ASSERT_LT(c.index, static_cast<int>(a.calls.size()));
      a.calls[static_cast<size_t>(c.index)].second += c.arguments;
    }
  }
}

Assembled stream(const std::string& text, const std::vector<size_t>& cuts) {
  HarmonyStreamSplitter sp;
  Assembled a;
  size_t at = 0;
  for (size_t cut : cuts) {
    add(a, sp.feed(text.substr(at, cut - at)));
    at = cut;
  }
  add(a, sp.feed(text.substr(at)));
  add(a, sp.finish());
  return a;
}

void expect_same(const Assembled& a, const HarmonySplit& w, const std::string& where) {
  EXPECT_EQ(a.reasoning, w.reasoning.value_or("")) << where;
  EXPECT_EQ(a.content, w.content.value_or("")) << where;
  ASSERT_EQ(a.calls.size(), w.calls.size()) << where;
  for (size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].first, w.calls[i].name) << where;
    EXPECT_EQ(a.calls[i].second, w.calls[i].arguments) << where;
  }
}

const std::vector<std::string>& stream_cases() {
  static const std::vector<std::string> cases = {
      kAnalysis + kNext + "<|channel|>final<|message|>It is sunny in Paris.<|return|>",
      kAnalysis + kNext + "<|channel|>commentary<|message|>Checking.<|end|>" + kNext +
          "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
          "{\"location\":\"Paris\"}<|call|>",
      " to=functions.a<|channel|>commentary json<|message|>{\"x\":1}<|call|>" + kNext +
          " to=functions.b<|channel|>commentary json<|message|>{\"y\":\"<2\"}",
      "<|channel|>analysis<|message|>one<|end|>" + kNext +
          "<|channel|>analysis<|message|>two<|end|>" + kNext +
          "<|channel|>secret<|message|>hidden<|end|>" + kNext +
          "<|channel|>final<|message|>Z\xc3\xbcrich 1<2 <|x|><|return|>tail",
      "Plain text, no harmony at all <|",
      kAnalysis + kNext + "<|channel|>fin",
  };
  return cases;
}

TEST(HarmonyParser, StreamReassemblesAtEveryTwoPieceSplit) {
  for (const std::string& text : stream_cases()) {
    const HarmonySplit whole = split_harmony(text);
    for (size_t cut = 0; cut <= text.size(); ++cut)
      expect_same(stream(text, {cut}), whole, text + " @" + std::to_string(cut));
  }
}

TEST(HarmonyParser, StreamReassemblesFromOneCharacterPieces) {
  for (const std::string& text : stream_cases()) {
    std::vector<size_t> cuts;
    for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
    expect_same(stream(text, cuts), split_harmony(text), text);
  }
}

TEST(HarmonyParser, StreamSendsTextAsSoonAsItIsCertain) {
  HarmonyStreamSplitter sp;
  HarmonyDelta d = sp.feed("<|channel|>analysis<|message|>Let me");
  EXPECT_EQ(d.reasoning, "Let me");  // not held to the end of the message
  d = sp.feed(" think<|e");
  EXPECT_EQ(d.reasoning, " think");  // "<|e" may begin <|end|>: held back
  d = sp.feed("nd|><|start|>assistant<|channel|>final");
  EXPECT_TRUE(d.reasoning.empty() && d.content.empty());  // a header is held to <|message|>
  d = sp.feed("<|message|>Yes");
  EXPECT_EQ(d.content, "Yes");
  d = sp.feed("<|return|>");
  EXPECT_TRUE(d.content.empty());
  // A tool call: its header (id, name) as soon as the header is complete.
  d = sp.feed("<|start|>assistant<|channel|>commentary to=functions.f json<|message|>{\"a\"");
  ASSERT_EQ(d.calls.size(), 2u);
  EXPECT_TRUE(d.calls[0].header);
  EXPECT_EQ(d.calls[0].name, "f");
  EXPECT_EQ(d.calls[0].id, sp.calls()[0].id);
  EXPECT_EQ(d.calls[1].arguments, "{\"a\"");
  EXPECT_EQ(sp.num_calls(), 1);
  d = sp.finish();
  EXPECT_TRUE(d.calls.empty() && d.content.empty() && d.reasoning.empty());
}

// --- server flags --------------------------------------------------------------------------

void expect_refused(const std::string& rp, const std::string& tp, const std::string& arch,
                    const std::string& flag) {
  ServerConfig cfg;
  cfg.reasoning_parser = rp;
  cfg.tool_call_parser = tp;
  try {
    check_parsers(cfg, arch);
    ADD_FAILURE() << rp << " / " << tp << " accepted for " << arch;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
  }
}

TEST(HarmonyParser, ServerFlagsMustFitTheModel) {
  EXPECT_TRUE(is_harmony_architecture("GptOssForCausalLM"));
  EXPECT_FALSE(is_harmony_architecture("Qwen3ForCausalLM"));
  ServerConfig ok;
  for (const auto& [rp, tp] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"openai_gptoss", ""}, {"", "openai"}, {"openai_gptoss", "openai"}}) {
    ok.reasoning_parser = rp;
    ok.tool_call_parser = tp;
    EXPECT_NO_THROW(check_parsers(ok, "GptOssForCausalLM")) << rp << " / " << tp;
  }
  ok.reasoning_parser = "qwen3";
  ok.tool_call_parser = "hermes";
  EXPECT_NO_THROW(check_parsers(ok, "Qwen3ForCausalLM"));
  expect_refused("openai_gptoss", "", "Qwen3ForCausalLM", "--reasoning-parser openai_gptoss");
  expect_refused("", "openai", "LlamaForCausalLM", "--tool-call-parser openai");
  expect_refused("qwen3", "", "GptOssForCausalLM", "--reasoning-parser qwen3");
  expect_refused("", "hermes", "GptOssForCausalLM", "--tool-call-parser hermes");
  expect_refused("deepseek_r1", "", "GptOssForCausalLM", "--reasoning-parser");
  for (const char* glm : {"glm45", "glm47"}) {
    ok.reasoning_parser = glm;
    ok.tool_call_parser = glm;
    EXPECT_NO_THROW(check_parsers(ok, "Glm4MoeForCausalLM"));
    expect_refused(glm, "", "GptOssForCausalLM", std::string("--reasoning-parser ") + glm);
    expect_refused("", glm, "GptOssForCausalLM", std::string("--tool-call-parser ") + glm);
  }
  for (const char* rp : {"minimax_m2", "minimax_m2_append_think"}) {
    ok.reasoning_parser = rp;
    ok.tool_call_parser = "minimax_m2";
    EXPECT_NO_THROW(check_parsers(ok, "MiniMaxM2ForCausalLM"));
    expect_refused(rp, "", "GptOssForCausalLM", std::string("--reasoning-parser ") + rp);
  }
  expect_refused("", "minimax_m2", "GptOssForCausalLM", "--tool-call-parser minimax_m2");
  expect_refused("minimax_m3", "", "MiniMaxM2ForCausalLM", "--reasoning-parser");
  expect_refused("", "minimax", "MiniMaxM2ForCausalLM", "--tool-call-parser");
  expect_refused("glm44", "", "Glm4MoeForCausalLM", "--reasoning-parser");
  expect_refused("", "glm4", "Glm4MoeForCausalLM", "--tool-call-parser");
  expect_refused("", "pythonic", "GptOssForCausalLM", "--tool-call-parser");
}

}  // namespace
}  // namespace vllm::api
