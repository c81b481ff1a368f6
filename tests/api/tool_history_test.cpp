// Tool-use histories as OpenAI clients send them (assistant content null + tool_calls with
// JSON-string arguments, tool messages with tool_call_id, content parts) must reach the chat
// template exactly as vLLM hands them over, so the prompt is byte-identical to Python vLLM's.
// The goldens' `request` cases (tools/make_chat_template_goldens.py, vllm_normalize) hold the
// request, vLLM's normalized context, and Python jinja2's rendering of it with the real Qwen3
// and the Qwen2.5 templates.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api/server/protocol.h"
#include "tokenizer/chat_template/chat_template.h"

namespace vllm::api {
namespace {

ojson load_golden(const std::string& name) {
  std::ifstream f(std::string(VLLM_SOURCE_DIR) + "/tests/golden/chat_template/" + name + ".json");
  std::stringstream ss;
  ss << f.rdbuf();
  return ojson::parse(ss.str());
}

void check(const std::string& name) {
  const ojson g = load_golden(name);
  tok::ChatTemplate tpl(g["template"].get<std::string>());
  int n = 0;
  for (const auto& c : g["cases"]) {
    if (!c.contains("request")) continue;
    ++n;
    const std::string cname = c["name"].get<std::string>();
    ojson body = c["request"];
    const ChatRequest r = parse_chat_request(body);
    // Same messages and tools as vLLM passes to the template, key order included (tojson
    // writes keys in order).
    EXPECT_EQ(r.messages.dump(), c["context"]["messages"].dump()) << cname;
    EXPECT_EQ(r.tools.dump(), c["context"]["tools"].dump()) << cname;
    ojson ctx = c["context"];
    ctx["messages"] = r.messages;
    ctx["tools"] = r.tools;
    EXPECT_EQ(tpl.render_ordered(ctx), c["expected"].get<std::string>()) << cname;
  }
  EXPECT_GE(n, 3) << name;
}

TEST(ToolHistory, Qwen3TemplateRendersRequestsAsVllm) { check("qwen3"); }
TEST(ToolHistory, Qwen25TemplateRendersRequestsAsVllm) { check("qwen25"); }

}  // namespace
}  // namespace vllm::api
