// /v1/messages over the chat path (anthropic_api.h). Field by field as vLLM 0.33's
// entrypoints/anthropic/serving.py.
#include "api/server/anthropic_api.h"

#include "api/server/api_error.h"
#include "api/server/chat_translation.h"
#include "api/server/protocol_fields.h"
#include "api/server/py_json.h"
#include "api/server/serving.h"

namespace vllm::api {

using json = nlohmann::json;
using detail::Fields;
using detail::indexed;
using detail::string_or_empty;
using detail::unsupported;
using detail::wrong_type;

namespace {

bool billing_header(const std::string& s) { return s.rfind("x-anthropic-billing-header", 0) == 0; }

// A system prompt (a string or text blocks) as one string, Claude Code's per-request billing
// header dropped (it defeats prefix caching), as vLLM.
std::string system_text(const ojson& v, const std::string& field) {
  if (v.is_string()) return billing_header(v.get<std::string>()) ? "" : v.get<std::string>();
  if (!v.is_array()) wrong_type(field, "a string or a list of text blocks", v);
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_object() || string_or_empty(v[i], "type") != "text")
      throw bad_request(indexed(field, i) + ": only text blocks can be system content", field);
    const std::string t = string_or_empty(v[i], "text");
    if (!billing_header(t)) out += t;
  }
  return out;
}

// A tool_result's content as the tool message's text (text items joined with newlines).
std::string tool_result_text(const ojson& c, const std::string& field) {
  if (c.is_null()) return "";
  if (c.is_string()) return c.get<std::string>();
  if (!c.is_array()) wrong_type(field, "a string or a list of content blocks", c);
  std::string out;
  for (size_t i = 0; i < c.size(); ++i) {
    const std::string type = c[i].is_object() ? string_or_empty(c[i], "type") : "";
    if (type != "text")
      unsupported(indexed(field, i),
                  "'" + type + "' in a tool result (text only; images are not read)");
    if (i) out += "\n";
    out += string_or_empty(c[i], "text");
  }
  return out;
}

// One message's blocks: tool results become tool messages (appended to `msgs` first, as
// vLLM), the rest the message's content, reasoning and tool_calls.
void convert_blocks(const ojson& blocks, const std::string& role, const std::string& field,
                    ojson& msg, ojson& msgs) {
  ojson parts = ojson::array(), calls = ojson::array();
  std::string reasoning;
  bool any_reasoning = false;
  for (size_t j = 0; j < blocks.size(); ++j) {
    const std::string bf = indexed(field, j);
    const ojson& b = blocks[j];
    if (!b.is_object()) wrong_type(bf, "a content block (an object)", b);
    const std::string type = string_or_empty(b, "type");
    if (type == "text") {
      const std::string t = string_or_empty(b, "text");
      if (!t.empty()) parts.push_back({{"type", "text"}, {"text", t}});
    } else if (type == "thinking") {
      if (b.contains("thinking") && b["thinking"].is_string()) {
        reasoning += b["thinking"].get<std::string>();
        any_reasoning = true;
      }
    } else if (type == "redacted_thinking") {
      // Opaque: accepted so a client can send back a whole assistant turn, and skipped.
    } else if (type == "tool_use") {
      const ojson input =
          b.contains("input") && !b["input"].is_null() ? b["input"] : ojson::object();
      std::string args;
      if (!py_json_dumps(input.dump(), args)) args = input.dump();
      calls.push_back({{"id", b.contains("id") && b["id"].is_string() ? b["id"] : ojson("call_0")},
                       {"type", "function"},
                       {"function", {{"name", string_or_empty(b, "name")}, {"arguments", args}}}});
    } else if (type == "tool_result") {
      const std::string text =
          tool_result_text(b.contains("content") ? b["content"] : ojson(), bf + ".content");
      if (role == "user")
        msgs.push_back({{"role", "tool"},
                        {"tool_call_id", string_or_empty(b, "tool_use_id")},
                        {"content", text}});
      else
        parts.push_back({{"type", "text"}, {"text", "Tool result: " + text}});
    } else if (type == "image" || type == "document") {
      unsupported(bf, type + " blocks (images and documents are not read)");
    } else {
      unsupported(bf + ".type", "'" + type + "'");
    }
  }
  if (any_reasoning) msg["reasoning"] = reasoning;
  if (!calls.empty()) msg["tool_calls"] = std::move(calls);
  if (parts.size() == 1)
    msg["content"] = parts[0]["text"];
  else if (!parts.empty())
    msg["content"] = std::move(parts);
}

