// Structured-output and tool-choice fields: parsing, the forced-call schema, compilation.
#include "api/server/structured_outputs.h"

#include "api/llm.h"
#include "api/server/api_error.h"
#include "api/server/protocol_fields.h"

namespace vllm::api {

using detail::Fields;
using detail::wrong_type;
using engine::so::GrammarKind;

namespace {

[[noreturn]] void unsupported(const std::string& field, const std::string& what) {
  throw bad_request(field + ": " + what, field);
}

// A JSON Schema given as an object, or as JSON text (vLLM accepts both for json / guided_json).
std::string schema_text(const ojson& v, const std::string& field) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() || v.is_boolean()) return v.dump();
  wrong_type(field, "a JSON Schema (an object or its JSON text)", v);
}

std::string choice_text(const ojson& v, const std::string& field) {
  if (!v.is_array()) wrong_type(field, "a list of strings", v);
  for (const auto& e : v)
    if (!e.is_string()) wrong_type(field, "a list of strings", e);
  if (v.empty()) throw bad_request(field + " must not be empty", field);
  return v.dump();
}

std::string string_of(const ojson& v, const std::string& field) {
  if (!v.is_string()) wrong_type(field, "a string", v);
  return v.get<std::string>();
}

void add(std::vector<OutputConstraint>& out, GrammarKind k, std::string text, std::string field) {
  out.push_back({k, std::move(text), std::move(field)});
}

void read_response_format(const ojson& rf, std::vector<OutputConstraint>& out) {
  if (!rf.is_object()) wrong_type("response_format", "an object", rf);
  auto t = rf.find("type");
  if (t == rf.end() || !t->is_string())
    throw bad_request(
        "response_format.type must be one of 'text', 'json_object', 'json_schema', "
        "'structural_tag'",
        "response_format");
  const std::string type = t->get<std::string>();
  if (type == "text") return;
  if (type == "json_object") return add(out, GrammarKind::kJsonObject, "", "response_format");
  if (type == "structural_tag") {
    // vLLM's StructuralTagResponseFormat {type, format} or the legacy {type, structures,
    // triggers}; the grammar engine reads either and names what it cannot honour.
    if (!rf.contains("format") && !(rf.contains("structures") && rf.contains("triggers")))
      throw bad_request(
          "Invalid response_format structural_tag specification: it needs a format (or the "
          "legacy structures and triggers)",
          "response_format");
    return add(out, GrammarKind::kStructuralTag, rf.dump(), "response_format");
  }
  if (type != "json_schema")
    throw bad_request("response_format.type '" + type +
                          "' is not one of 'text', 'json_object', 'json_schema', 'structural_tag'",
                      "response_format");
  auto js = rf.find("json_schema");
  if (js == rf.end() || js->is_null())
    throw bad_request(
        "When response_format type is 'json_schema', the 'json_schema' field must be provided.",
        "response_format");
  if (!js->is_object()) wrong_type("response_format.json_schema", "an object", *js);
  auto name = js->find("name");
  if (name == js->end() || !name->is_string())
    throw bad_request("response_format.json_schema.name is required (a string)", "response_format");
  for (const char* k : {"description"})
    if (js->contains(k) && !(*js)[k].is_null() && !(*js)[k].is_string())
      wrong_type(std::string("response_format.json_schema.") + k, "a string", (*js)[k]);
  if (js->contains("strict") && !(*js)["strict"].is_null() && !(*js)["strict"].is_boolean())
    wrong_type("response_format.json_schema.strict", "a boolean", (*js)["strict"]);
  auto schema = js->find("schema");
  if (schema == js->end() || schema->is_null())
    throw bad_request(
        "response_format.json_schema.schema is missing: a json_schema response format needs "
        "the schema to follow",
        "response_format");
  if (!schema->is_object()) wrong_type("response_format.json_schema.schema", "an object", *schema);
  add(out, GrammarKind::kJsonSchema, schema->dump(), "response_format");
}

