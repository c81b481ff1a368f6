// Request bodies: JSON parsing with a nesting bound, OpenAI message lists, and the small
// /tokenize and /detokenize bodies.
#include <algorithm>
#include <set>

#include "api/server/protocol.h"
#include "api/server/protocol_fields.h"

namespace vllm::api {

namespace detail {

// OpenAI content: a string, null, or a list of parts of which we take the text ones (joined
// with newlines, as vLLM does for string-content templates).
ojson flatten_content(const ojson& c, size_t i) {
  const std::string field = "messages[" + std::to_string(i) + "].content";
  if (c.is_null() || c.is_string()) return c;
  if (!c.is_array()) wrong_type(field, "a string or a list of content parts", c);
  std::string text;
  bool first = true;
  for (const auto& part : c) {
    Fields p(part, "content part");
    const auto type = p.string("type");
    if (!type) throw bad_request(field + ": each content part needs a 'type'", field);
    if (*type != "text")
      throw bad_request(field + ": content part type '" + *type + "' is not supported", field);
    const auto t = p.string("text");
    if (!t) throw bad_request(field + ": a text part needs 'text'", field);
    if (!first) text += "\n";
    text += *t;
    first = false;
  }
  return text;
}

ojson parse_messages(const ojson& m) {
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
    ojson copy = msg;  // keep every key (tool_calls, name, ...) in order for the template
    auto c = msg.find("content");
    copy["content"] = c == msg.end() ? ojson() : flatten_content(*c, i);
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
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
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

TokenizeRequest parse_tokenize_request(const ojson& body) {
  detail::Fields f(body, "tokenize request");
  TokenizeRequest r;
  r.model = f.string("model");
  r.prompt = f.string("prompt");
  if (const ojson* m = f.get("messages")) r.messages = detail::parse_messages(*m);
  if (r.prompt && !r.messages.is_null())
    throw bad_request("give either prompt or messages, not both");
  if (!r.prompt && r.messages.is_null())
    throw bad_request("prompt (or messages) is required", "prompt");
  r.chat_template_kwargs = detail::parse_kwargs(f);
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
