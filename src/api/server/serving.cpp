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
      continuous_usage_(req.continuous_usage_stats),
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
  for (size_t p = 0; p < g->prompts_.size(); ++p) {
    g->prompt_tokens_ += static_cast<int64_t>(g->prompts_[p].ids.size());
    for (int i = 0; i < req.n; ++i) {
      Choice& c = g->choices_[p * req.n + i];
      c.index = static_cast<int>(p * req.n + i);
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
  }
}

json Generation::usage() const {
  int64_t completion = 0, cached = 0;
  for (const Choice& c : choices_) {
    completion += c.completion_tokens;
    // The prompt is counted once per prompt (as prompt_tokens is), from its first choice.
    if (c.index % n_ == 0) cached += c.cached_tokens;
  }
  return {{"prompt_tokens", prompt_tokens_},
          {"total_tokens", prompt_tokens_ + completion},
          {"completion_tokens", completion},
          {"prompt_tokens_details", {{"cached_tokens", cached}}}};
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

json Generation::chat_message(const Choice& c) const {
  json msg = {{"role", "assistant"}};
  if (ctx_.qwen3_reasoning) {
    ReasoningSplit s = split_reasoning(c.text);
    msg["content"] = s.content || !opts_.chat_echo.empty()
                         ? json(opts_.chat_echo + s.content.value_or(""))
                         : json(nullptr);
    msg["reasoning_content"] =
        s.reasoning && opts_.include_reasoning ? json(*s.reasoning) : json(nullptr);
  } else {
    msg["content"] = opts_.chat_echo + c.text;
  }
  msg["tool_calls"] = json::array();
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
    json choice = {
        {"index", c.index},
        {"message", chat_message(c)},
        {"logprobs", opts_.chat_logprobs ? chat_logprobs(c.logprobs, lbl) : json(nullptr)},
        {"finish_reason", c.finish_reason},
        {"stop_reason", c.stop_reason}};
    if (return_token_ids_) choice["token_ids"] = c.tokens;
    choices.push_back(std::move(choice));
  }
  json out = {{"id", id_},
              {"object", kind_ == Kind::kChat ? "chat.completion" : "text_completion"},
              {"created", created_},
              {"model", ctx_.model_name},
              {"choices", choices},
              {"usage", usage()}};
  if (kind_ == Kind::kChat) {
    out["prompt_logprobs"] =
        want_prompt_logprobs_ ? prompt_logprobs(choices_[0].prompt_logprobs, lbl) : json(nullptr);
    if (return_token_ids_) out["prompt_token_ids"] = prompts_[0].ids;
    if (opts_.prompt_text) out["prompt_text"] = *opts_.prompt_text;
  }
  return out;
}

json Generation::chunk_header() const {
  return {{"id", id_},
          {"object", kind_ == Kind::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", created_},
          {"model", ctx_.model_name}};
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
                                      {"delta", {{"role", "assistant"}, {"content", ""}}},
                                      {"logprobs", nullptr},
                                      {"finish_reason", nullptr}}});
      if (return_token_ids_) head["prompt_token_ids"] = prompts_[c.prompt_index].ids;
      ev.push_back(sse(head));
      if (!opts_.chat_echo.empty()) {
        json echo = chunk_header();
        echo["choices"] = json::array({{{"index", c.index},
                                        {"delta", {{"content", opts_.chat_echo}}},
                                        {"logprobs", nullptr},
                                        {"finish_reason", nullptr}}});
        ev.push_back(sse(echo));
      }
    }
    json d = json::object();
    if (ctx_.qwen3_reasoning) {
      auto [r, t] = c.splitter.feed(delta);
      if (c.done) {
        auto [r2, t2] = c.splitter.finish();
        r += r2;
        t += t2;
      }
      if (!r.empty() && opts_.include_reasoning) d["reasoning_content"] = r;
      if (!t.empty()) d["content"] = t;
    } else if (!delta.empty()) {
      d["content"] = delta;
    }
    if (d.empty() && new_lps.empty() && !c.done) return ev;
    choice["delta"] = d;
    choice["logprobs"] = opts_.chat_logprobs ? chat_logprobs(new_lps, lbl) : json(nullptr);
    if (return_token_ids_) choice["token_ids"] = new_ids;
  }
  choice["finish_reason"] = c.done ? json(c.finish_reason) : json(nullptr);
  if (c.done) choice["stop_reason"] = c.stop_reason;
  json chunk = chunk_header();
  chunk["choices"] = json::array({choice});
  if (include_usage_ && continuous_usage_) {
    const int64_t comp = c.completion_tokens;
    chunk["usage"] = {{"prompt_tokens", prompt_tokens_},
                      {"completion_tokens", comp},
                      {"total_tokens", prompt_tokens_ + comp}};
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
