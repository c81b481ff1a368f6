// Strict field-by-field parsing of OpenAI request bodies.
#include "api/server/protocol.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

namespace vllm::api {
namespace {

const char* type_name(const ojson& v) {
  switch (v.type()) {
    case ojson::value_t::null:
      return "null";
    case ojson::value_t::boolean:
      return "boolean";
    case ojson::value_t::string:
      return "string";
    case ojson::value_t::array:
      return "array";
    case ojson::value_t::object:
      return "object";
    case ojson::value_t::number_float:
      return "number";
    default:
      return "integer";
  }
}

[[noreturn]] void wrong_type(const std::string& field, const char* want, const ojson& v) {
  throw bad_request(field + ": expected " + want + ", got " + type_name(v), field);
}

// A field reader over one object that remembers which keys it consumed.
class Fields {
 public:
  explicit Fields(const ojson& obj, const char* what) : obj_(obj) {
    if (!obj.is_object())
      throw bad_request(std::string("the request body must be a JSON object (") + what + ")");
  }

  // nullptr when absent or null (null means "default" in OpenAI's API).
  const ojson* get(const std::string& k) {
    seen_.insert(k);
    auto it = obj_.find(k);
    if (it == obj_.end() || it->is_null()) return nullptr;
    return &*it;
  }
  bool has(const std::string& k) {
    seen_.insert(k);
    return obj_.contains(k);
  }

