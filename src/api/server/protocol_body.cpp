// Request bodies: JSON parsing with a nesting bound, OpenAI message lists, and the small
// /tokenize and /detokenize bodies.
#include <algorithm>
#include <optional>
#include <set>

#include "api/server/protocol.h"
#include "api/server/protocol_fields.h"
#include "api/server/tag_scan.h"

namespace vllm::api {

namespace detail {

// One content part's text: a bare string, or a text-like part (text, input_text, output_text,
// refusal, thinking); nullopt for a text part without text, which vLLM skips. Other kinds
// (images, audio) are refused.
std::optional<std::string> part_text(const ojson& part, const std::string& field) {
  if (part.is_string()) return part.get<std::string>();
  Fields p(part, "content part");
  const auto type = p.string("type");
  if (!type) throw bad_request(field + ": each content part needs a 'type'", field);
  const char* key = *type == "refusal"    ? "refusal"
                    : *type == "thinking" ? "thinking"
                    : (*type == "text" || *type == "input_text" || *type == "output_text")
                        ? "text"
                        : nullptr;
  if (!key)
    throw bad_request(field + ": content part type '" + *type + "' is not supported", field);
  const ojson* t = p.get(key);
  if (!t) return std::nullopt;
  if (!t->is_string())
    throw bad_request(field + ": a " + *type + " part needs '" + key + "' (a string)", field);
  return t->get<std::string>();
}

// OpenAI content as the template gets it. vLLM's "string" format (the default here): a string,
// null (""), or the parts' text joined with newlines. Its "openai" format (`content_parts`): a
// list of {"type": "text", "text": ...}, a string being one part and null none.
ojson flatten_content(const ojson& c, size_t i, bool content_parts) {
  const std::string field = "messages[" + std::to_string(i) + "].content";
  if (c.is_null()) return content_parts ? ojson::array() : ojson("");
  if (c.is_string())
    return content_parts ? ojson::array({ojson{{"type", "text"}, {"text", c}}}) : c;
  if (!c.is_array()) wrong_type(field, "a string or a list of content parts", c);
  ojson parts = ojson::array();
  std::string text;
  bool first = true;
  for (const auto& part : c) {
    const std::optional<std::string> t = part_text(part, field);
    if (!t) continue;
    if (content_parts) parts.push_back({{"type", "text"}, {"text", *t}});
    if (!first) text += "\n";
    text += *t;
    first = false;
  }
  return content_parts ? parts : ojson(text);
}

// An assistant message's tool_calls as vLLM passes them to templates: each call as given, with
// function.arguments parsed from its JSON string into an object ({} when it is not JSON, null
// or missing); an empty list is dropped.
ojson parse_tool_calls(const ojson& calls, const std::string& field) {
  if (!calls.is_array()) wrong_type(field, "a list of tool calls", calls);
  ojson out = ojson::array();
  for (size_t k = 0; k < calls.size(); ++k) {
    const std::string at = field + "[" + std::to_string(k) + "]";
    ojson call = calls[k];
    if (!call.is_object()) wrong_type(at, "an object", call);
    auto fn = call.find("function");
    if (fn == call.end() || !fn->is_object())
      throw bad_request(at + ".function is required (an object with name and arguments)", field);
    if (!fn->contains("name") || !(*fn)["name"].is_string())
      throw bad_request(at + ".function.name is required (a string)", field);
    ojson& args = (*fn)["arguments"];
    if (args.is_string()) {
      args = ojson::parse(args.get<std::string>(), nullptr, false);
      if (args.is_discarded()) args = ojson::object();
    } else if (!args.is_object() && !args.is_array()) {
      args = ojson::object();
    }
    out.push_back(std::move(call));
  }
  return out;
}

void merge_default_kwargs(ojson& kwargs, const ojson& defaults) {
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    if (!kwargs.contains(it.key())) kwargs[it.key()] = it.value();
}

ojson parse_messages(const ojson& m, bool content_parts) {
  if (!m.is_array()) wrong_type("messages", "a list of messages", m);
  if (m.empty()) throw bad_request("messages must contain at least one message", "messages");
  ojson out = ojson::array();
  for (size_t i = 0; i < m.size(); ++i) {
    const ojson& msg = m[i];
    const std::string field = "messages[" + std::to_string(i) + "]";
    if (!msg.is_object()) wrong_type(field, "an object", msg);
    auto role = msg.find("role");
    if (role == msg.end() || !role->is_string())
      throw bad_request(field + ".role must be a string", field + ".role");
    const std::string r = role->get<std::string>();
    static const std::set<std::string> kRoles = {"system", "user",      "assistant",
                                                 "tool",   "developer", "function"};
    if (!kRoles.count(r)) throw bad_request(field + ".role '" + r + "' is not valid", field);
    auto get = [&](const char* k) -> const ojson* {
      auto it = msg.find(k);
      return it == msg.end() || it->is_null() ? nullptr : &*it;
    };
    ojson copy = ojson::object();
    copy["role"] = r;
    const ojson* c = get("content");
    copy["content"] = flatten_content(c ? *c : ojson(), i, content_parts);
    if (r == "assistant") {
      if (const ojson* tc = get("tool_calls")) {
        ojson calls = parse_tool_calls(*tc, field + ".tool_calls");
        if (!calls.empty()) copy["tool_calls"] = std::move(calls);
      }
      // vLLM renamed reasoning_content to reasoning and gives templates both.
      const ojson* reasoning = get("reasoning");
      if (!reasoning) reasoning = get("reasoning_content");
      if (reasoning) {
        if (!reasoning->is_string()) wrong_type(field + ".reasoning", "a string", *reasoning);
        copy["reasoning"] = *reasoning;
        copy["reasoning_content"] = *reasoning;
      }
    } else if (r == "tool" && msg.contains("tool_call_id")) {
      copy["tool_call_id"] = msg["tool_call_id"];
    }
    if (const ojson* n = get("name"); n && n->is_string()) copy["name"] = *n;
    if (const ojson* t = get("task"); t && t->is_string()) copy["task"] = *t;
    if (r == "developer") copy["tools"] = msg.contains("tools") ? msg["tools"] : ojson();
    out.push_back(std::move(copy));
  }
  return out;
}

ojson parse_kwargs(Fields& f) {
  const ojson* k = f.get("chat_template_kwargs");
  if (!k) return ojson::object();
  if (!k->is_object()) wrong_type("chat_template_kwargs", "an object", *k);
  return *k;
}

}  // namespace detail

namespace {

// Re-reads a body the parser refused for a number overflow and returns the object member the
// offending number belongs to ("" at top level). Only runs on that error path.
std::string field_of_bad_number(const std::string& body) {
  struct Sax {
    std::vector<std::string> keys;
    std::string found;
    bool null() { return true; }
    bool boolean(bool) { return true; }
    bool number_integer(int64_t) { return true; }
    bool number_unsigned(uint64_t) { return true; }
    bool number_float(double, const std::string&) { return true; }
    bool string(std::string&) { return true; }
    bool binary(std::vector<uint8_t>&) { return true; }
    bool start_object(size_t) {
      keys.emplace_back();
      return true;
    }
    bool key(std::string& k) {
      keys.back() = k;
      return true;
    }
    bool end_object() {
      keys.pop_back();
      return true;
    }
    bool start_array(size_t) { return true; }
    bool end_array() { return true; }
    bool parse_error(size_t, const std::string&, const nlohmann::json::exception&) {
      for (auto it = keys.rbegin(); it != keys.rend() && found.empty(); ++it) found = *it;
      return false;
    }
  } sax;
  ojson::sax_parse(body, &sax);
  return sax.found;
}

}  // namespace

size_t json_depth(std::string_view text) {
  size_t depth = 0, max_depth = 0;
  JsonStrings strings;
  for (char c : text) {
    if (!strings.structural(c)) continue;
    if (c == '[' || c == '{') {
      max_depth = std::max(max_depth, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return max_depth;
}

ojson parse_body(const std::string& body) {
  // Deep nesting is refused before parsing: copies and conversions of JSON values recurse,
  // and a 40 KB body can nest 20,000 levels.
  if (json_depth(body) > kMaxJsonDepth)
    throw bad_request("JSON nesting depth exceeds the limit of " + std::to_string(kMaxJsonDepth));
  try {
    return ojson::parse(body);
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double's range (1e400): name the member it was the value of.
    const std::string field = field_of_bad_number(body);
    throw bad_request((field.empty() ? std::string("a number") : field) + ": number out of range",
                      field);
  } catch (const nlohmann::json::parse_error& e) {
    std::string msg = e.what();
    if (msg.size() > 300) msg.resize(300);
    throw bad_request("Invalid JSON in request body: " + msg);
  }
}

TokenizeRequest parse_tokenize_request(const ojson& body, const ParseOptions& opts) {
  detail::Fields f(body, "tokenize request");
  TokenizeRequest r;
  r.model = f.string("model");
  r.prompt = f.string("prompt");
  if (const ojson* m = f.get("messages"))
    r.messages = detail::parse_messages(*m, opts.content_parts);
  if (r.prompt && !r.messages.is_null())
    throw bad_request("give either prompt or messages, not both");
  if (!r.prompt && r.messages.is_null())
    throw bad_request("prompt (or messages) is required", "prompt");
  r.chat_template_kwargs = detail::parse_kwargs(f);
  detail::merge_default_kwargs(r.chat_template_kwargs, opts.default_chat_template_kwargs);
  if (auto v = f.boolean("add_generation_prompt")) r.add_generation_prompt = *v;
  // vLLM's default: special tokens for a plain prompt, none for chat (the template has them).
  r.add_special_tokens = r.messages.is_null();
  if (auto v = f.boolean("add_special_tokens")) r.add_special_tokens = *v;
  if (auto v = f.boolean("return_token_strs")) r.return_token_strs = *v;
  return r;
}

DetokenizeRequest parse_detokenize_request(const ojson& body) {
  detail::Fields f(body, "detokenize request");
  DetokenizeRequest r;
  r.model = f.string("model");
  const ojson* t = f.get("tokens");
  if (!t) throw bad_request("tokens is required", "tokens");
  if (!t->is_array()) detail::wrong_type("tokens", "a list of token ids", *t);
  for (const auto& e : *t) r.tokens.push_back(detail::token_id(e, "tokens"));
  return r;
}

}  // namespace vllm::api
