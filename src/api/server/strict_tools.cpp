// vLLM 0.33's tool-call structural tags (strict_tools.h).
#include "api/server/strict_tools.h"

#include "api/server/api_error.h"
#include "api/server/py_json.h"

namespace vllm::api {

using ojson = nlohmann::ordered_json;
using engine::so::GrammarKind;

std::optional<ToolStrictLevel> tool_strict_level_by_name(const std::string& name) {
  if (name == "auto") return ToolStrictLevel::kAuto;
  if (name == "function") return ToolStrictLevel::kFunction;
  if (name == "parameter") return ToolStrictLevel::kParameter;
  return std::nullopt;
}

ToolStrictLevel default_tool_strict_level(ToolParserKind k) {
  // vLLM's Glm47MoeModelToolParser.default_tool_strict_level: every GLM tool call's envelope.
  return k == ToolParserKind::kGlm45 ? ToolStrictLevel::kFunction : ToolStrictLevel::kAuto;
}

namespace {

// pydantic's dump of xgrammar's formats: every field, defaults included.
ojson json_schema_format(ojson schema, const char* style = "json") {
  return {
      {"type", "json_schema"}, {"json_schema", std::move(schema)}, {"style", style},
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

namespace {

ojson tag(std::string begin, ojson content, std::string end) {
  return {{"type", "tag"},
          {"begin", std::move(begin)},
          {"content", std::move(content)},
          {"end", std::move(end)}};
}
ojson triggered(ojson triggers, ojson tags, bool at_least_one, ojson excludes) {
  return {{"type", "triggered_tags"},  {"triggers", std::move(triggers)},
          {"tags", std::move(tags)},   {"at_least_one", at_least_one},
          {"stop_after_first", false}, {"excludes", std::move(excludes)}};
}
ojson separated(ojson tags, std::string separator, bool stop_after_first) {
  return {{"type", "tags_with_separator"},
          {"tags", std::move(tags)},
          {"separator", std::move(separator)},
          {"at_least_one", true},
          {"stop_after_first", stop_after_first}};
}

// vLLM's limit_to_single_tool_call: every call list stops after its first call.
void single_call(ojson& f) {
  if (f.is_object()) {
    const auto t = f.find("type");
    if (t != f.end() && (*t == "triggered_tags" || *t == "tags_with_separator"))
      f["stop_after_first"] = true;
    for (auto& [k, v] : f.items()) single_call(v);
  } else if (f.is_array()) {
    for (auto& v : f) single_call(v);
  }
}

// One tool the model may call, its arguments' schema resolved (`args`: true when free), whether
// it is strict and its parameters as given (vLLM's GLM builder pins a loose tool's keys).
struct Callable {
  std::string name;
  ojson args;
  bool strict = false;
  ojson params;
};

// vLLM's hermes tag (its own registry): two spellings of each call.
ojson hermes_format(const std::vector<Callable>& tools, char choice) {
  ojson tags = ojson::array();
  for (const auto& t : tools)
    for (const auto& [begin, end] :
         {std::pair<std::string, std::string>{"<tool_call>\n", "}\n</tool_call>"},
          {"<tool_call>", "}</tool_call>"}})
      tags.push_back(tag(begin + "{\"name\": \"" + t.name + "\", \"arguments\": ",
                         json_schema_format(t.args), end));
  if (choice == 'a')
    return triggered(ojson::array({"<tool_call>"}), std::move(tags), false, ojson::array());
  return separated(std::move(tags), "", choice == 'f');
}

const ojson& think_excludes() {
  static const ojson e = ojson::array({"<think>", "</think>"});
  return e;
}

// xgrammar's builtin "llama" (Llama 3.x JSON calls).
ojson llama_format(const std::vector<Callable>& tools, char choice) {
  auto call = [](const Callable& t) {
    return tag("{\"name\": \"" + t.name + "\", \"parameters\": ", json_schema_format(t.args), "}");
  };
  if (choice == 'f') return call(tools.front());
  ojson tags = ojson::array();
  for (const auto& t : tools) tags.push_back(call(t));
  return triggered(ojson::array({"{\"name\": "}), std::move(tags), choice == 'r', think_excludes());
}

// xgrammar's builtins "deepseek_r1" (V3 / R1: a fenced JSON block after the name) and
// "deepseek_v3_1" (V3.1: the JSON right after the separator).
ojson deepseek_format(const std::vector<Callable>& tools, char choice, bool v31) {
  const std::string calls_begin = "<｜tool▁calls▁begin｜>", calls_end = "<｜tool▁calls▁end｜>",
                    call_begin = "<｜tool▁call▁begin｜>", call_end = "<｜tool▁call▁end｜>",
                    sep = "<｜tool▁sep｜>";
  auto head = [&](const std::string& name) {
    return v31 ? name + sep : "function" + sep + name + "\n```json\n";
  };
  const std::string tail = v31 ? "" : "\n```";
  if (choice == 'f')
    return tag(calls_begin + call_begin + head(tools.front().name),
               json_schema_format(tools.front().args), tail + call_end + calls_end);
  ojson inner = ojson::array();
  for (const auto& t : tools)
    inner.push_back(tag(call_begin + head(t.name), json_schema_format(t.args), tail + call_end));
  ojson block = tag(calls_begin, separated(std::move(inner), v31 ? "" : "\n", false), calls_end);
  if (choice == 'r') return block;
  return triggered(ojson::array({calls_begin}), ojson::array({std::move(block)}), false,
                   think_excludes());
}

// xgrammar's builtin "qwen_3_coder" (Qwen3-Coder / Qwen3.5 XML calls, arguments in the
// qwen_xml style).
ojson qwen3_coder_format(const std::vector<Callable>& tools, char choice) {
  auto call = [](const Callable& t) {
    return tag("<tool_call>\n<function=" + t.name + ">\n", json_schema_format(t.args, "qwen_xml"),
               "\n</function>\n</tool_call>");
  };
  if (choice == 'f') return call(tools.front());
  ojson tags = ojson::array();
  for (const auto& t : tools) tags.push_back(call(t));
  return triggered(ojson::array({"<tool_call>\n<function="}), std::move(tags), choice == 'r',
                   think_excludes());
}

// vLLM's own "minimax" builder (MiniMax-M2: <invoke name="NAME"> blocks in a
// <minimax:tool_call> block, arguments in the minimax_xml style).
ojson minimax_format(const std::vector<Callable>& tools, char choice) {
  const std::string begin = "<minimax:tool_call>\n", end = "</minimax:tool_call>";
  ojson tags = ojson::array();
  for (const auto& t : tools)
    tags.push_back(tag("<invoke name=\"" + t.name + "\">\n",
                       json_schema_format(t.args, "minimax_xml"), "</invoke>\n"));
  if (choice == 'a')
    return triggered(ojson::array({"<minimax:tool_call>"}),
                     ojson::array({tag(begin, separated(std::move(tags), "", false), end)}), false,
                     think_excludes());
  return {{"type", "sequence"},
          {"elements", ojson::array({{{"type", "const_string"}, {"value", "\n" + begin}},
                                     separated(std::move(tags), "", choice == 'f'),
                                     {{"type", "const_string"}, {"value", end}}})}};
}

// GLM-4.5 / 4.6 / 4.7: <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...
// </tool_call>. Markers that may not appear in free text or in a value (vLLM's
// _GLM_4_7_VALUE_EXCLUDES; text between calls may start a call, so not <tool_call> there).
const ojson& glm_value_excludes() {
  static const ojson e = ojson::array({"<think>", "</think>", "<tool_call>", "</tool_call>",
                                       "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>"});
  return e;
}
ojson glm_text_excludes() {
  ojson e = ojson::array();
  for (const auto& x : glm_value_excludes())
    if (x != "<tool_call>") e.push_back(x);
  return e;
}
ojson any_text(const ojson& excludes) {
  return {{"type", "any_text"},
          {"excludes", excludes},
          {"max_tokens", nullptr},
          {"max_chars", nullptr}};
}
ojson const_string(std::string v) { return {{"type", "const_string"}, {"value", std::move(v)}}; }
ojson one_or_any(ojson elements) {
  if (elements.size() == 1) return std::move(elements[0]);
  return {{"type", "or"}, {"elements", std::move(elements)}};
}

// vLLM's _glm_4_7_value_format: a loose tool's value by its property's enum or type.
ojson glm_value_format(const ojson& prop) {
  if (prop.is_object() && prop.contains("enum") && prop["enum"].is_array() &&
      !prop["enum"].empty()) {
    ojson values = ojson::array();
    for (const auto& v : prop["enum"]) {
      std::string s;
      if (v.is_string())
        s = v.get<std::string>();
      else if (!py_json_dumps(v.dump(), s))
        s = v.dump();
      values.push_back(const_string(std::move(s)));
    }
    return one_or_any(std::move(values));
  }
  const ojson type = prop.is_object() && prop.contains("type") ? prop["type"] : ojson();
  if (type.is_array()) {
    ojson formats = ojson::array();
    bool string = false;
    for (const auto& t : type) {
      if (t == "string")
        string = true;
      else
        formats.push_back(glm_value_format(ojson{{"type", t}}));
    }
    if (string) formats.push_back(any_text(glm_value_excludes()));
    if (!formats.empty()) return one_or_any(std::move(formats));
  }
  if (type.is_null() || type == "string" || type.is_array()) return any_text(glm_value_excludes());
  return json_schema_format({{"type", type}});
}

// vLLM's _glm_4_7_plain_properties: the properties of a plain object schema, else null.
const ojson* glm_plain_properties(const ojson& params) {
  if (!params.is_object()) return nullptr;
  const auto p = params.find("properties");
  if (p == params.end() || !p->is_object() || p->empty()) return nullptr;
  if (params.contains("additionalProperties") && params["additionalProperties"] == true)
    return nullptr;
  for (const char* k : {"$ref", "allOf", "anyOf", "oneOf", "patternProperties"})
    if (params.contains(k)) return nullptr;
  return &*p;
}

ojson glm_call(const Callable& t) {
  const std::string begin = "<tool_call>" + t.name, end = "</tool_call>";
  const ojson params = t.params.is_null() ? ojson(true) : t.params;
  if (t.strict) return tag(begin, json_schema_format(params, "glm_xml"), end);
  // A loose tool (vLLM's _glm_4_7_tool_tag): its keys and their values' basic types.
  const ojson* props = glm_plain_properties(t.params);
  if (!props) return tag(begin, json_schema_format(true, "glm_xml"), end);
  ojson pairs = ojson::array();
  for (const auto& [key, prop] : props->items())
    pairs.push_back(
        {{"type", "sequence"},
         {"elements", ojson::array({const_string("<arg_key>" + key + "</arg_key><arg_value>"),
                                    glm_value_format(prop), const_string("</arg_value>")})}});
  return tag(begin, {{"type", "star"}, {"content", one_or_any(std::move(pairs))}}, end);
}

// xgrammar's builtin "glm_4_7" when every tool is strict, vLLM's own builder otherwise.
ojson glm_format(const std::vector<Callable>& tools, char choice) {
  ojson tags = ojson::array();
  bool all_strict = true;
  for (const auto& t : tools) {
    tags.push_back(glm_call(t));
    all_strict = all_strict && t.strict;
  }
  if (choice == 'a' || (choice == 'r' && all_strict))
    return triggered(ojson::array({"<tool_call>"}), std::move(tags), choice == 'r',
                     glm_text_excludes());
  if (choice == 'f' && all_strict) return std::move(tags[0]);
  return separated(std::move(tags), "", choice == 'f');
}

// xgrammar's builtin "kimi" (Kimi K2): calls in a <|tool_calls_section_begin|> section, each
// <|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>ARGS<|tool_call_end|>.
ojson kimi_format(const std::vector<Callable>& tools, char choice) {
  const std::string section_begin = "<|tool_calls_section_begin|>",
                    section_end = "<|tool_calls_section_end|>";
  auto call = [](const Callable& t) {
    return tag("<|tool_call_begin|>functions." + t.name + ":",
               {{"type", "sequence"},
                {"elements", ojson::array({{{"type", "regex"}, {"pattern", "\\d+"}},
                                           const_string("<|tool_call_argument_begin|>"),
                                           json_schema_format(t.args)})}},
               "<|tool_call_end|>");
  };
  auto in_section = [&](ojson calls) {
    return ojson{{"type", "sequence"},
                 {"elements", ojson::array({const_string(section_begin), std::move(calls),
                                            const_string(section_end)})}};
  };
  if (choice == 'f') return in_section(call(tools.front()));
  ojson tags = ojson::array();
  for (const auto& t : tools) tags.push_back(call(t));
  if (choice == 'r') return in_section(separated(std::move(tags), "", false));
  return triggered(
      ojson::array({section_begin}),
      ojson::array({tag(section_begin, separated(std::move(tags), "", false), section_end)}), false,
      ojson::array({"<think>", "</think>", "<|tool_call_begin|>"}));
}

// vLLM's harmony _assemble_tag (its format): an optional analysis message (and a commentary
// one), then `content`.
ojson harmony_messages(bool commentary, ojson content) {
  auto optional_message = [](const char* channel) {
    return ojson{
        {"type", "optional"},
        {"content",
         {{"type", "sequence"},
          {"elements", ojson::array({tag(std::string("<|channel|>") + channel + "<|message|>",
                                         any_text(ojson::array()), "<|end|>"),
                                     const_string("<|start|>assistant")})}}}};
  };
  ojson elements = ojson::array({optional_message("analysis")});
  if (commentary) elements.push_back(optional_message("commentary"));
  elements.push_back(std::move(content));
  return {{"type", "sequence"}, {"elements", std::move(elements)}};
}

// A harmony message that ends with <|end|> or with the output (a stop token).
ojson harmony_tag(std::string begin, ojson content) {
  return {{"type", "tag"},
          {"begin", std::move(begin)},
          {"content", std::move(content)},
          {"end", ojson::array({"<|end|>", ""})}};
}

// vLLM's own "harmony" builder (gpt-oss, function tools): a call is a message to
// functions.NAME in any of harmony's spellings and channels, its JSON arguments ended by <|end|>
// or the call's stop token; under auto a final message may be the answer instead. Analysis and
// commentary messages may come first.
ojson harmony_format(const std::vector<Callable>& tools, char choice) {
  static const char* const kChannels[] = {"<|channel|>commentary", "<|channel|>analysis",
                                          "<|channel|>final"};
  static const char* const kConstrains[] = {" json", " <|constrain|>json"};
  ojson tags = ojson::array();
  for (const auto& t : tools)
    for (int pattern = 0; pattern < 2; ++pattern)
      for (const char* constrain : kConstrains)
        for (const char* channel : kChannels) {
          const std::string to = " to=functions." + t.name;
          tags.push_back(harmony_tag(pattern == 0 ? to + channel + constrain + "<|message|>"
                                                  : channel + to + constrain + "<|message|>",
                                     json_schema_format(t.args)));
        }
  if (choice == 'a')
    for (const char* constrain : {" json", " <|constrain|>json", ""})
      tags.push_back(harmony_tag(std::string("<|channel|>final") + constrain + "<|message|>",
                                 any_text(ojson::array())));
  return harmony_messages(true, {{"type", "or"}, {"elements", std::move(tags)}});
}

// The builder of each parser's tag (vLLM's structural_tag_model in the comments); null for a
// parser vLLM puts none on.
using Builder = ojson (*)(const std::vector<Callable>&, char);
Builder builder(ToolParserKind k) {
  switch (k) {
    case ToolParserKind::kHermes:  // "hermes"
      return hermes_format;
    case ToolParserKind::kLlama3Json:  // "llama"
      return llama_format;
    case ToolParserKind::kGlm45:  // "glm_4_7"
      return glm_format;
    case ToolParserKind::kMinimaxM2:  // "minimax"
      return minimax_format;
    case ToolParserKind::kQwen3Coder:  // "qwen_3_coder"
      return qwen3_coder_format;
    case ToolParserKind::kDeepseekV3:  // "deepseek_r1"
      return [](const std::vector<Callable>& t, char c) { return deepseek_format(t, c, false); };
    case ToolParserKind::kDeepseekV31:  // "deepseek_v3_1"
      return [](const std::vector<Callable>& t, char c) { return deepseek_format(t, c, true); };
    case ToolParserKind::kOpenAI:  // "harmony"
      return harmony_format;
    case ToolParserKind::kKimiK2:  // "kimi"
      return kimi_format;
    default:
      return nullptr;
  }
}

}  // namespace

bool structures_tool_calls(ToolParserKind k) { return builder(k) != nullptr; }

ojson harmony_output_tag(const OutputConstraint& c) {
  ojson content;
  try {
    content = output_format(c);
  } catch (const nlohmann::json::exception& e) {
    throw bad_request(c.field + ": not a valid constraint: " + e.what(), c.field);
  }
  ojson final_message =
      content.value("type", "") == "json_schema"
          ? ojson{{"type", "or"},
                  {"elements",
                   ojson::array(
                       {harmony_tag("<|channel|>final json<|message|>", content),
                        harmony_tag("<|channel|>final <|constrain|>json<|message|>", content)})}}
          : harmony_tag("<|channel|>final<|message|>", content);
  return {{"type", "structural_tag"},
          {"format", harmony_messages(false, std::move(final_message))}};
}

std::optional<ojson> tool_structural_tag(ToolParserKind kind, const ChatRequest& r,
                                         const std::optional<OutputConstraint>& structured,
                                         ToolStrictLevel level) {
  const Builder build = builder(kind);
  if (!build || r.tools.is_null() || r.tools.empty() || r.tool_choice == ToolChoice::kNone)
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
  // The simplified choice: auto, required (also auto beside a structured output, whose other
  // branch is the output's format), forced (named).
  const char choice = r.tool_choice == ToolChoice::kNamed ? 'f'
                      : is_auto && !structured            ? 'a'
                                                          : 'r';
  std::vector<Callable> tools;
  for (const auto& t : r.tools) {
    const ojson& fn = t["function"];
    if (choice == 'f' && fn["name"] != r.tool_choice_name) continue;
    // Deliberate difference: a required / named call's arguments always follow the tool's
    // parameters here (vLLM 0.33 pins them only for strict tools or --tool-strict-level
    // parameter, leaving any JSON otherwise, where its JSON forms used to pin them).
    const bool strict = level >= ToolStrictLevel::kParameter || tool_strict(t) || !is_auto;
    const ojson params = fn.contains("parameters") ? fn["parameters"] : ojson();
    tools.push_back({fn["name"].get<std::string>(),
                     strict && params.is_object() ? params : ojson(true), strict, params});
  }
  if (tools.empty()) return std::nullopt;
  ojson format = build(tools, choice);
  if (single) single_call(format);
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
