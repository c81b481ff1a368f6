// /v1/responses over the chat path (responses_api.h). Field by field as vLLM 0.33's
// entrypoints/openai/responses (protocol.py, utils.py, streaming_events.py).
#include "api/server/responses_api.h"

#include <set>

#include "api/server/api_error.h"
#include "api/server/chat_translation.h"
#include "api/server/protocol_fields.h"
#include "api/server/serving.h"

namespace vllm::api {

using json = nlohmann::json;
using detail::Fields;
using detail::indexed;
using detail::string_or_empty;
using detail::unsupported;
using detail::wrong_type;

namespace {

// A message item's content for the chat parser: a string, or its text parts (input_text,
// output_text, text, refusal); an image or file part is refused naming the item.
ojson item_content(const ojson& c, const std::string& field) {
  if (c.is_null() || c.is_string()) return c;
  if (!c.is_array()) wrong_type(field, "a string or a list of content parts", c);
  for (size_t j = 0; j < c.size(); ++j) {
    const ojson& p = c[j];
    const std::string type = p.is_object() ? string_or_empty(p, "type") : "";
    static const std::set<std::string> kText = {"input_text", "output_text", "text", "refusal"};
    if (!kText.count(type))
      throw bad_request(indexed(field, j) + ": content part type '" + type +
                            "' is not supported (text parts only; images and files are not read)",
                        field);
  }
  return c;
}

// vLLM's _construct_message_from_response_item: an item becomes a chat message, or joins the
// assistant message before it (a call adds to its tool_calls, reasoning or output text fills
// what it lacks).
void add_item(ojson& msgs, const ojson& item, size_t i) {
  const std::string field = indexed("input", i);
  if (!item.is_object()) wrong_type(field, "an input item (an object)", item);
  const std::string type = item.contains("type")
                               ? string_or_empty(item, "type")
                               : std::string(item.contains("role") ? "message" : "");
  ojson* prev = !msgs.empty() && msgs.back()["role"] == "assistant" ? &msgs.back() : nullptr;
  auto join = [&](const char* key, ojson v) {
    if (prev && (!prev->contains(key) || (*prev)[key].is_null())) {
      (*prev)[key] = std::move(v);
      return;
    }
    msgs.push_back({{"role", "assistant"}, {key, std::move(v)}});
  };
  if (type == "function_call") {
    for (const char* k : {"call_id", "name", "arguments"})
      if (!item.contains(k) || !item[k].is_string())
        throw bad_request(field + "." + k + " is required (a string)", field);
    ojson tc = {{"id", item["call_id"]},
                {"type", "function"},
                {"function", {{"name", item["name"]}, {"arguments", item["arguments"]}}}};
    if (prev) {
      if (!prev->contains("tool_calls")) (*prev)["tool_calls"] = ojson::array();
      (*prev)["tool_calls"].push_back(std::move(tc));
      return;
    }
    msgs.push_back({{"role", "assistant"}, {"tool_calls", ojson::array({std::move(tc)})}});
  } else if (type == "function_call_output") {
    if (!item.contains("call_id") || !item["call_id"].is_string())
      throw bad_request(field + ".call_id is required (a string)", field);
    const ojson out = item.contains("output") ? item["output"] : ojson();
    msgs.push_back({{"role", "tool"},
                    {"tool_call_id", item["call_id"]},
                    {"content", item_content(out, field + ".output")}});
  } else if (type == "reasoning") {
    if (item.contains("encrypted_content") && !item["encrypted_content"].is_null())
      throw bad_request("Encrypted content is not supported.", "input");
    std::string text;
    for (const char* k : {"content", "summary"}) {
      auto it = item.find(k);
      if (text.empty() && it != item.end() && it->is_array() && !it->empty() &&
          (*it)[0].is_object())
        text = string_or_empty((*it)[0], "text");
    }
    join("reasoning", text);
  } else if (type == "message") {
    const std::string role = string_or_empty(item, "role");
    const ojson c =
        item_content(item.contains("content") ? item["content"] : ojson(), field + ".content");
    if (role == "assistant") {
      join("content", c);
      return;
    }
    msgs.push_back({{"role", item.contains("role") ? item["role"] : ojson()}, {"content", c}});
  } else {
    throw bad_request("Unsupported input item type: " + type, "input");
  }
}

// A flat Responses function tool as the chat tool the template gets.
ojson chat_tool(const ojson& t, size_t i) {
  const std::string field = indexed("tools", i);
  if (!t.is_object()) wrong_type(field, "a tool (an object)", t);
  const std::string type = string_or_empty(t, "type");
  if (type != "function")
    unsupported(field + ".type", "tool type '" + type +
                                     "' (built-in tools do not run here; "
                                     "function tools only)");
  ojson fn = ojson::object();
  for (auto it = t.begin(); it != t.end(); ++it)
    if (it.key() != "type") fn[it.key()] = it.value();
  return {{"type", "function"}, {"function", std::move(fn)}};
}

ojson chat_tool_choice(const ojson& c) {
  if (c.is_string()) return c;
  if (c.is_object() && string_or_empty(c, "type") == "function" && c.contains("name"))
    return {{"type", "function"}, {"function", {{"name", c["name"]}}}};
  unsupported("tool_choice", "only \"auto\", \"none\", \"required\" or a function by name");
}

json reasoning_item(const std::string& id, const std::string& text, const json& status) {
  return {{"id", id},
          {"type", "reasoning"},
          {"summary", json::array()},
          {"content", json::array({{{"type", "reasoning_text"}, {"text", text}}})},
          {"encrypted_content", nullptr},
          {"status", status}};
}

// An output_text part; `logprobs` (include message.output_text.logprobs): the chat
// completion's logprobs.content entries ({token, logprob, bytes, top_logprobs}), vLLM's form.
json text_part(const std::string& text, json logprobs = nullptr) {
  return {{"type", "output_text"},
          {"text", text},
          {"annotations", json::array()},
          {"logprobs", std::move(logprobs)}};
}

json message_item(const std::string& id, const std::string& text, const std::string& status,
                  json logprobs = nullptr) {
  return {{"id", id},
          {"type", "message"},
          {"role", "assistant"},
          {"status", status},
          {"content",
           text.empty() ? json::array() : json::array({text_part(text, std::move(logprobs))})}};
}

// A chat choice's logprobs.content ([] when it has none).
json logprobs_of(const json& choice) {
  auto lp = choice.find("logprobs");
  if (lp == choice.end() || !lp->is_object()) return json::array();
  auto c = lp->find("content");
  return c != lp->end() && c->is_array() ? *c : json::array();
}

json call_item(const std::string& id, const std::string& call_id, const std::string& name,
               const std::string& args, const std::string& status) {
  return {{"id", id},     {"type", "function_call"}, {"call_id", call_id},
          {"name", name}, {"arguments", args},       {"status", status}};
}

json usage_of(const json& u, const std::string& reasoning, const TokenCounter& count) {
  if (!u.is_object()) return nullptr;
  const int64_t in = u.value("prompt_tokens", int64_t{0});
  const int64_t out = u.value("completion_tokens", int64_t{0});
  int64_t cached = 0;
  if (u.contains("prompt_tokens_details") && u["prompt_tokens_details"].is_object())
    cached = u["prompt_tokens_details"].value("cached_tokens", int64_t{0});
  const int64_t rt = reasoning.empty() || !count ? 0 : std::min(out, count(reasoning));
  return {{"input_tokens", in},
          {"input_tokens_details", {{"cached_tokens", cached}}},
          {"output_tokens", out},
          {"output_tokens_details", {{"reasoning_tokens", rt}}},
          {"total_tokens", in + out}};
}

json base_response(const ResponsesCall& call, int64_t created, const std::string& status,
                   json output, json usage) {
  json r = json::parse(call.echo.dump());
  r["id"] = call.id;
  r["object"] = "response";
  r["created_at"] = created;
  r["status"] = status;
  r["error"] = nullptr;
  r["incomplete_details"] =
      status == "incomplete" ? json{{"reason", "max_output_tokens"}} : json(nullptr);
  r["output"] = std::move(output);
  r["usage"] = std::move(usage);
  return r;
}

}  // namespace

json queued_response(const ResponsesCall& call, int64_t created_at) {
  return base_response(call, created_at, "queued", json::array(), json());
}

ResponsesCall responses_to_chat(const ojson& body, const ResponsesOptions& opts) {
  if (!body.is_object()) wrong_type("body", "a JSON object", body);
  Fields f(body, "request");
  ResponsesCall call;
  ojson& chat = call.chat = ojson::object();
  ojson& echo = call.echo = ojson::object();

  // Refused: what needs a response store (background: below) or runs tools server-side.
  std::optional<StoredResponse> prev;
  if (auto p = f.string("previous_response_id")) {
    if (opts.store) prev = opts.store->get(*p);
    if (!prev)
      throw ApiError(404, "Response with id '" + *p + "' not found.", "previous_response_id");
  }
  for (const char* k : {"conversation", "prompt", "max_tool_calls", "previous_input_messages"})
    if (f.get(k)) unsupported(k, "conversations and prompt templates are not kept here");
  // top_logprobs counts only with include message.output_text.logprobs, as in vLLM.
  const int64_t top_logprobs = f.integer("top_logprobs", 0, 20).value_or(0);
  if (const ojson* inc = f.get("include")) {
    if (!inc->is_array()) wrong_type("include", "a list of strings", *inc);
    for (const auto& v : *inc) {
      if (v.is_string() && v == "message.output_text.logprobs") {
        call.logprobs = true;
        continue;
      }
      if (!(v.is_string() && v == "reasoning.encrypted_content"))
        unsupported("include", "'" + (v.is_string() ? v.get<std::string>() : v.dump()) +
                                   "' (reasoning comes back as plain text in each reasoning item)");
    }
  }
  if (call.logprobs) {
    chat["logprobs"] = true;
    chat["top_logprobs"] = top_logprobs;
  }
  if (auto st = f.string("service_tier"); st && *st != "auto" && *st != "default")
    unsupported("service_tier", "'" + *st + "' (one tier here)");
  echo["service_tier"] = "auto";
  // vLLM's default (no store): nothing is stored, whatever this says.
  const bool store = f.boolean("store").value_or(true);
  call.store = opts.store && store;
  // background: the response runs on without its client, as vLLM runs it with its store
  // (openai_server.cpp). vLLM's checks, in its order: the request's own store flag, then the
  // server's store.
  if (auto b = f.boolean("background"); b && *b) {
    if (!store) throw bad_request("background can only be used when `store` is true", "background");
    if (!opts.store)
      throw bad_request(
          "This vLLM engine does not support `store=True` and therefore does not support the "
          "background mode. To enable these features, set the environment variable "
          "`VLLM_ENABLE_RESPONSES_API_STORE=1` when launching the vLLM server.",
          "background");
    call.background = true;
  }
  f.mark("stream_options");
  f.mark("prompt_cache_key");
  f.mark("safety_identifier");

  if (auto m = f.string("model")) chat["model"] = *m;
  ojson msgs = ojson::array();
  const ojson* instr = f.get("instructions");
  if (instr) {
    if (!instr->is_string()) wrong_type("instructions", "a string", *instr);
    msgs.push_back({{"role", "system"}, {"content", *instr}});
  }
  echo["instructions"] = instr ? *instr : ojson();
  // vLLM's construct_input_messages: the stored conversation without its system message (the
  // instructions do not carry over), then the previous output's messages as assistant turns.
  if (prev) {
    for (const auto& m : prev->messages)
      if (m.value("role", std::string()) != "system") msgs.push_back(m);
    for (const auto& item : prev->response.value("output", nlohmann::json::array()))
      if (item.value("type", std::string()) == "message")
        for (const auto& part : item.value("content", nlohmann::json::array()))
          msgs.push_back({{"role", "assistant"}, {"content", part.value("text", std::string())}});
  }
  const ojson* input = f.get("input");
  if (!input) throw bad_request("input is required", "input");
  if (input->is_string()) {
    msgs.push_back({{"role", "user"}, {"content", *input}});
  } else if (input->is_array()) {
    for (size_t i = 0; i < input->size(); ++i) add_item(msgs, (*input)[i], i);
  } else {
    wrong_type("input", "a string or a list of input items", *input);
  }
  chat["messages"] = std::move(msgs);

  // Sampling and vLLM's extra fields: the chat request's own, validated by its parser.
  for (const char* k : {"temperature",
                        "top_p",
                        "top_k",
                        "min_p",
                        "presence_penalty",
                        "frequency_penalty",
                        "repetition_penalty",
                        "seed",
                        "stop",
                        "stop_token_ids",
                        "ignore_eos",
                        "logit_bias",
                        "skip_special_tokens",
                        "spaces_between_special_tokens",
                        "include_stop_str_in_output",
                        "priority",
                        "chat_template_kwargs",
                        "cache_salt",
                        "user",
                        "include_reasoning",
                        "structured_outputs",
                        "parallel_tool_calls",
                        "request_id",
                        "vllm_xargs"})
    if (const ojson* v = f.get(k)) chat[k] = *v;
  if (const ojson* v = f.get("max_output_tokens")) chat["max_tokens"] = *v;
  echo["max_output_tokens"] = chat.contains("max_tokens") ? chat["max_tokens"] : ojson();
  for (const char* k : {"temperature", "top_p", "user", "presence_penalty", "frequency_penalty"})
    echo[k] = chat.contains(k) ? chat[k] : ojson();
  echo["parallel_tool_calls"] =
      chat.contains("parallel_tool_calls") ? chat["parallel_tool_calls"] : ojson(true);
  if (const ojson* md = f.get("metadata")) {
    if (!md->is_object()) wrong_type("metadata", "an object of strings", *md);
    echo["metadata"] = *md;
  } else {
    echo["metadata"] = nullptr;
  }

  // Tools: flat function tools; tool_choice reaches the chat request only with tools.
  ojson tools = ojson::array();
  if (const ojson* t = f.get("tools")) {
    if (!t->is_array()) wrong_type("tools", "a list of tools", *t);
    for (size_t i = 0; i < t->size(); ++i) tools.push_back(chat_tool((*t)[i], i));
    echo["tools"] = *t;
  } else {
    echo["tools"] = ojson::array();
  }
  const ojson* tc = f.get("tool_choice");
  echo["tool_choice"] = tc ? *tc : ojson("auto");
  if (!tools.empty()) {
    chat["tools"] = std::move(tools);
    ojson choice = chat_tool_choice(tc ? *tc : ojson("auto"));
    if (choice == "auto" && !opts.auto_tools) choice = "none";
    chat["tool_choice"] = std::move(choice);
  } else if (tc) {
    chat_tool_choice(*tc);  // still validated
  }

  // reasoning.effort as the chat request's reasoning_effort.
  echo["reasoning"] = nullptr;
  if (const ojson* r = f.get("reasoning")) {
    if (!r->is_object()) wrong_type("reasoning", "an object", *r);
    echo["reasoning"] = *r;
    if (auto it = r->find("effort"); it != r->end() && !it->is_null())
      chat["reasoning_effort"] = *it;
    if (auto it = r->find("summary"); it != r->end() && !it->is_null() && *it != "auto")
      unsupported("reasoning.summary", "reasoning summaries are not generated (\"auto\" only)");
  }

  // text.format as response_format.
  ojson text = {{"format", {{"type", "text"}}}};
  if (const ojson* t = f.get("text")) {
    if (!t->is_object()) wrong_type("text", "an object", *t);
    text = *t;
    if (auto v = t->find("verbosity"); v != t->end() && !v->is_null() && *v != "medium")
      unsupported("text.verbosity", "the model's verbosity cannot be set (\"medium\" only)");
    if (auto fm = t->find("format"); fm != t->end() && !fm->is_null()) {
      if (!fm->is_object()) wrong_type("text.format", "an object", *fm);
      const std::string type = string_or_empty(*fm, "type");
      if (type == "json_schema") {
        ojson js = ojson::object();
        for (const char* k : {"name", "schema", "strict", "description"})
          if (fm->contains(k)) js[k] = (*fm)[k];
        chat["response_format"] = {{"type", "json_schema"}, {"json_schema", std::move(js)}};
      } else if (type == "json_object") {
        chat["response_format"] = {{"type", "json_object"}};
      } else if (type != "text") {
        unsupported("text.format.type", "'" + type + "'");
      }
    }
  }
  echo["text"] = std::move(text);
  if (auto t = f.string("truncation"); t && *t != "disabled") {
    if (*t != "auto") unsupported("truncation", "'" + *t + "'");
    chat["truncate_prompt_tokens"] = -1;  // vLLM: keep the prompt's last max_model_len tokens
  }
  echo["truncation"] = chat.contains("truncate_prompt_tokens") ? "auto" : "disabled";

  auto s = f.boolean("stream");
  call.stream = s && *s;
  chat["stream"] = call.stream;
  if (call.stream) chat["stream_options"] = {{"include_usage", true}};
  call.id = chat.contains("request_id") && chat["request_id"].is_string()
                ? chat["request_id"].get<std::string>()
                : random_id("resp_");
  echo["background"] = call.background;
  echo["previous_response_id"] = prev ? body["previous_response_id"] : ojson();
  echo["store"] = call.store;
  echo["top_logprobs"] = call.logprobs ? top_logprobs : 0;
  call.ignored = f.unknown();
  return call;
}

json response_from_chat(const json& completion, const ResponsesCall& call, int64_t created_at,
                        const TokenCounter& count) {
  const json& choice = completion.at("choices").at(0);
  const json& msg = choice.at("message");
  const std::string finish = choice.value("finish_reason", std::string());
  const std::string last = finish == "length" ? "incomplete" : "completed";
  auto text = [](const json& m, const char* k) {
    auto it = m.find(k);
    return it != m.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  const std::string reasoning = text(msg, "reasoning"), content = text(msg, "content");
  const json calls = msg.contains("tool_calls") && msg["tool_calls"].is_array() ? msg["tool_calls"]
                                                                                : json::array();
  json out = json::array();
  if (!reasoning.empty()) out.push_back(reasoning_item(random_id("rs_"), reasoning, nullptr));
  if (!content.empty())
    out.push_back(message_item(random_id("msg_"), content, calls.empty() ? last : "completed",
                               call.logprobs ? logprobs_of(choice) : json()));
  for (size_t i = 0; i < calls.size(); ++i) {
    const json& fn = calls[i].at("function");
    out.push_back(call_item(random_id("fc_"), calls[i].value("id", random_id("call_")),
                            fn.value("name", std::string()), fn.value("arguments", std::string()),
                            i + 1 == calls.size() ? last : "completed"));
  }
  const std::string status = finish == "length" ? "incomplete" : "completed";
  return base_response(call, created_at, status, std::move(out),
                       usage_of(completion.value("usage", json()), reasoning, count));
}

ResponsesStream::ResponsesStream(const ResponsesCall& call, int64_t created_at, TokenCounter count)
    : call_(call), created_(created_at), count_(std::move(count)) {}

void ResponsesStream::emit(std::vector<std::string>& out, json ev) {
  ev["sequence_number"] = seq_++;
  const std::string type = ev["type"];
  out.push_back("event: " + type +
                "\ndata: " + ev.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n");
}

json ResponsesStream::response(const std::string& status) const {
  return base_response(call_, created_, status, output_,
                       status == "in_progress" ? json() : usage_of(usage_, reasoning_, count_));
}

std::vector<std::string> ResponsesStream::start() {
  std::vector<std::string> out;
  emit(out, {{"type", "response.created"}, {"response", response("in_progress")}});
  emit(out, {{"type", "response.in_progress"}, {"response", response("in_progress")}});
  return out;
}

void ResponsesStream::open(std::vector<std::string>& out, Item kind, const json& tc) {
  close(out, "completed");
  cur_ = kind;
  text_.clear();
  logprobs_ = json::array();
  const int64_t oi = static_cast<int64_t>(output_.size());
  if (kind == Item::kCall) {
    item_id_ = random_id("fc_");
    const json& fn = tc.value("function", json::object());
    call_id_ = tc.value("id", random_id("call_"));
    call_name_ = fn.value("name", std::string());
    call_index_ = tc.value("index", 0);
    emit(out, {{"type", "response.output_item.added"},
               {"output_index", oi},
               {"item", call_item(item_id_, call_id_, call_name_, "", "in_progress")}});
    return;
  }
  const bool reasoning = kind == Item::kReasoning;
  item_id_ = random_id(reasoning ? "rs_" : "msg_");
  json item = reasoning ? json{{"id", item_id_},
                               {"type", "reasoning"},
                               {"summary", json::array()},
                               {"status", "in_progress"}}
                        : message_item(item_id_, "", "in_progress");
  emit(out, {{"type", "response.output_item.added"}, {"output_index", oi}, {"item", item}});
  emit(out, {{"type", "response.content_part.added"},
             {"item_id", item_id_},
             {"output_index", oi},
             {"content_index", 0},
             {"part", reasoning ? json{{"type", "reasoning_text"}, {"text", ""}}
                                : json{{"type", "output_text"},
                                       {"text", ""},
                                       {"annotations", json::array()},
                                       {"logprobs", json::array()}}}});
}

void ResponsesStream::close(std::vector<std::string>& out, const std::string& status) {
  if (cur_ == Item::kNone) return;
  const int64_t oi = static_cast<int64_t>(output_.size());
  json item;
  if (cur_ == Item::kCall) {
    emit(out, {{"type", "response.function_call_arguments.done"},
               {"item_id", item_id_},
               {"output_index", oi},
               {"name", call_name_},
               {"arguments", text_}});
    item = call_item(item_id_, call_id_, call_name_, text_, status);
  } else {
    const bool reasoning = cur_ == Item::kReasoning;
    json lps = call_.logprobs && !logprobs_.empty() ? logprobs_ : json();
    const json part =
        reasoning ? json{{"type", "reasoning_text"}, {"text", text_}} : text_part(text_, lps);
    json done = {{"type", reasoning ? "response.reasoning_text.done" : "response.output_text.done"},
                 {"item_id", item_id_},
                 {"output_index", oi},
                 {"content_index", 0},
                 {"text", text_}};
    if (!reasoning) done["logprobs"] = json::array();
    emit(out, std::move(done));
    emit(out, {{"type", "response.content_part.done"},
               {"item_id", item_id_},
               {"output_index", oi},
               {"content_index", 0},
               {"part", part}});
    item = reasoning ? reasoning_item(item_id_, text_, status)
                     : message_item(item_id_, text_, status, std::move(lps));
  }
  emit(out, {{"type", "response.output_item.done"}, {"output_index", oi}, {"item", item}});
  output_.push_back(std::move(item));
  cur_ = Item::kNone;
}

std::vector<std::string> ResponsesStream::feed(const std::string& sse) {
  std::vector<std::string> out;
  if (done_) return out;
  ChatSse ev = read_chat_sse(sse);
  if (ev.kind == ChatSse::kComment) out.push_back(sse);  // a keep-alive
  if (ev.kind == ChatSse::kComment || ev.kind == ChatSse::kOther) return out;
  if (ev.kind == ChatSse::kDone) {
    done_ = true;
    if (failed_) return out;
    const std::string status = finish_ == "length" ? "incomplete" : "completed";
    close(out, status);
    final_ = response(status);
    emit(out, {{"type", status == "incomplete" ? "response.incomplete" : "response.completed"},
               {"response", final_}});
    return out;
  }
  const json& chunk = ev.chunk;
  if (chunk.contains("error")) {
    failed_ = true;
    const json& e = chunk["error"];
    emit(out, {{"type", "error"},
               {"code", e.value("type", std::string("InternalServerError"))},
               {"message", e.value("message", std::string())},
               {"param", e.contains("param") ? e["param"] : json()}});
    return out;
  }
  if (chunk.contains("usage") && chunk["usage"].is_object()) usage_ = chunk["usage"];
  if (!chunk.contains("choices") || !chunk["choices"].is_array()) return out;
  for (const json& c : chunk["choices"]) {
    if (c.value("index", 0) != 0 || !c.contains("delta")) continue;
    const json& d = c["delta"];
    const int64_t oi = static_cast<int64_t>(output_.size());
    if (auto r = d.find("reasoning"); r != d.end() && nonempty_string(*r)) {
      if (cur_ != Item::kReasoning) open(out, Item::kReasoning);
      text_ += r->get<std::string>();
      reasoning_ += r->get<std::string>();
      emit(out, {{"type", "response.reasoning_text.delta"},
                 {"item_id", item_id_},
                 {"output_index", oi},
                 {"content_index", 0},
                 {"delta", *r}});
    }
    if (auto t = d.find("content"); t != d.end() && nonempty_string(*t)) {
      if (cur_ != Item::kMessage) open(out, Item::kMessage);
      text_ += t->get<std::string>();
      json lps = call_.logprobs ? logprobs_of(c) : json::array();
      for (const json& e : lps) logprobs_.push_back(e);
      emit(out, {{"type", "response.output_text.delta"},
                 {"item_id", item_id_},
                 {"output_index", static_cast<int64_t>(output_.size())},
                 {"content_index", 0},
                 {"delta", *t},
                 {"logprobs", std::move(lps)}});
    }
    if (auto tcs = d.find("tool_calls"); tcs != d.end() && tcs->is_array())
      for (const json& tc : *tcs) {
        if (cur_ != Item::kCall || tc.value("index", 0) != call_index_) open(out, Item::kCall, tc);
        const json fn = tc.value("function", json::object());
        const std::string args = fn.value("arguments", std::string());
        if (args.empty()) continue;
        text_ += args;
        emit(out, {{"type", "response.function_call_arguments.delta"},
                   {"item_id", item_id_},
                   {"output_index", static_cast<int64_t>(output_.size())},
                   {"delta", args}});
      }
    if (auto fr = c.find("finish_reason"); fr != c.end() && fr->is_string())
      finish_ = fr->get<std::string>();
  }
  return out;
}

}  // namespace vllm::api
