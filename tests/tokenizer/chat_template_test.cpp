// Golden tests for the chat-template engine: every case rendered by Python jinja2 (configured
// as transformers does, see tools/make_chat_template_goldens.py) must render byte-identically,
// and every case where Python raised must raise here too (same message for raise_exception).
#include "tokenizer/chat_template/chat_template.h"

#include <gtest/gtest.h>

#include <ctime>

#include <fstream>
#include <sstream>
#include <string>

namespace {

using nlohmann::ordered_json;
using vllm::tok::ChatTemplate;
using vllm::tok::ChatTemplateError;

ordered_json load_golden(const std::string& name) {
  std::string path = std::string(VLLM_SOURCE_DIR) + "/tests/golden/chat_template/" + name + ".json";
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "missing golden " << path;
  std::stringstream ss;
  ss << f.rdbuf();
  return ordered_json::parse(ss.str());
}

// Runs one case; returns a description of the mismatch, or "" when it matches.
std::string check_case(const ChatTemplate& tpl, const ordered_json& c) {
  const std::string name = c["name"].get<std::string>();
  if (c.contains("expected")) {
    std::string got;
    try {
      got = tpl.render_ordered(c["context"]);
    } catch (const ChatTemplateError& e) {
      return name + ": unexpected error: " + e.what();
    }
    std::string want = c["expected"].get<std::string>();
    // A template's strftime_now(fmt) was pinned to "@@STRFTIME[fmt]@@" when the golden was
    // rendered (tools/make_chat_template_goldens.py): today's date, formatted here.
    for (size_t at; (at = want.find("@@STRFTIME[")) != std::string::npos;) {
      const size_t end = want.find("]@@", at);
      if (end == std::string::npos) break;
      const std::string fmt = want.substr(at + 11, end - at - 11);
      std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      char buf[128];
      want.replace(at, end + 3 - at,
                   std::string(buf, std::strftime(buf, sizeof(buf), fmt.c_str(), &tm)));
    }
    if (got == want) return "";
    size_t k = 0;
    while (k < got.size() && k < want.size() && got[k] == want[k]) ++k;
    return name + ": output differs at byte " + std::to_string(k) + "\n--- want ---\n" + want +
           "\n--- got ---\n" + got;
  }
  try {
    std::string got = tpl.render_ordered(c["context"]);
    return name + ": expected error '" + c["error"].get<std::string>() + "', got output:\n" + got;
  } catch (const ChatTemplateError& e) {
    if (c["error_kind"] == "raise_exception" && e.message() != c["error"].get<std::string>())
      return name + ": raise_exception message '" + e.message() + "' != '" +
             c["error"].get<std::string>() + "'";
  }
  return "";
}

void run_golden(const std::string& name, size_t min_cases) {
  ordered_json g = load_golden(name);
  ASSERT_TRUE(g.contains("template"));
  ChatTemplate tpl(g["template"].get<std::string>());
  size_t n = 0;
  for (const auto& c : g["cases"]) {
    std::string err = check_case(tpl, c);
    EXPECT_EQ(err, "") << name;
    ++n;
  }
  EXPECT_GE(n, min_cases);
}

TEST(ChatTemplateGolden, Qwen3) { run_golden("qwen3", 35); }
TEST(ChatTemplateGolden, SmolLM2) { run_golden("smollm2", 35); }
TEST(ChatTemplateGolden, ChatMLFallback) { run_golden("chatml", 35); }
TEST(ChatTemplateGolden, Llama3Style) { run_golden("llama3", 35); }
TEST(ChatTemplateGolden, MistralStyle) { run_golden("mistral", 35); }
TEST(ChatTemplateGolden, Gemma3) { run_golden("gemma3", 35); }
// Mistral Small 3.1's own template (tools, today's date in its default system prompt).
TEST(ChatTemplateGolden, MistralSmall31) { run_golden("mistral_small_31", 35); }
// Command R7B's tool-use template (Cohere2): macros calling macros, namespace lists grown with +,
// `not in`, list slices from loop.index0, break.
TEST(ChatTemplateGolden, CommandR7B) { run_golden("command_r7b", 35); }
// gpt-oss's harmony template: channels, developer instructions, tools as TypeScript
// namespaces, reasoning_effort, today's date.
TEST(ChatTemplateGolden, GptOss) { run_golden("gpt_oss", 35); }
// GLM-4.6's template (GLM-4.5's family): tools as tojson(ensure_ascii=False) lines, XML-style
// <tool_call> histories, reasoning_content split out of '</think>', enable_thinking.
TEST(ChatTemplateGolden, Glm46) { run_golden("glm46", 35); }
// MiniMax-M2's template: ]~!b[ / ]~b]role turns, tools as tojson(ensure_ascii=False) lines,
// <minimax:tool_call> / <invoke> / <parameter> histories, reasoning after the last user turn.
TEST(ChatTemplateGolden, MinimaxM2) { run_golden("minimax_m2", 35); }
TEST(ChatTemplateGolden, Qwen25Style) { run_golden("qwen25", 35); }
TEST(ChatTemplateGolden, FeatureSweep) { run_golden("features", 5); }

// Files of small templates, each case with its own `template`.
size_t run_snippet_file(const std::string& name) {
  ordered_json g = load_golden(name);
  size_t n = 0;
  for (const auto& c : g["cases"]) {
    std::string src = c["template"].get<std::string>();
    std::string err;
    try {
      ChatTemplate tpl(src);
      err = check_case(tpl, c);
    } catch (const ChatTemplateError& e) {
      if (c.contains("expected")) err = c["name"].get<std::string>() + ": parse error " + e.what();
    }
    EXPECT_EQ(err, "") << "template: " << src;
    ++n;
  }
  return n;
}

// Small templates, one construct each (whitespace control, operators, filters, errors).
TEST(ChatTemplateGolden, Snippets) { EXPECT_GE(run_snippet_file("snippets"), 50u); }

// Hostile templates Python can answer (huge slice steps and ranges, int64 edges, namespace
// cycles, NUL bytes, unterminated constructs) and deep-but-legal ones the limits must accept.
TEST(ChatTemplateGolden, Hostile) { EXPECT_GE(run_snippet_file("hostile"), 35u); }

// The fallback constant is what the goldens were rendered from (the script reads the C++
// source); this guards the two from drifting.
TEST(ChatTemplateGolden, ChatMLGoldenMatchesConstant) {
  ordered_json g = load_golden("chatml");
  EXPECT_EQ(g["template"].get<std::string>(), std::string(ChatTemplate::chatml_fallback()));
}

}  // namespace