  std::optional<bool> boolean(const std::string& k) {
    const ojson* v = get(k);
    if (!v) return std::nullopt;
    if (!v->is_boolean()) wrong_type(k, "a boolean", *v);
    return v->get<bool>();
  }
  std::optional<int64_t> integer(const std::string& k,
                                 int64_t lo = std::numeric_limits<int64_t>::min(),
                                 int64_t hi = std::numeric_limits<int64_t>::max()) {
    const ojson* v = get(k);
    if (!v) return std::nullopt;
    int64_t x;
    if (v->is_number_integer()) {
      if (v->is_number_unsigned() &&
          v->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
        throw bad_request(k + ": integer out of range", k);
      x = v->get<int64_t>();
    } else if (v->is_number_float()) {
      // Pydantic accepts 5.0 for an int field, not 5.5.
      const double d = v->get<double>();
      if (!std::isfinite(d) || d != std::floor(d) || std::fabs(d) > 9.0e18)
        throw bad_request(k + ": expected an integer, got " + v->dump(), k);
      x = static_cast<int64_t>(d);
    } else {
      wrong_type(k, "an integer", *v);
    }
    if (x < lo || x > hi)
      throw bad_request(k + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                            "], got " + std::to_string(x),
                        k);
    return x;
  }
  std::optional<double> number(const std::string& k) {
    const ojson* v = get(k);
    if (!v) return std::nullopt;
    if (!v->is_number()) wrong_type(k, "a number", *v);
    const double d = v->get<double>();
    // 1e400 parses as infinity: out of range for every field.
    if (!std::isfinite(d)) throw bad_request(k + ": number out of range", k);
    return d;
  }
  std::optional<std::string> string(const std::string& k) {
    const ojson* v = get(k);
    if (!v) return std::nullopt;
    if (!v->is_string()) wrong_type(k, "a string", *v);
    return v->get<std::string>();
  }

  std::vector<std::string> unknown() const {
    std::vector<std::string> out;
    for (auto it = obj_.begin(); it != obj_.end(); ++it)
      if (!seen_.count(it.key())) out.push_back(it.key());
    return out;
  }

 private:
  const ojson& obj_;
  std::set<std::string> seen_;
};

float as_float(double d) { return static_cast<float>(d); }

void parse_common(Fields& f, GenerationRequest& r, bool chat) {
  r.model = f.string("model");
  auto& s = r.sampling;
  if (auto v = f.integer("n", 1, kMaxN)) r.n = static_cast<int32_t>(*v);
  if (auto v = f.boolean("stream")) r.stream = *v;
  if (const ojson* so = f.get("stream_options")) {
    if (!r.stream)
      throw bad_request("Stream options can only be defined when `stream=True`.", "stream_options");
    Fields o(*so, "stream_options");
    if (auto v = o.boolean("include_usage")) r.include_usage = *v;
    if (auto v = o.boolean("continuous_usage_stats")) r.continuous_usage_stats = *v;
  }
  // max_tokens is capped to int32 here; the engine then checks it against max_model_len.
  constexpr int64_t kI32 = std::numeric_limits<int32_t>::max();
  std::optional<int64_t> mt;
  if (chat) mt = f.integer("max_completion_tokens", 1, kI32);
  if (auto v = f.integer("max_tokens", 1, kI32); v && !mt) mt = v;
  if (mt)
    s.max_tokens = static_cast<int32_t>(*mt);
  else if (chat)
    s.max_tokens = std::nullopt;  // chat default: whatever fits in max_model_len
  else
    s.max_tokens = 16;
  if (auto v = f.integer("min_tokens", 0, kI32)) s.min_tokens = static_cast<int32_t>(*v);
  if (auto v = f.number("temperature")) s.temperature = as_float(*v);
  if (auto v = f.number("top_p")) s.top_p = as_float(*v);
  if (auto v = f.integer("top_k", -1, kI32)) s.top_k = static_cast<int32_t>(*v);
  if (auto v = f.number("min_p")) s.min_p = as_float(*v);
  if (auto v = f.number("presence_penalty")) s.presence_penalty = as_float(*v);
  if (auto v = f.number("frequency_penalty")) s.frequency_penalty = as_float(*v);
  if (auto v = f.number("repetition_penalty")) s.repetition_penalty = as_float(*v);
  if (auto v = f.integer("seed")) s.seed = static_cast<uint64_t>(*v);
  if (const ojson* v = f.get("stop")) {
    if (v->is_string()) {
      s.stop.push_back(v->get<std::string>());
    } else if (v->is_array()) {
      for (const auto& e : *v) {
        if (!e.is_string()) wrong_type("stop", "a string or a list of strings", *v);
        s.stop.push_back(e.get<std::string>());
      }
    } else {
      wrong_type("stop", "a string or a list of strings", *v);
    }
  }
  if (const ojson* v = f.get("stop_token_ids")) {
    if (!v->is_array()) wrong_type("stop_token_ids", "a list of integers", *v);
    for (const auto& e : *v) {
      if (!e.is_number_integer()) wrong_type("stop_token_ids", "a list of integers", *v);
      const int64_t id = e.get<int64_t>();
      if (id < 0 || id > std::numeric_limits<int32_t>::max())
        throw bad_request("stop_token_ids: " + std::to_string(id) + " is not a token id",
                          "stop_token_ids");
      s.stop_token_ids.push_back(static_cast<int32_t>(id));
    }
  }
  if (auto v = f.boolean("ignore_eos")) s.ignore_eos = *v;
  if (auto v = f.boolean("skip_special_tokens")) s.skip_special_tokens = *v;
  if (auto v = f.boolean("include_stop_str_in_output")) s.include_stop_str_in_output = *v;
  f.string("user");  // accepted and unused, like vLLM
  if (const ojson* v = f.get("response_format")) {
    Fields rf(*v, "response_format");
    const auto t = rf.string("type");
    if (t && *t != "text")
      throw bad_request("response_format type '" + *t + "' is not supported by this server",
                        "response_format");
  }
}

void validate_sampling(GenerationRequest& r) {
  r.sampling.n = r.n;
  try {
    r.sampling.validate();
  } catch (const std::invalid_argument& e) {
    throw bad_request(e.what());
  }
  r.sampling.n = 1;  // the server fans n out into n engine requests
}

std::vector<int32_t> token_list(const ojson& v, const std::string& field) {
  std::vector<int32_t> ids;
  for (const auto& e : v) {
    if (!e.is_number_integer()) wrong_type(field, "a list of token ids", e);
    const int64_t id = e.get<int64_t>();
    if (id < 0 || id > std::numeric_limits<int32_t>::max())
      throw bad_request(field + ": " + std::to_string(id) + " is not a token id", field);
    ids.push_back(static_cast<int32_t>(id));
  }
  return ids;
}

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

}  // namespace

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

CompletionRequest parse_completion_request(const ojson& body) {
  Fields f(body, "completion request");
  CompletionRequest r;
  parse_common(f, r, false);
  const ojson* p = f.get("prompt");
  if (!p) throw bad_request("prompt is required", "prompt");
  if (p->is_string()) {
    r.prompt_texts.push_back(p->get<std::string>());
  } else if (p->is_array()) {
    if (p->empty()) throw bad_request("prompt must not be empty", "prompt");
    if ((*p)[0].is_string()) {
      for (const auto& e : *p) {
        if (!e.is_string()) wrong_type("prompt", "a string, a list of strings or token ids", e);
        r.prompt_texts.push_back(e.get<std::string>());
      }
    } else if ((*p)[0].is_array()) {
      for (const auto& e : *p) {
        if (!e.is_array()) wrong_type("prompt", "a list of token-id lists", e);
        r.prompt_ids.push_back(token_list(e, "prompt"));
      }
    } else {
      r.prompt_ids.push_back(token_list(*p, "prompt"));
    }
  } else {
    wrong_type("prompt", "a string, a list of strings or token ids", *p);
  }
  if (auto v = f.integer("logprobs", 0, kMaxLogprobs))
    r.sampling.logprobs = static_cast<int32_t>(*v);
  if (auto v = f.boolean("echo")) r.echo = *v;
  if (r.echo && r.sampling.logprobs)
    throw bad_request("echo together with logprobs (prompt logprobs) is not supported", "echo");
  if (auto v = f.string("suffix"); v && !v->empty())
    throw bad_request("suffix is not supported", "suffix");
  if (auto v = f.integer("best_of"); v && *v != r.n)
    throw bad_request("best_of must equal n (beam search is not supported)", "best_of");
  validate_sampling(r);
  r.ignored_fields = f.unknown();
  return r;
}

ChatRequest parse_chat_request(const ojson& body) {
  Fields f(body, "chat completion request");
  ChatRequest r;
  parse_common(f, r, true);
  const ojson* m = f.get("messages");
  if (!m) throw bad_request("messages is required", "messages");
  r.messages = parse_messages(*m);
  if (const ojson* t = f.get("tools")) {
    if (!t->is_array()) wrong_type("tools", "a list of tools", *t);
    if (!t->empty()) r.tools = *t;
  }
  if (const ojson* tc = f.get("tool_choice")) {
    if (!(tc->is_string() && (*tc == "none" || *tc == "auto")))
      throw bad_request("only tool_choice 'none' or 'auto' is supported", "tool_choice");
  }
  f.boolean("parallel_tool_calls");
  r.chat_template_kwargs = parse_kwargs(f);
  if (auto v = f.boolean("add_generation_prompt")) r.add_generation_prompt = *v;
  if (auto v = f.boolean("logprobs")) r.logprobs = *v;
  if (auto v = f.integer("top_logprobs", 0, kMaxLogprobs)) {
    r.top_logprobs = static_cast<int32_t>(*v);
    if (!r.logprobs && *v > 0)
      throw bad_request("top_logprobs requires logprobs to be true", "top_logprobs");
  }
  if (r.logprobs) r.sampling.logprobs = r.top_logprobs;
  validate_sampling(r);
  r.ignored_fields = f.unknown();
  return r;
}

TokenizeRequest parse_tokenize_request(const ojson& body) {
  Fields f(body, "tokenize request");
  TokenizeRequest r;
  r.model = f.string("model");
  r.prompt = f.string("prompt");
  if (const ojson* m = f.get("messages")) r.messages = parse_messages(*m);
  if (r.prompt && !r.messages.is_null())
    throw bad_request("give either prompt or messages, not both");
  if (!r.prompt && r.messages.is_null())
    throw bad_request("prompt (or messages) is required", "prompt");
  r.chat_template_kwargs = parse_kwargs(f);
  if (auto v = f.boolean("add_generation_prompt")) r.add_generation_prompt = *v;
  // vLLM's default: special tokens for a plain prompt, none for chat (the template has them).
  r.add_special_tokens = r.messages.is_null();
  if (auto v = f.boolean("add_special_tokens")) r.add_special_tokens = *v;
  if (auto v = f.boolean("return_token_strs")) r.return_token_strs = *v;
  return r;
}

DetokenizeRequest parse_detokenize_request(const ojson& body) {
  Fields f(body, "detokenize request");
  DetokenizeRequest r;
  r.model = f.string("model");
  const ojson* t = f.get("tokens");
  if (!t) throw bad_request("tokens is required", "tokens");
  if (!t->is_array()) wrong_type("tokens", "a list of token ids", *t);
  r.tokens = token_list(*t, "tokens");
  return r;
}

}  // namespace vllm::api