void read_structured_outputs(const ojson& so, std::vector<OutputConstraint>& out) {
  const std::string f = "structured_outputs";
  if (!so.is_object()) wrong_type(f, "an object", so);
  auto get = [&](const char* k) -> const ojson* {
    auto it = so.find(k);
    return it == so.end() || it->is_null() ? nullptr : &*it;
  };
  const size_t before = out.size();
  if (const ojson* v = get("json"))
    add(out, GrammarKind::kJsonSchema, schema_text(*v, f + ".json"), f);
  if (const ojson* v = get("regex")) add(out, GrammarKind::kRegex, string_of(*v, f + ".regex"), f);
  if (const ojson* v = get("choice"))
    add(out, GrammarKind::kChoice, choice_text(*v, f + ".choice"), f);
  if (const ojson* v = get("grammar"))
    add(out, GrammarKind::kGrammar, string_of(*v, f + ".grammar"), f);
  if (const ojson* v = get("json_object")) {
    if (!v->is_boolean()) wrong_type(f + ".json_object", "a boolean", *v);
    if (!v->get<bool>())
      throw bad_request(f + ".json_object: false asks for no constraint; remove it", f);
    add(out, GrammarKind::kJsonObject, "", f);
  }
  if (const ojson* v = get("structural_tag")) {
    const std::string s = string_of(*v, f + ".structural_tag");
    if (s.find_first_not_of(" \t\r\n") == std::string::npos)
      throw bad_request(f + ".structural_tag cannot be an empty string", f);
    add(out, GrammarKind::kStructuralTag, s, f);
  }
  if (get("whitespace_pattern"))
    unsupported(f,
                "whitespace_pattern is not supported (JSON whitespace here: at most 32 "
                "space/tab/newline characters between tokens)");
  for (const char* k :
       {"disable_any_whitespace", "disable_additional_properties", "disable_fallback"}) {
    const ojson* v = get(k);
    if (v && !v->is_boolean()) wrong_type(f + "." + k, "a boolean", *v);
  }
  if (const ojson* v = get("disable_any_whitespace"); v && v->get<bool>())
    unsupported(f, "disable_any_whitespace is not supported (compact JSON is allowed, not forced)");
  if (out.size() == before)
    throw bad_request(
        "You must use one kind of structured outputs constraint but none are specified: "
        "structured_outputs needs one of json, regex, choice, grammar, json_object, "
        "structural_tag",
        f);
}

// vLLM's FunctionDefinition / ChatCompletionToolsParam, dumped as pydantic's model_dump does:
// declared fields in declaration order, description and parameters null when absent, strict
// only when set, anything else dropped.
ojson normalize_tool(const ojson& t, size_t i) {
  const std::string at = "tools[" + std::to_string(i) + "]";
  if (!t.is_object()) wrong_type(at, "an object", t);
  if (auto ty = t.find("type"); ty != t.end() && !(ty->is_string() && *ty == "function"))
    throw bad_request(at + ".type must be 'function'", "tools");
  auto fn = t.find("function");
  if (fn == t.end() || !fn->is_object())
    throw bad_request(at + ".function is required (an object with a name)", "tools");
  auto name = fn->find("name");
  if (name == fn->end() || !name->is_string())
    throw bad_request(at + ".function.name is required (a string)", "tools");
  ojson f = ojson::object();
  f["name"] = *name;
  auto opt = [&](const char* k, bool (ojson::*ok)() const noexcept, const char* want) {
    auto it = fn->find(k);
    if (it == fn->end() || it->is_null()) return ojson();
    if (!((*it).*ok)()) wrong_type(at + ".function." + k, want, *it);
    return *it;
  };
  f["description"] = opt("description", &ojson::is_string, "a string");
  f["parameters"] = opt("parameters", &ojson::is_object, "an object (a JSON Schema)");
  if (ojson s = opt("strict", &ojson::is_boolean, "a boolean"); !s.is_null()) f["strict"] = s;
  return ojson{{"type", "function"}, {"function", std::move(f)}};
}

const ojson* find_tool(const ChatRequest& r, const std::string& name) {
  for (const auto& t : r.tools)
    if (t["function"]["name"] == name) return &t;
  return nullptr;
}

}  // namespace