json usage_of(const json& u) {
  json out = {{"input_tokens", 0}, {"output_tokens", 0}};
  if (!u.is_object()) return out;
  int64_t in = u.value("prompt_tokens", int64_t{0});
  out["output_tokens"] = u.contains("completion_tokens") && u["completion_tokens"].is_number()
                             ? u["completion_tokens"].get<int64_t>()
                             : 0;
  if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object()) {
    const int64_t cached = u["prompt_tokens_details"].value("cached_tokens", int64_t{0});
    in -= cached;
    out["cache_read_input_tokens"] = cached;
  }
  out["input_tokens"] = std::max<int64_t>(0, in);
  return out;
}

// vLLM's _to_anthropic_stop_reason: (stop_reason, stop_sequence).
std::pair<json, json> stop_reason(const std::string& finish, const json& matched, bool tool_used,
                                  bool tool_complete) {
  if (finish == "length") return {"max_tokens", nullptr};
  if (finish != "stop" && finish != "tool_calls") return {nullptr, nullptr};
  if (tool_complete) return {"tool_use", nullptr};
  if (matched.is_string()) return {"stop_sequence", matched};
  if (finish == "tool_calls" || tool_used) return {"tool_use", nullptr};
  return {"end_turn", nullptr};
}

}  // namespace

json anthropic_error_body(int status, const std::string& message) {
  const char* type = status == 400   ? "invalid_request_error"
                     : status == 401 ? "authentication_error"
                     : status == 403 ? "permission_error"
                     : status == 404 ? "not_found_error"
                     : status == 413 ? "request_too_large"
                     : status == 429 ? "rate_limit_error"
                     : status == 503 ? "overloaded_error"
                     : status >= 500 ? "api_error"
                                     : "invalid_request_error";
  return {{"type", "error"}, {"error", {{"type", type}, {"message", message}}}};
}

