// Generation: fan-out, admission, whole responses and SSE chunks in OpenAI's formats.
#include "api/server/serving.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <random>

#include "api/llm.h"

namespace vllm::api {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

json stop_reason_json(const std::variant<std::monostate, int32_t, std::string>& r) {
  if (std::holds_alternative<int32_t>(r)) return std::get<int32_t>(r);
  if (std::holds_alternative<std::string>(r)) return std::get<std::string>(r);
  return nullptr;
}

std::string sse(const json& j) {
  return "data: " + j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

}  // namespace

std::string random_id(const std::string& prefix) {
  thread_local std::mt19937_64 rng(std::random_device{}() ^
                                   std::hash<std::thread::id>{}(std::this_thread::get_id()));
  static const char* hex = "0123456789abcdef";
  std::string s = prefix;
  for (int i = 0; i < 32; ++i) s += hex[rng() & 15];
  return s;
}

Generation::Generation(ServingContext& ctx, Kind kind, const GenerationRequest& req,
                       GenerationOptions opts)
    : ctx_(ctx),
      kind_(kind),
      id_(req.request_id ? (kind == Kind::kChat ? "chatcmpl-" : "cmpl-") + *req.request_id
                         : random_id(kind == Kind::kChat ? "chatcmpl-" : "cmpl-")),
      created_(static_cast<int64_t>(std::time(nullptr))),
      include_usage_(req.include_usage),
      // As vLLM: continuous usage only with include_usage.
      continuous_usage_(req.include_usage && req.continuous_usage_stats),
      want_logprobs_(req.sampling.logprobs.has_value()),
      want_prompt_logprobs_(req.sampling.prompt_logprobs.has_value()),
      echo_(req.echo),
      return_token_ids_(req.return_token_ids),
      tokens_as_ids_(req.return_tokens_as_token_ids),
      opts_(std::move(opts)),
      n_(req.n),
      last_write_(std::chrono::steady_clock::now()) {}

std::shared_ptr<Generation> Generation::start(ServingContext& ctx, Kind kind,
                                              const GenerationRequest& req,
                                              std::vector<PromptInput> prompts,
                                              GenerationOptions opts) {
  auto g = std::shared_ptr<Generation>(new Generation(ctx, kind, req, std::move(opts)));
  g->prompts_ = std::move(prompts);
  const engine::SamplingParams base = ctx.llm.with_model_stops(req.sampling);
  g->choices_.resize(g->prompts_.size() * static_cast<size_t>(req.n));
  // Engine ids stay unique even when clients reuse a request_id.
  const std::string engine_prefix = random_id("gen-");
  g->tags_ = ctx.reasoning ? think_tags(ctx.llm.tokenizer(), *ctx.reasoning) : ThinkTags{};
  const ThinkTags& tags = g->tags_;
  for (size_t p = 0; p < g->prompts_.size(); ++p) {
    g->prompt_tokens_ += static_cast<int64_t>(g->prompts_[p].ids.size());
    const std::vector<int32_t>& ids = g->prompts_[p].ids;
    const bool thought = ctx.reasoning && prompt_ends_reasoning(ids, tags, *ctx.reasoning);
    // vLLM checks its queue limits once per prompt, for its n sequences, before adding them.
    try {
      ctx.engine.check_admission(req.n);
    } catch (const engine::EngineOverloaded& e) {
      g->abort_all();
      throw ApiError(503, e.what());
    }
    for (int i = 0; i < req.n; ++i) {
      Choice& c = g->choices_[p * req.n + i];
      c.index = static_cast<int>(p * req.n + i);
      c.splitter = ctx.reasoning ? ReasoningStreamSplitter(*ctx.reasoning, thought)
                                 : ReasoningStreamSplitter(thought);
      // vLLM starts a whole output's GLM parse in the content only when the vocabulary has the
      // turn markers that tell this turn's </think> from an earlier one (never for minimax_m2).
      c.prompt_closed_reasoning = thought && !tags.boundaries.empty();
      if (g->opts_.tool_parser)  // null for kOpenAI: the harmony splitter reads those calls
        c.tools = ToolCallParser::make(*g->opts_.tool_parser, g->tool_options());
      c.prompt_index = static_cast<int>(p);
      c.engine_id = engine_prefix + "-" + std::to_string(c.index);
      engine::SamplingParams sp = base;
      // Children of one request get distinct, reproducible seeds (vLLM: seed + index).
      if (sp.seed && req.n > 1) sp.seed = *sp.seed + static_cast<uint64_t>(i);
      try {
        c.stream = ctx.engine.add_request(c.engine_id, g->prompts_[p].ids, sp, req.priority);
      } catch (const engine::EngineOverloaded& e) {
        g->abort_all();
        throw ApiError(503, e.what());
      } catch (const engine::EngineStopped& e) {
        g->abort_all();
        throw ApiError(503, e.what());
      }
    }
  }
  for (Choice& c : g->choices_) {
    const std::string err = c.stream->wait_admitted();
    if (!err.empty()) {
      c.done = true;
      g->abort_all();
      throw bad_request(err);
    }
  }
  return g;
}

Generation::~Generation() { abort_all(); }

void Generation::abort_all() {
  for (Choice& c : choices_)
    if (c.stream && !c.done && !c.stream->finished()) ctx_.engine.abort(c.engine_id);
}

std::string Generation::label(int32_t id) const {
  if (tokens_as_ids_) return "token_id:" + std::to_string(id);
  try {
    return ctx_.llm.decode({id}, false);
  } catch (const std::exception&) {
    return "";
  }
}

void Generation::absorb(Choice& c, engine::RequestOutput& o) {
  c.text += o.text_delta;
  c.tokens.insert(c.tokens.end(), o.new_token_ids.begin(), o.new_token_ids.end());
  c.logprobs.insert(c.logprobs.end(), o.logprobs.begin(), o.logprobs.end());
  c.prompt_logprobs.insert(c.prompt_logprobs.end(), o.prompt_logprobs.begin(),
                           o.prompt_logprobs.end());
  c.completion_tokens = std::max<int64_t>(c.completion_tokens, o.num_output_tokens);
  c.cached_tokens = std::max<int64_t>(c.cached_tokens, o.num_cached_tokens);
  if (o.finished) {
    c.done = true;
    c.finish_reason = o.finish_reason;
    c.stop_reason = stop_reason_json(o.stop_reason);
    c.error = o.error;
    if (ctx_.log_outputs) log_output(c);
  }
}

void Generation::log_output(const Choice& c) const {
  std::string text = c.text;
  if (ctx_.max_log_len >= 0 && static_cast<int64_t>(text.size()) > ctx_.max_log_len)
    text.resize(static_cast<size_t>(ctx_.max_log_len));
  std::fprintf(stderr,
               "INFO vllm.cpp: Generated response %s (choice %d): output: %s, output tokens: %lld, "
               "finish_reason: %s\n",
               id_.c_str(), c.index,
               json(text).dump(-1, ' ', false, json::error_handler_t::replace).c_str(),
               static_cast<long long>(c.completion_tokens),
               c.finish_reason.empty() ? "none" : c.finish_reason.c_str());
}

int64_t Generation::reasoning_tokens(const Choice& c) const {
  if (!splits_reasoning()) return 0;  // vLLM's identity parser (and a request that does not think)
  return count_reasoning_tokens(*ctx_.reasoning, tags_, c.tokens, c.prompt_closed_reasoning);
}

json Generation::usage() const {
  int64_t completion = 0, cached = 0, reasoning = 0;
  for (const Choice& c : choices_) {
    completion += c.completion_tokens;
    // The prompt is counted once per prompt (as prompt_tokens is), from its first choice.
    if (c.index % n_ == 0) cached += c.cached_tokens;
    if (reports_reasoning_tokens()) reasoning += reasoning_tokens(c);
  }
  json u = {{"prompt_tokens", prompt_tokens_},
            {"total_tokens", prompt_tokens_ + completion},
            {"completion_tokens", completion},
            {"prompt_tokens_details", {{"cached_tokens", cached}}}};
  if (reports_reasoning_tokens())
    u["completion_tokens_details"] = {{"reasoning_tokens", reasoning}};
  return u;
}

json Generation::running_usage(const Choice* c) const {
  const int64_t completion_tokens = c ? c->completion_tokens : 0;
  json u = {{"prompt_tokens", prompt_tokens_},
            {"completion_tokens", completion_tokens},
            {"total_tokens", prompt_tokens_ + completion_tokens}};
  if (reports_reasoning_tokens())
    u["completion_tokens_details"] = {{"reasoning_tokens", c ? reasoning_tokens(*c) : 0}};
  return u;
}

bool Generation::reports_reasoning_tokens() const {
  return kind_ == Kind::kChat && ctx_.reasoning.has_value();
}

std::vector<LogprobEntry> Generation::echo_entries(const Choice& c) const {
  std::vector<LogprobEntry> e;
  const std::vector<int32_t>& ids = prompts_[c.prompt_index].ids;
  for (size_t k = 0; k < ids.size(); ++k)
    e.push_back(
        {ids[k], k == 0 || k > c.prompt_logprobs.size() ? nullptr : &c.prompt_logprobs[k - 1]});
  return e;
}

json Generation::completion_choice(Choice& c) {
  const PromptInput& p = prompts_[c.prompt_index];
  const bool show_new = !opts_.echo_only;
  json lp = nullptr;
  if (want_logprobs_) {
    std::vector<LogprobEntry> e;
    if (echo_) e = echo_entries(c);
    if (show_new)
      for (size_t i = 0; i < c.logprobs.size(); ++i)
        e.push_back({i < c.tokens.size() ? c.tokens[i] : c.logprobs[i].token_id, &c.logprobs[i]});
    size_t offset = 0;
    lp = completion_logprobs(e, offset, [this](int32_t id) { return label(id); });
  }
  json choice = {{"index", c.index},
                 {"text", (echo_ ? p.text : std::string()) + (show_new ? c.text : std::string())},
                 {"logprobs", lp},
                 {"finish_reason", c.finish_reason},
                 {"stop_reason", c.stop_reason},
                 {"prompt_logprobs",
                  want_prompt_logprobs_
                      ? prompt_logprobs(c.prompt_logprobs, [this](int32_t id) { return label(id); })
                      : json(nullptr)}};
  if (return_token_ids_) {
    choice["prompt_token_ids"] = p.ids;
    choice["token_ids"] = show_new ? c.tokens : std::vector<int32_t>{};
  }
  return choice;
}

namespace {

json tool_call_json(const ToolCall& t) {
  return {{"id", t.id},
          {"type", "function"},
          {"function", {{"name", t.name}, {"arguments", t.arguments}}}};
}

json tool_delta_json(const ToolCallDelta& t) {
  if (t.header)
    return {{"index", t.index},
            {"id", t.id},
            {"type", "function"},
            {"function", {{"name", t.name}, {"arguments", ""}}}};
  return {{"index", t.index}, {"function", {{"arguments", t.arguments}}}};
}

}  // namespace

bool Generation::hides_metadata() const {
  // As vLLM: whenever the server composes a parser (a reasoning parser, harmony's, or an auto
  // tool parser), not for required / named calls alone.
  return kind_ == Kind::kChat && !opts_.include_reasoning &&
         (ctx_.reasoning || ctx_.harmony || opts_.server_tool_parser);
}

bool Generation::splits_reasoning() const { return ctx_.reasoning.has_value() && opts_.thinking; }

ToolParserOptions Generation::tool_options() const {
  ToolParserOptions o;
  o.named_function = opts_.named_tool;
  o.tools = opts_.tools;
  // tool_choice "none" with tools: vLLM's engine suppresses the calls; without tools it parses
  // them as under "auto" (and the serving drops them).
  o.suppress_calls = opts_.drop_tool_calls && opts_.tools.is_array() && !opts_.tools.empty();
  // vLLM's GLM parser reads <think> in the content as reasoning only when a reasoning parser
  // runs and the request thinks (Kimi K2's drops </think> then, by the same rule);
  // MiniMax-M2's drops </think> whenever a reasoning parser runs.
  const bool thinks_by_glm_rule =
      opts_.tool_parser == ToolParserKind::kGlm45 || opts_.tool_parser == ToolParserKind::kKimiK2;
  o.reasoning_markup = ctx_.reasoning.has_value() && (!thinks_by_glm_rule || opts_.glm_thinking);
  return o;
}

bool Generation::tools_finish(const Choice& c, bool called) const {
  if (!opts_.tool_parser || opts_.drop_tool_calls) return false;
  if (*opts_.tool_parser == ToolParserKind::kRequired) return c.finish_reason == "stop";
  return *opts_.tool_parser != ToolParserKind::kNamed && called;
}

json Generation::chat_message(const Choice& c, std::string& finish_reason) const {
  json msg = {{"role", opts_.role}};
  std::optional<std::string> content = c.text;
  json reasoning = nullptr;
  json calls = json::array();
  finish_reason = c.finish_reason;
  const bool harmony_calls = opts_.tool_parser == ToolParserKind::kOpenAI;
  if (ctx_.harmony) {
    HarmonySplit h = split_harmony(c.text);
    content = std::move(h.content);
    if (h.reasoning && opts_.include_reasoning) reasoning = *h.reasoning;
    // Without --tool-call-parser openai (or with tool_choice none) the calls are dropped, as
    // vLLM's HarmonyParser drops them without a tool parser.
    if (harmony_calls) {
      if (!opts_.parallel_tool_calls && h.calls.size() > 1) h.calls.resize(1);
      for (const HarmonyToolCall& t : h.calls)
        calls.push_back(tool_call_json({t.id, t.name, harmony_arguments(t)}));
      if (tools_finish(c, !h.calls.empty())) finish_reason = "tool_calls";
    }
  } else {
    ParsedChatOutput p = parse_chat_output(
        c.text, splits_reasoning() ? ctx_.reasoning : std::nullopt, c.prompt_closed_reasoning,
        harmony_calls ? std::nullopt : opts_.tool_parser, tool_options());
    content = std::move(p.content);
    if (p.reasoning && opts_.include_reasoning) reasoning = *p.reasoning;
    // tool_choice "none" (drop_tool_calls): the content as the parser left it, no calls.
    if (opts_.tool_parser && !harmony_calls && !opts_.drop_tool_calls) {
      // parallel_tool_calls false: only the first call is returned (vLLM filters the same way).
      std::vector<ToolCall>& x = p.tools.calls;
      if (!opts_.parallel_tool_calls && x.size() > 1) x.resize(1);
      for (const ToolCall& t : x) calls.push_back(tool_call_json(t));
      if (tools_finish(c, !x.empty())) finish_reason = "tool_calls";
    }
  }
  msg["content"] = content || !opts_.chat_echo.empty()
                       ? json(opts_.chat_echo + content.value_or(""))
                       : json(nullptr);
  // Current vLLM names the reasoning text `reasoning` (reasoning_content is gone).
  msg["reasoning"] = reasoning;
  if (!calls.empty()) msg["tool_calls"] = std::move(calls);
  return msg;
}

json Generation::collect(const std::function<bool()>& client_gone) {
  for (Choice& c : choices_) {
    engine::RequestOutput o;
    while (!c.done) {
      if (client_gone && client_gone()) {
        abort_all();
        throw ApiError(499, "client closed the connection");
      }
      auto r = c.stream->pop(o, 100ms);
      if (r == engine::RequestStream::PopResult::kClosed) break;
      if (r == engine::RequestStream::PopResult::kOutput) absorb(c, o);
    }
    if (!c.error.empty()) throw ApiError(500, c.error);
  }
  const auto lbl = [this](int32_t id) { return label(id); };
  json choices = json::array();
  for (Choice& c : choices_) {
    if (kind_ == Kind::kCompletion) {
      choices.push_back(completion_choice(c));
      continue;
    }
    std::string finish;
    json message = chat_message(c, finish);
    json choice = {
        {"index", c.index},
        {"message", std::move(message)},
        {"logprobs",
         opts_.chat_logprobs && !hides_metadata() ? chat_logprobs(c.logprobs, lbl) : json(nullptr)},
        {"finish_reason", finish},
        {"stop_reason", c.stop_reason}};
    if (return_token_ids_) choice["token_ids"] = hides_metadata() ? json(nullptr) : json(c.tokens);
    choices.push_back(std::move(choice));
  }
  json out = {{"id", id_},
              {"object", kind_ == Kind::kChat ? "chat.completion" : "text_completion"},
              {"created", created_},
              {"model", model_name()},
              {"choices", choices},
              {"system_fingerprint",
               ctx_.system_fingerprint ? json(*ctx_.system_fingerprint) : json(nullptr)},
              {"usage", usage()}};
  if (kind_ == Kind::kChat) {
    out["prompt_logprobs"] =
        want_prompt_logprobs_ ? prompt_logprobs(choices_[0].prompt_logprobs, lbl) : json(nullptr);
    if (return_token_ids_) out["prompt_token_ids"] = prompts_[0].ids;
    if (opts_.prompt_text) out["prompt_text"] = *opts_.prompt_text;
  }
  return out;
}

// vLLM stamps its fingerprint on a choice's final chunk when no usage chunk follows (that one
// carries it instead).
void Generation::stamp_fingerprint(json& chunk) const {
  if (ctx_.system_fingerprint && !include_usage_)
    chunk["system_fingerprint"] = *ctx_.system_fingerprint;
}

json Generation::chunk_header() const {
  return {{"id", id_},
          {"object", kind_ == Kind::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", created_},
          {"model", model_name()}};
}

std::vector<std::string> Generation::stream_events(Choice& c, engine::RequestOutput& o) {
  std::vector<std::string> ev;
  const std::vector<int32_t> new_ids = o.new_token_ids;
  const std::vector<engine::TokenLogprobs> new_lps = o.logprobs;
  const std::string delta = o.text_delta;
  absorb(c, o);
  const bool first = !c.sent_first;
  c.sent_first = true;
  const auto lbl = [this](int32_t id) { return label(id); };
  json choice = {{"index", c.index}};
  if (kind_ == Kind::kCompletion) {
    const bool show_new = !opts_.echo_only;
    std::string text = show_new ? delta : std::string();
    std::vector<LogprobEntry> entries;
    // The first chunk of a completion carries the echoed prompt (and its logprobs).
    if (first && echo_) {
      text = prompts_[c.prompt_index].text + text;
      if (want_logprobs_) entries = echo_entries(c);
    }
    if (want_logprobs_ && show_new)
      for (size_t i = 0; i < new_lps.size(); ++i)
        entries.push_back({i < new_ids.size() ? new_ids[i] : new_lps[i].token_id, &new_lps[i]});
    // The first chunk also goes out empty when it must carry the prompt's ids.
    if (text.empty() && entries.empty() && !c.done && !(first && return_token_ids_)) return ev;
    choice["text"] = text;
    choice["logprobs"] =
        want_logprobs_ ? completion_logprobs(entries, c.text_offset, lbl) : json(nullptr);
    if (return_token_ids_) {
      if (first) choice["prompt_token_ids"] = prompts_[c.prompt_index].ids;
      choice["token_ids"] = show_new ? new_ids : std::vector<int32_t>{};
    }
  } else {
    if (first) {
      json head = chunk_header();
      head["choices"] = json::array({{{"index", c.index},
                                      {"delta", {{"role", opts_.role}, {"content", ""}}},
                                      {"logprobs", nullptr},
                                      {"finish_reason", nullptr}}});
      if (return_token_ids_) head["prompt_token_ids"] = prompts_[c.prompt_index].ids;
      // As vLLM: with continuous usage the role (and echo) chunks carry it too, before any
      // completion token.
      if (continuous_usage_) head["usage"] = running_usage(nullptr);
      ev.push_back(sse(head));
      if (!opts_.chat_echo.empty()) {
        json echo = chunk_header();
        echo["choices"] = json::array({{{"index", c.index},
                                        {"delta", {{"content", opts_.chat_echo}}},
                                        {"logprobs", nullptr},
                                        {"finish_reason", nullptr}}});
        if (continuous_usage_) echo["usage"] = running_usage(nullptr);
        ev.push_back(sse(echo));
      }
    }
    json d = json::object();
    std::string text = delta;
    std::vector<ToolCallDelta> calls;
    if (ctx_.harmony) {
      HarmonyDelta h = c.harmony.feed(delta);
      if (c.done) {
        HarmonyDelta tail = c.harmony.finish();
        h.reasoning += tail.reasoning;
        h.content += tail.content;
        for (ToolCallDelta& t : tail.calls) h.calls.push_back(std::move(t));
      }
      if (!h.reasoning.empty() && opts_.include_reasoning) d["reasoning"] = h.reasoning;
      text = std::move(h.content);
      if (opts_.tool_parser == ToolParserKind::kOpenAI)
        for (ToolCallDelta& t : h.calls)
          if (opts_.parallel_tool_calls || t.index == 0) calls.push_back(std::move(t));
    } else if (splits_reasoning()) {
      auto [r, t] = c.splitter.feed(delta);
      if (c.done) {
        auto [r2, t2] = c.splitter.finish();
        r += r2;
        t += t2;
      }
      if (!r.empty() && opts_.include_reasoning) d["reasoning"] = r;
      text = std::move(t);
    }
    if (c.tools) {
      ParsedDelta pd;
      c.tools->feed(text, pd);
      if (c.done) c.tools->finish(pd);
      text = std::move(pd.content);
      if (!opts_.drop_tool_calls)
        for (ToolCallDelta& t : pd.calls)
          if (opts_.parallel_tool_calls || t.index == 0) calls.push_back(std::move(t));
    }
    if (!text.empty()) d["content"] = text;
    // One chunk per tool-call piece, as vLLM streams them: the first with id, type, name and
    // empty arguments, then the argument fragments.
    std::vector<json> deltas;
    if (!d.empty() || calls.empty()) deltas.push_back(std::move(d));
    for (const ToolCallDelta& t : calls)
      deltas.push_back({{"tool_calls", json::array({tool_delta_json(t)})}});
    // As vLLM: a delta with nothing to show still goes out when it carries logprobs or token ids
    // (so that a client sees every token), unless those are hidden.
    const bool hide = hides_metadata();
    const bool metadata = !hide && ((opts_.chat_logprobs && !new_lps.empty()) || return_token_ids_);
    if (deltas.size() == 1 && deltas[0].empty() && !metadata && !c.done) return ev;
    std::string finish = c.finish_reason;
    const int called = c.tools                                        ? c.tools->num_calls()
                       : opts_.tool_parser == ToolParserKind::kOpenAI ? c.harmony.num_calls()
                                                                      : 0;
    if (c.done && tools_finish(c, called > 0)) finish = "tool_calls";
    for (size_t k = 0; k < deltas.size(); ++k) {
      json ch = {{"index", c.index}, {"delta", std::move(deltas[k])}};
      ch["logprobs"] =
          k == 0 && opts_.chat_logprobs && !hide ? chat_logprobs(new_lps, lbl) : json(nullptr);
      if (return_token_ids_)
        ch["token_ids"] = hide ? json(nullptr) : json(k == 0 ? new_ids : std::vector<int32_t>{});
      const bool last = k + 1 == deltas.size();
      ch["finish_reason"] = c.done && last ? json(finish) : json(nullptr);
      if (c.done && last) ch["stop_reason"] = c.stop_reason;
      json chunk = chunk_header();
      chunk["choices"] = json::array({std::move(ch)});
      if (c.done && last) stamp_fingerprint(chunk);
      if (continuous_usage_) chunk["usage"] = running_usage(&c);
      ev.push_back(sse(chunk));
    }
    return ev;
  }
  choice["finish_reason"] = c.done ? json(c.finish_reason) : json(nullptr);
  if (c.done) choice["stop_reason"] = c.stop_reason;
  json chunk = chunk_header();
  chunk["choices"] = json::array({choice});
  if (c.done) stamp_fingerprint(chunk);
  if (continuous_usage_) {
    chunk["usage"] = running_usage(&c);
  }
  ev.push_back(sse(chunk));
  return ev;
}

bool Generation::stream_step(const std::function<bool(const std::string&)>& write,
                             std::chrono::milliseconds wait) {
  if (finished_stream_) return false;
  auto send = [&](const std::string& s) {
    if (!write(s)) {
      abort_all();
      return false;
    }
    last_write_ = std::chrono::steady_clock::now();
    return true;
  };
  bool any = false;
  // Drain what is ready on every choice without waiting, round robin.
  for (size_t k = 0; k < choices_.size(); ++k) {
    Choice& c = choices_[(next_poll_ + k) % choices_.size()];
    engine::RequestOutput o;
    while (!c.done && c.stream->pop(o, 0ms) == engine::RequestStream::PopResult::kOutput) {
      any = true;
      for (const auto& e : stream_events(c, o))
        if (!send(e)) return false;
    }
  }
  next_poll_ = (next_poll_ + 1) % std::max<size_t>(1, choices_.size());
  bool all_done = true;
  for (Choice& c : choices_) {
    if (!c.done && c.stream->finished()) c.done = true;  // closed without a final output
    all_done &= c.done;
  }
  if (all_done) {
    for (Choice& c : choices_)
      if (!c.error.empty()) {
        json err = ApiError::error_body(500, c.error);
        if (!send(sse(err))) return false;
        break;
      }
    if (include_usage_) {
      json u = chunk_header();
      u["choices"] = json::array();
      u["usage"] = usage();
      if (ctx_.system_fingerprint) u["system_fingerprint"] = *ctx_.system_fingerprint;
      if (!send(sse(u))) return false;
    }
    send("data: [DONE]\n\n");
    finished_stream_ = true;
    return false;
  }
  if (!any) {
    // Wait on one unfinished choice; others are picked up on the next round.
    for (Choice& c : choices_) {
      if (c.done) continue;
      engine::RequestOutput o;
      const auto w = choices_.size() == 1 ? wait : std::min(wait, std::chrono::milliseconds(10));
      if (c.stream->pop(o, w) == engine::RequestStream::PopResult::kOutput) {
        for (const auto& e : stream_events(c, o))
          if (!send(e)) return false;
      } else if (std::chrono::steady_clock::now() - last_write_ > 1s) {
        // An SSE comment: clients ignore it, and it finds out whether the client is still there.
        if (!send(": keep-alive\n\n")) return false;
      }
      break;
    }
  }
  return true;
}

}  // namespace vllm::api