const std::vector<std::string>& structured_output_fields() {
  static const std::vector<std::string> f = {"guided_json",
                                             "guided_regex",
                                             "guided_choice",
                                             "guided_grammar",
                                             "structural_tag",
                                             "structured_outputs",
                                             "guided_decoding_backend",
                                             "guided_whitespace_pattern",
                                             "response_format"};
  return f;
}

void parse_structured_outputs(Fields& f, GenerationRequest& r) {
  for (const std::string& k : structured_output_fields()) f.mark(k);
  std::vector<OutputConstraint> found;
  if (const ojson* v = f.get("response_format")) read_response_format(*v, found);
  if (const ojson* v = f.get("structured_outputs")) read_structured_outputs(*v, found);
  if (const ojson* v = f.get("guided_json"))
    add(found, GrammarKind::kJsonSchema, schema_text(*v, "guided_json"), "guided_json");
  if (const ojson* v = f.get("guided_regex"))
    add(found, GrammarKind::kRegex, string_of(*v, "guided_regex"), "guided_regex");
  if (const ojson* v = f.get("guided_choice"))
    add(found, GrammarKind::kChoice, choice_text(*v, "guided_choice"), "guided_choice");
  if (const ojson* v = f.get("guided_grammar"))
    add(found, GrammarKind::kGrammar, string_of(*v, "guided_grammar"), "guided_grammar");
  if (f.get("structural_tag"))
    unsupported("structural_tag",
                "structural tags are not supported by this server's grammar "
                "engine");
  if (f.get("guided_whitespace_pattern"))
    unsupported("guided_whitespace_pattern",
                "not supported (JSON whitespace here: at most 32 space/tab/newline characters "
                "between tokens)");
  if (auto b = f.string("guided_decoding_backend"))
    r.debug_notes.push_back("guided_decoding_backend '" + *b +
                            "' ignored: this server has one grammar engine");
  if (found.size() > 1)
    throw bad_request(
        "You can only use one kind of structured outputs constraint but multiple "
        "are specified: " +
            found[0].field + " (" + engine::so::kind_name(found[0].kind) + ") and " +
            found[1].field + " (" + engine::so::kind_name(found[1].kind) + ")",
        found[1].field);
  if (!found.empty()) r.constraint = std::move(found[0]);
}

void parse_tool_fields(Fields& f, ChatRequest& r) {
  if (const ojson* t = f.get("tools")) {
    if (!t->is_array()) wrong_type("tools", "a list of tools", *t);
    if (t->empty())
      throw bad_request(
          "`tools` must not be an empty array. Either provide at least one tool or omit the "
          "field entirely.",
          "tools");
    r.tools = ojson::array();
    for (size_t i = 0; i < t->size(); ++i) r.tools.push_back(normalize_tool((*t)[i], i));
  }
  if (auto v = f.boolean("parallel_tool_calls")) r.parallel_tool_calls = *v;
  const bool has_tools = !r.tools.is_null();
  r.tool_choice = has_tools ? ToolChoice::kAuto : ToolChoice::kNone;
  if (!f.has("tool_choice")) return;
  const ojson* tc = f.get("tool_choice");
  if (!tc) return;  // null: the default
  r.tool_choice_given = true;
  const std::string usage =
      "Correct usage: `{\"type\": \"function\", \"function\": {\"name\": \"my_function\"}}`";
  if (tc->is_string()) {
    const std::string s = tc->get<std::string>();
    if (s == "none") {
      r.tool_choice = ToolChoice::kNone;
      return;
    }
    if (s != "auto" && s != "required")
      throw bad_request("Invalid value for `tool_choice`: " + s +
                            "! Only named tools, \"none\", \"auto\" or \"required\" are supported.",
                        "tool_choice");
    r.tool_choice = s == "auto" ? ToolChoice::kAuto : ToolChoice::kRequired;
  } else if (tc->is_object()) {
    if (auto ty = tc->find("type"); ty != tc->end() && !(ty->is_string() && *ty == "function"))
      throw bad_request("tool_choice.type must be 'function'. " + usage, "tool_choice");
    auto fn = tc->find("function");
    if (fn == tc->end() || !fn->is_object())
      throw bad_request("Invalid value for `function` in `tool_choice`! " + usage,
                        "tool_choice.function");
    auto name = fn->find("name");
    if (name == fn->end())
      throw bad_request("Expected field `name` in `function` in `tool_choice`! " + usage,
                        "tool_choice.function.name");
    if (!name->is_string() || name->get<std::string>().empty())
      throw bad_request(
          "Invalid `name` in `function`: `" + name->dump() + "` in `tool_choice`! " + usage,
          "tool_choice.function.name");
    r.tool_choice = ToolChoice::kNamed;
    r.tool_choice_name = name->get<std::string>();
  } else {
    throw bad_request("Invalid value for `tool_choice`: " + tc->dump() +
                          "! Only named tools, \"none\", \"auto\" or \"required\" are supported.",
                      "tool_choice");
  }
  if (!has_tools)
    throw bad_request("When using `tool_choice`, `tools` must be set.", "tool_choice");
  if (r.tool_choice == ToolChoice::kNamed && !find_tool(r, r.tool_choice_name))
    throw bad_request(
        "The tool specified in `tool_choice` does not match any of the specified "
        "`tools` (no tool named '" +
            r.tool_choice_name + "')",
        "tool_choice");
}