AnthropicCall anthropic_to_chat(const ojson& body, bool count_tokens) {
  if (!body.is_object()) wrong_type("body", "a JSON object", body);
  Fields f(body, "request");
  AnthropicCall call;
  ojson& chat = call.chat = ojson::object();
  for (const char* k : {"mcp_servers", "container", "context_management"})
    if (f.get(k)) unsupported(k, "no server-side tools or context editing here");
  if (auto st = f.string("service_tier"); st && *st != "auto" && *st != "standard_only")
    unsupported("service_tier", "'" + *st + "'");
  f.mark("metadata");  // {user_id}: nothing to do with it here, as vLLM

  if (auto m = f.string("model")) chat["model"] = *m;
  ojson msgs = ojson::array();
  if (const ojson* s = f.get("system")) {
    const std::string text = system_text(*s, "system");
    if (!text.empty()) msgs.push_back({{"role", "system"}, {"content", text}});
  }
  const ojson* m = f.get("messages");
  if (!m) throw bad_request("messages is required", "messages");
  if (!m->is_array()) wrong_type("messages", "a list of messages", *m);
  for (size_t i = 0; i < m->size(); ++i) {
    const std::string field = indexed("messages", i);
    const ojson& in = (*m)[i];
    if (!in.is_object()) wrong_type(field, "a message (an object)", in);
    const std::string role = string_or_empty(in, "role");
    if (role != "user" && role != "assistant" && role != "system")
      throw bad_request(field + ".role must be user, assistant or system", field + ".role");
    const ojson c = in.contains("content") ? in["content"] : ojson();
    if (role == "system") {
      const std::string text = system_text(c, field + ".content");
      if (!text.empty()) msgs.push_back({{"role", "system"}, {"content", text}});
      continue;
    }
    ojson msg = {{"role", role}};
    if (c.is_string()) {
      msg["content"] = c;
    } else if (c.is_array()) {
      convert_blocks(c, role, field + ".content", msg, msgs);
    } else {
      wrong_type(field + ".content", "a string or a list of content blocks", c);
    }
    if (!(role == "user" && !msg.contains("content"))) msgs.push_back(std::move(msg));
  }
  chat["messages"] = std::move(msgs);

  if (!count_tokens) {
    const ojson* mt = f.get("max_tokens");
    if (!mt) throw bad_request("max_tokens is required", "max_tokens");
    chat["max_tokens"] = *mt;
    if (const ojson* s = f.get("stop_sequences")) chat["stop"] = *s;
    for (const char* k : {"temperature", "top_p", "top_k", "cache_salt", "vllm_xargs"})
      if (const ojson* v = f.get(k)) chat[k] = *v;
    auto st = f.boolean("stream");
    call.stream = st && *st;
    chat["stream"] = call.stream;
    if (call.stream)
      chat["stream_options"] = {{"include_usage", true}, {"continuous_usage_stats", true}};
  }
  if (const ojson* v = f.get("chat_template_kwargs")) chat["chat_template_kwargs"] = *v;

  if (const ojson* oc = f.get("output_config")) {
    if (!oc->is_object()) wrong_type("output_config", "an object", *oc);
    if (auto fm = oc->find("format"); fm != oc->end() && !fm->is_null()) {
      if (!fm->is_object() || string_or_empty(*fm, "type") != "json_schema" ||
          !fm->contains("schema"))
        unsupported("output_config.format",
                    "a {\"type\": \"json_schema\", \"schema\"} format only");
      chat["response_format"] = {
          {"type", "json_schema"},
          {"json_schema", {{"name", "json_schema"}, {"schema", (*fm)["schema"]}}}};
    }
    if (auto e = oc->find("effort"); e != oc->end() && !e->is_null()) chat["reasoning_effort"] = *e;
  }
  if (const ojson* th = f.get("thinking")) {
    if (!th->is_object()) wrong_type("thinking", "an object", *th);
    const std::string type = string_or_empty(*th, "type");
    if (type == "disabled") {
      chat["reasoning_effort"] = "none";
    } else if (type == "enabled") {
      if (!th->contains("budget_tokens"))
        throw bad_request("thinking.budget_tokens is required", "thinking.budget_tokens");
      chat["thinking_token_budget"] = (*th)["budget_tokens"];
    } else if (type != "adaptive") {
      throw bad_request("thinking.type must be enabled, disabled or adaptive", "thinking.type");
    }
  }

  if (const ojson* tc = f.get("tool_choice")) {
    if (!tc->is_object()) wrong_type("tool_choice", "an object", *tc);
    const std::string type = string_or_empty(*tc, "type");
    if (auto d = tc->find("disable_parallel_tool_use"); d != tc->end() && d->is_boolean())
      chat["parallel_tool_calls"] = !d->get<bool>();
    if (type == "auto" || type == "none")
      chat["tool_choice"] = type;
    else if (type == "any")
      chat["tool_choice"] = "required";
    else if (type == "tool" && !string_or_empty(*tc, "name").empty())
      chat["tool_choice"] = {{"type", "function"}, {"function", {{"name", (*tc)["name"]}}}};
    else
      throw bad_request("tool_choice.type must be auto, any, none, or tool with a name",
                        "tool_choice");
  }
  if (const ojson* t = f.get("tools")) {
    if (!t->is_array()) wrong_type("tools", "a list of tools", *t);
    ojson tools = ojson::array();
    for (size_t i = 0; i < t->size(); ++i) {
      const ojson& tool = (*t)[i];
      const std::string field = indexed("tools", i);
      if (!tool.is_object()) wrong_type(field, "a tool (an object)", tool);
      const std::string type = string_or_empty(tool, "type");
      if (!type.empty() && type != "custom")
        unsupported(field + ".type",
                    "'" + type + "' (server tools do not run here; custom tools only)");
      if (!tool.contains("name") || !tool["name"].is_string())
        throw bad_request(field + ".name is required (a string)", field + ".name");
      if (!tool.contains("input_schema") || !tool["input_schema"].is_object())
        throw bad_request(field + ".input_schema is required (an object)", field + ".input_schema");
      ojson schema = tool["input_schema"];
      if (!schema.contains("type")) schema["type"] = "object";
      ojson fn = {{"name", tool["name"]}, {"parameters", std::move(schema)}};
      if (tool.contains("description")) fn["description"] = tool["description"];
      if (tool.contains("strict")) fn["strict"] = tool["strict"];
      tools.push_back({{"type", "function"}, {"function", std::move(fn)}});
    }
    if (!chat.contains("tool_choice")) chat["tool_choice"] = "auto";
    chat["tools"] = std::move(tools);
  }
  call.ignored = f.unknown();
  return call;
}

