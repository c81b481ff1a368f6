// vLLM 0.33's tool-call structural tags for hermes (strict_tools.h).
#include "api/server/strict_tools.h"

#include "api/server/api_error.h"

namespace vllm::api {

using ojson = nlohmann::ordered_json;
using engine::so::GrammarKind;

std::optional<ToolStrictLevel> tool_strict_level_by_name(const std::string& name) {
  if (name == "auto") return ToolStrictLevel::kAuto;
  if (name == "function") return ToolStrictLevel::kFunction;
  if (name == "parameter") return ToolStrictLevel::kParameter;
  return std::nullopt;
}

bool vllm_structures_tool_calls(ToolParserKind k) {
  switch (k) {
    case ToolParserKind::kHermes:       // "hermes"
    case ToolParserKind::kLlama3Json:   // "llama"
    case ToolParserKind::kGlm45:        // "glm_4_7"
    case ToolParserKind::kMinimaxM2:    // "minimax"
    case ToolParserKind::kQwen3Coder:   // "qwen_3_coder"
    case ToolParserKind::kDeepseekV3:   // "deepseek_r1"
    case ToolParserKind::kDeepseekV31:  // "deepseek_v3_1"
    case ToolParserKind::kOpenAI:       // "harmony"
      return true;
    default:
      return false;
  }
}

bool structures_tool_calls(ToolParserKind k) { return k == ToolParserKind::kHermes; }

namespace {

// pydantic's dump of xgrammar's formats: every field, defaults included.
ojson json_schema_format(ojson schema) {
  return {
      {"type", "json_schema"}, {"json_schema", std::move(schema)}, {"style", "json"},
      {"any_order", false},    {"max_whitespace_cnt", nullptr},    {"excludes", ojson::array()}};
}

// vLLM's structured_outputs_to_format: the request's own constraint as a format.
ojson output_format(const OutputConstraint& c) {
  switch (c.kind) {
    case GrammarKind::kJsonSchema:
      return json_schema_format(ojson::parse(c.text));
    case GrammarKind::kJsonObject:
      return json_schema_format({{"type", "object"}});
    case GrammarKind::kRegex:
      return {{"type", "regex"}, {"pattern", c.text}};
    case GrammarKind::kChoice: {
      ojson el = ojson::array();
      for (const auto& s : ojson::parse(c.text))
        el.push_back({{"type", "const_string"}, {"value", s}});
      return {{"type", "or"}, {"elements", std::move(el)}};
    }
    case GrammarKind::kGrammar:
      return {{"type", "grammar"}, {"grammar", c.text}, {"syntax", "ebnf"}};
    case GrammarKind::kStructuralTag: {
      const ojson t = ojson::parse(c.text);
      if (!t.contains("structures")) return t.at("format");
      ojson tags = ojson::array();
      for (const auto& s : t.at("structures"))
        tags.push_back({{"type", "tag"},
                        {"begin", s.at("begin")},
                        {"content", json_schema_format(s.value("schema", ojson(true)))},
                        {"end", s.at("end")}});
      return {
          {"type", "triggered_tags"}, {"triggers", t.at("triggers")}, {"tags", tags},
          {"at_least_one", false},    {"stop_after_first", false},    {"excludes", ojson::array()}};
    }
  }
  return nullptr;
}

bool tool_strict(const ojson& t) {
  const ojson& fn = t["function"];
  return fn.contains("strict") && fn["strict"].is_boolean() && fn["strict"].get<bool>();
}

}  // namespace

std::optional<ojson> hermes_tool_structural_tag(const ChatRequest& r,
                                                const std::optional<OutputConstraint>& structured,
                                                ToolStrictLevel level) {
  if (r.tools.is_null() || r.tools.empty() || r.tool_choice == ToolChoice::kNone)
    return std::nullopt;
  const bool is_auto = r.tool_choice == ToolChoice::kAuto;
  const bool single = !r.parallel_tool_calls;
  // Limiting the call count needs the call envelope in the grammar (auto beside a structured
  // output keeps its format-only grammar).
  if (single && !(is_auto && structured) && level < ToolStrictLevel::kFunction)
    level = ToolStrictLevel::kFunction;
  bool any_strict = false;
  for (const auto& t : r.tools) any_strict = any_strict || tool_strict(t);
  if (is_auto && level == ToolStrictLevel::kAuto && !any_strict) return std::nullopt;
  // With a structured output beside auto, the tools' branch must call (the other branch is the
  // output's format).
  const bool calls_required = !is_auto || structured;
  ojson tags = ojson::array();
  for (const auto& t : r.tools) {
    const ojson& fn = t["function"];
    if (r.tool_choice == ToolChoice::kNamed && fn["name"] != r.tool_choice_name) continue;
    // Deliberate difference: a required / named call's arguments always follow the tool's
    // parameters here (vLLM 0.33 pins them only for strict tools or --tool-strict-level
    // parameter, leaving any JSON otherwise, where its JSON forms used to pin them).
    const bool strict = level >= ToolStrictLevel::kParameter || tool_strict(t) || !is_auto;
    const ojson args = strict && fn["parameters"].is_object() ? fn["parameters"] : ojson(true);
    const std::string name = fn["name"].get<std::string>();
    for (const auto& [begin, end] :
         {std::pair<std::string, std::string>{"<tool_call>\n", "}\n</tool_call>"},
          {"<tool_call>", "}</tool_call>"}})
      tags.push_back({{"type", "tag"},
                      {"begin", begin + "{\"name\": \"" + name + "\", \"arguments\": "},
                      {"content", json_schema_format(args)},
                      {"end", end}});
  }
  ojson format;
  if (!calls_required) {
    format = {{"type", "triggered_tags"},   {"triggers", ojson::array({"<tool_call>"})},
              {"tags", std::move(tags)},    {"at_least_one", false},
              {"stop_after_first", single}, {"excludes", ojson::array()}};
  } else {
    format = {{"type", "tags_with_separator"},
              {"tags", std::move(tags)},
              {"separator", ""},
              {"at_least_one", true},
              {"stop_after_first", single || r.tool_choice == ToolChoice::kNamed}};
  }
  if (is_auto && structured) {
    ojson other;
    try {
      other = output_format(*structured);
    } catch (const nlohmann::json::exception& e) {
      throw bad_request(structured->field + ": not a valid constraint: " + e.what(),
                        structured->field);
    }
    format = {{"type", "or"}, {"elements", ojson::array({std::move(format), std::move(other)})}};
  }
  return ojson{{"type", "structural_tag"}, {"format", std::move(format)}};
}

}  // namespace vllm::api