std::optional<OutputConstraint> tool_call_constraint(const ChatRequest& r) {
  const ojson empty_params = {{"type", "object"}, {"properties", ojson::object()}};
  if (r.tool_choice == ToolChoice::kNamed) {
    const ojson& p = (*find_tool(r, r.tool_choice_name))["function"]["parameters"];
    return OutputConstraint{GrammarKind::kJsonSchema, (p.is_null() ? empty_params : p).dump(),
                            "tools"};
  }
  if (r.tool_choice != ToolChoice::kRequired) return std::nullopt;
  // vLLM's schema for "required": a non-empty array of {"name": one tool's name, "parameters":
  // that tool's parameters}, the tools' $defs hoisted to the top so their refs resolve.
  ojson branches = ojson::array(), defs = ojson::object();
  for (const auto& t : r.tools) {
    const ojson& fn = t["function"];
    ojson params = fn["parameters"].is_null() ? empty_params : fn["parameters"];
    if (params.contains("$defs")) {
      for (auto it = params["$defs"].begin(); it != params["$defs"].end(); ++it) {
        if (defs.contains(it.key()) && defs[it.key()] != it.value())
          throw bad_request(
              "Tool definitions have conflicting $defs: '" + it.key() + "' differs between tools",
              "tools");
        defs[it.key()] = it.value();
      }
      params.erase("$defs");
    }
    ojson props = ojson::object();
    props["name"] = {{"type", "string"}, {"enum", ojson::array({fn["name"]})}};
    props["parameters"] = std::move(params);
    branches.push_back({{"type", "object"},
                        {"properties", std::move(props)},
                        {"required", ojson::array({"name", "parameters"})}});
  }
  // vLLM writes {"type": "object", "anyOf": [...]} for the items; the type is implied by every
  // branch, and this grammar engine wants anyOf without sibling keywords.
  ojson schema = {{"type", "array"}, {"minItems", 1}, {"items", {{"anyOf", std::move(branches)}}}};
  if (!defs.empty()) schema["$defs"] = std::move(defs);
  return OutputConstraint{GrammarKind::kJsonSchema, schema.dump(), "tools"};
}

std::shared_ptr<const engine::so::CompiledGrammar> compile_constraint(const LLM& llm,
                                                                      const OutputConstraint& c) {
  try {
    return llm.grammar_compiler().compile(c.kind, c.text);
  } catch (const engine::so::GrammarError& e) {
    const std::string what =
        c.field == "tools" ? "the tool's parameters cannot be enforced: " : std::string();
    throw bad_request(c.field + ": " + what + e.what(), c.field);
  }
}

}  // namespace vllm::api