json message_from_chat(const json& completion) {
  const json& choice = completion.at("choices").at(0);
  const json& msg = choice.at("message");
  const json calls = msg.contains("tool_calls") && msg["tool_calls"].is_array() ? msg["tool_calls"]
                                                                                : json::array();
  json content = json::array();
  if (msg.contains("reasoning") && nonempty_string(msg["reasoning"]))
    content.push_back({{"type", "thinking"},
                       {"thinking", msg["reasoning"]},
                       {"signature", random_id("").substr(0, 32)}});
  if (msg.contains("content") && nonempty_string(msg["content"]))
    content.push_back({{"type", "text"}, {"text", msg["content"]}});
  for (const json& c : calls) {
    const json& fn = c.at("function");
    json input = json::parse(fn.value("arguments", std::string("{}")), nullptr, false);
    if (input.is_discarded()) input = json::object();
    content.push_back({{"type", "tool_use"},
                       {"id", c.value("id", std::string())},
                       {"name", fn.value("name", std::string())},
                       {"input", std::move(input)}});
  }
  if (content.empty()) content.push_back({{"type", "text"}, {"text", ""}});
  const auto [reason, sequence] =
      stop_reason(choice.value("finish_reason", std::string()),
                  choice.contains("stop_reason") ? choice["stop_reason"] : json(), !calls.empty(),
                  !calls.empty());
  return {{"id", completion.value("id", std::string())},
          {"type", "message"},
          {"role", "assistant"},
          {"content", std::move(content)},
          {"model", completion.value("model", std::string())},
          {"stop_reason", reason},
          {"stop_sequence", sequence},
          {"usage", usage_of(completion.value("usage", json()))}};
}

