// Strict tool calling under --tool-call-parser hermes: the structural tag built for each request
// equals the one vLLM 0.33's parser layer builds (tests/golden/structured_output/
// structural_tags.json, "hermes", made by tools/make_structural_tag_goldens.py from vLLM's
// wheel), for strict and non-strict tools, every tool_choice, parallel_tool_calls, each
// --tool-strict-level and beside a response_format.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "api/server/api_error.h"
#include "api/server/protocol.h"
#include "api/server/strict_tools.h"

namespace vllm::api {
namespace {

const nlohmann::json& goldens() {
  static const nlohmann::json g = [] {
    std::ifstream f(std::string(VLLM_SOURCE_DIR) +
                    "/tests/golden/structured_output/structural_tags.json");
    std::stringstream ss;
    ss << f.rdbuf();
    return nlohmann::json::parse(ss.str());
  }();
  return g;
}

void check_parser(const char* parser, const nlohmann::json& cases) {
  const ToolParserKind kind = *tool_parser_by_name(parser);
  int tags = 0, none = 0;
  for (const auto& c : cases) {
    const std::string name = std::string(parser) + " " + c["name"].get<std::string>();
    ojson body = ojson::parse(c["request"].dump());
    body["model"] = "m";
    body["messages"] = ojson::parse(R"([{"role": "user", "content": "hi"}])");
    if (c["name"] == "strict_required_response_format") {
      // vLLM drops the response_format there (a log line); here it is refused by name.
      EXPECT_THROW(parse_chat_request(body), ApiError);
      continue;
    }
    const ChatRequest r = parse_chat_request(body);
    const ToolStrictLevel level = c["tool_strict_level"].is_null()
                                      ? default_tool_strict_level(kind)
                                      : *tool_strict_level_by_name(c["tool_strict_level"]);
    const auto got = tool_structural_tag(kind, r, r.constraint, level);
    if (c["structural_tag"].is_null()) {
      EXPECT_FALSE(got.has_value()) << name << ": " << got->dump();
      ++none;
      continue;
    }
    ASSERT_TRUE(got.has_value()) << name;
    // Compared as JSON values (key order aside). Required / named calls pin every tool's
    // arguments: vLLM's tag at --tool-strict-level parameter.
    const nlohmann::json* want = &c["structural_tag"];
    if ((name.find("_required_par") != std::string::npos ||
         name.find("_named_par") != std::string::npos) &&
        name.substr(name.rfind('_')) != "_parameter") {
      const std::string as =
          c["name"].get<std::string>().substr(0, c["name"].get<std::string>().rfind('_')) +
          "_parameter";
      for (const auto& o : cases)
        if (o["name"] == as) want = &o["structural_tag"];
      ASSERT_NE(want, &c["structural_tag"]) << name;
    }
    EXPECT_EQ(nlohmann::json::parse(got->dump()), *want) << name;
    ++tags;
  }
  EXPECT_GT(tags, 30) << parser;
  EXPECT_GT(none, 10) << parser;
}

TEST(StrictTools, HermesTagsAreVllms) { check_parser("hermes", goldens()["hermes"]); }

TEST(StrictTools, BuiltinTagsAreVllms) {
  for (const char* p : {"llama3_json", "deepseek_v3", "deepseek_v31", "qwen3_coder", "minimax_m2",
                        "glm45", "kimi_k2", "openai"})
    check_parser(p, goldens()["builtin"][p]);
  // glm47 is vLLM's alias of glm45.
  check_parser("glm47", goldens()["builtin"]["glm45"]);
  check_parser("qwen3_xml", goldens()["builtin"]["qwen3_coder"]);
  // llama4_json is vLLM's alias of llama3_json.
  check_parser("llama4_json", goldens()["builtin"]["llama3_json"]);
}

// gpt-oss: a structured output becomes the tag vLLM's HarmonyParser makes of it (an optional
// analysis message, then the final message holding the output), for each kind of constraint.
TEST(StrictTools, HarmonyOutputTagsAreVllms) {
  int n = 0;
  for (const auto& c : goldens()["harmony_outputs"]) {
    ojson body = ojson::parse(c["request"].dump());
    body["model"] = "m";
    body["messages"] = ojson::parse(R"([{"role": "user", "content": "hi"}])");
    const ChatRequest r = parse_chat_request(body);
    ASSERT_TRUE(r.constraint.has_value()) << c["name"];
    EXPECT_EQ(nlohmann::json::parse(harmony_output_tag(*r.constraint).dump()), c["structural_tag"])
        << c["name"];
    ++n;
  }
  EXPECT_EQ(n, 6);
}

TEST(StrictTools, LevelsAndParsers) {
  EXPECT_EQ(tool_strict_level_by_name("parameter"), ToolStrictLevel::kParameter);
  EXPECT_FALSE(tool_strict_level_by_name("strict").has_value());
  EXPECT_TRUE(structures_tool_calls(*tool_parser_by_name("qwen3_json")));
  EXPECT_TRUE(structures_tool_calls(*tool_parser_by_name("glm47")));
  EXPECT_TRUE(structures_tool_calls(*tool_parser_by_name("kimi_k2")));
  EXPECT_TRUE(structures_tool_calls(*tool_parser_by_name("openai")));
  EXPECT_FALSE(structures_tool_calls(*tool_parser_by_name("mistral")));
  EXPECT_EQ(default_tool_strict_level(ToolParserKind::kGlm45), ToolStrictLevel::kFunction);
  EXPECT_EQ(default_tool_strict_level(ToolParserKind::kHermes), ToolStrictLevel::kAuto);
}

}  // namespace
}  // namespace vllm::api