void AnthropicStream::emit(std::vector<std::string>& out, const char* type, json data) {
  data["type"] = type;
  out.push_back(std::string("event: ") + type +
                "\ndata: " + data.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n");
}

void AnthropicStream::start(std::vector<std::string>& out, Block kind, json block) {
  index_ = next_index_;
  cur_ = kind;
  emit(out, "content_block_start", {{"index", index_}, {"content_block", std::move(block)}});
}

void AnthropicStream::stop(std::vector<std::string>& out) {
  if (cur_ == Block::kNone) return;
  if (cur_ == Block::kThinking)
    emit(out, "content_block_delta",
         {{"index", index_},
          {"delta", {{"type", "signature_delta"}, {"signature", random_id("").substr(0, 32)}}}});
  emit(out, "content_block_stop", {{"index", index_}});
  cur_ = Block::kNone;
  tool_id_.clear();
  ++next_index_;
}

// Ends the open block; text that arrived inside a tool_use block becomes a text block after it.
void AnthropicStream::stop_and_flush(std::vector<std::string>& out) {
  std::string text;
  text.swap(pending_text_);
  stop(out);
  if (text.empty()) return;
  start(out, Block::kText, {{"type", "text"}, {"text", ""}});
  emit(out, "content_block_delta",
       {{"index", index_}, {"delta", {{"type", "text_delta"}, {"text", text}}}});
  stop(out);
}

std::vector<std::string> AnthropicStream::feed(const std::string& sse) {
  std::vector<std::string> out;
  if (done_) return out;
  ChatSse ev = read_chat_sse(sse);
  if (ev.kind == ChatSse::kComment) out.push_back(sse);  // a keep-alive
  if (ev.kind == ChatSse::kComment || ev.kind == ChatSse::kOther) return out;
  if (ev.kind == ChatSse::kDone) {
    done_ = true;
    if (failed_) return out;
    stop_and_flush(out);
    emit(out, "message_stop", json::object());
    return out;
  }
  const json& chunk = ev.chunk;
  if (failed_) return out;
  if (chunk.contains("error")) {
    failed_ = true;
    stop(out);
    const json& e = chunk["error"];
    const int code =
        e.contains("code") && e["code"].is_number_integer() ? e["code"].get<int>() : 500;
    json body = anthropic_error_body(code, e.value("message", std::string()));
    emit(out, "error", {{"error", body["error"]}});
    return out;
  }
  if (!started_) {
    started_ = true;
    emit(out, "message_start",
         {{"message",
           {{"id", chunk.value("id", std::string())},
            {"type", "message"},
            {"role", "assistant"},
            {"content", json::array()},
            {"model", chunk.value("model", std::string())},
            {"stop_reason", nullptr},
            {"stop_sequence", nullptr},
            {"usage", usage_of(chunk.value("usage", json()))}}}});
    return out;  // vLLM reads nothing else from the first (role) chunk
  }
  if (!chunk.contains("choices") || !chunk["choices"].is_array()) return out;
  if (chunk["choices"].empty()) {  // the usage chunk: the message's end
    stop_and_flush(out);
    const bool complete = tool_used_ && !json::parse(last_args_, nullptr, false).is_discarded();
    const auto [reason, sequence] =
        stop_reason(finish_.empty() ? "stop" : finish_, stop_reason_, tool_used_, complete);
    emit(out, "message_delta",
         {{"delta", {{"stop_reason", reason}, {"stop_sequence", sequence}}},
          {"usage", usage_of(chunk.value("usage", json()))}});
    return out;
  }
  const json& c = chunk["choices"][0];
  if (c.contains("finish_reason") && c["finish_reason"].is_string()) {
    finish_ = c["finish_reason"].get<std::string>();
    stop_reason_ = c.contains("stop_reason") ? c["stop_reason"] : json();
  }
  if (!c.contains("delta") || !c["delta"].is_object()) return out;
  const json& d = c["delta"];
  if (d.contains("reasoning") && nonempty_string(d["reasoning"])) {
    if (cur_ != Block::kThinking) {
      stop_and_flush(out);
      start(out, Block::kThinking, {{"type", "thinking"}, {"thinking", ""}, {"signature", ""}});
    }
    emit(
        out, "content_block_delta",
        {{"index", index_}, {"delta", {{"type", "thinking_delta"}, {"thinking", d["reasoning"]}}}});
  }
  if (d.contains("content") && nonempty_string(d["content"])) {
    if (cur_ == Block::kToolUse) {
      pending_text_ += d["content"].get<std::string>();
    } else {
      if (cur_ != Block::kText) {
        stop_and_flush(out);
        start(out, Block::kText, {{"type", "text"}, {"text", ""}});
      }
      emit(out, "content_block_delta",
           {{"index", index_}, {"delta", {{"type", "text_delta"}, {"text", d["content"]}}}});
    }
  }
  if (d.contains("tool_calls") && d["tool_calls"].is_array())
    for (const json& tc : d["tool_calls"]) {
      const int idx =
          tc.contains("index") && tc["index"].is_number_integer() ? tc["index"].get<int>() : 0;
      const json fn =
          tc.contains("function") && tc["function"].is_object() ? tc["function"] : json::object();
      std::string id;
      if (tc.contains("id") && tc["id"].is_string()) {
        id = tc["id"].get<std::string>();
        tool_ids_.emplace_back(idx, id);
        if (tool_id_ != id && fn.contains("name") && fn["name"].is_string()) {
          stop_and_flush(out);
          tool_used_ = true;
          last_args_.clear();
          start(
              out, Block::kToolUse,
              {{"type", "tool_use"}, {"id", id}, {"name", fn["name"]}, {"input", json::object()}});
          tool_id_ = id;
        }
      } else {
        for (const auto& [i, known] : tool_ids_)
          if (i == idx) id = known;
      }
      if (!id.empty() && id == tool_id_ && fn.contains("arguments") &&
          nonempty_string(fn["arguments"])) {
        last_args_ += fn["arguments"].get<std::string>();
        emit(out, "content_block_delta",
             {{"index", index_},
              {"delta", {{"type", "input_json_delta"}, {"partial_json", fn["arguments"]}}}});
      }
    }
  return out;
}

}  // namespace vllm::api
