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

// JSON has no -inf; vLLM reports such logprobs as -9999.0.
double finite_logprob(float lp) { return std::isfinite(lp) ? lp : -9999.0; }

json byte_list(const std::string& s) {
  json b = json::array();
  for (unsigned char c : s) b.push_back(static_cast<int>(c));
  return b;
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
                       bool chat_logprobs)
    : ctx_(ctx),
      kind_(kind),
      id_(random_id(kind == Kind::kChat ? "chatcmpl-" : "cmpl-")),
      created_(static_cast<int64_t>(std::time(nullptr))),
      include_usage_(req.include_usage),
      continuous_usage_(req.continuous_usage_stats),
      chat_logprobs_(chat_logprobs),
      want_logprobs_(req.sampling.logprobs.has_value()),
      last_write_(std::chrono::steady_clock::now()) {}

std::shared_ptr<Generation> Generation::start(ServingContext& ctx, Kind kind,
                                              const GenerationRequest& req,
                                              std::vector<std::vector<int32_t>> prompts,
                                              std::vector<std::string> echo_texts,
                                              bool chat_logprobs) {
  auto g = std::shared_ptr<Generation>(new Generation(ctx, kind, req, chat_logprobs));
  g->echo_ = std::move(echo_texts);
  const engine::SamplingParams base = ctx.llm.with_model_stops(req.sampling);
  g->choices_.resize(prompts.size() * static_cast<size_t>(req.n));
  for (size_t p = 0; p < prompts.size(); ++p) {
    g->prompt_tokens_ += static_cast<int64_t>(prompts[p].size());
    for (int i = 0; i < req.n; ++i) {
      Choice& c = g->choices_[p * req.n + i];
      c.index = static_cast<int>(p * req.n + i);
      c.prompt_index = static_cast<int>(p);
      c.engine_id = g->id_ + "-" + std::to_string(c.index);
      if (p < g->echo_.size()) c.text_offset = g->echo_[p].size();
      engine::SamplingParams sp = base;
      // Children of one request get distinct, reproducible seeds (vLLM: seed + index).
      if (sp.seed && req.n > 1) sp.seed = *sp.seed + static_cast<uint64_t>(i);
      std::vector<int32_t> ids = prompts[p];
      try {
        c.stream = ctx.engine.add_request(c.engine_id, std::move(ids), sp);
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

std::string Generation::token_text(int32_t id) const {
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
  c.completion_tokens = std::max<int64_t>(c.completion_tokens, o.num_output_tokens);
  if (o.finished) {
    c.done = true;
    c.finish_reason = o.finish_reason;
    c.stop_reason = stop_reason_json(o.stop_reason);
    c.error = o.error;
  }
}

json Generation::usage() const {
  int64_t completion = 0;
  for (const Choice& c : choices_) completion += c.completion_tokens;
  return {{"prompt_tokens", prompt_tokens_},
          {"total_tokens", prompt_tokens_ + completion},
          {"completion_tokens", completion},
          {"prompt_tokens_details", nullptr}};
}

json Generation::completion_logprobs(Choice& c, const std::vector<engine::TokenLogprobs>& lps,
                                     const std::vector<int32_t>& ids) {
  json tokens = json::array(), token_lps = json::array(), tops = json::array(),
       offsets = json::array();
  for (size_t i = 0; i < lps.size(); ++i) {
    const auto& lp = lps[i];
    const int32_t id = lp.token_id >= 0 ? lp.token_id : (i < ids.size() ? ids[i] : -1);
    const std::string t = token_text(id);
    tokens.push_back(t);
    token_lps.push_back(finite_logprob(lp.logprob));
    json top = json::object();
    for (const auto& [tid, tlp] : lp.top) top[token_text(tid)] = finite_logprob(tlp);
    if (!top.contains(t)) top[t] = finite_logprob(lp.logprob);
    tops.push_back(std::move(top));
    offsets.push_back(c.text_offset);
    c.text_offset += t.size();
  }
  return {{"text_offset", offsets},
          {"token_logprobs", token_lps},
          {"tokens", tokens},
          {"top_logprobs", tops}};
}

json Generation::chat_logprobs(const std::vector<engine::TokenLogprobs>& lps) {
  json content = json::array();
  for (const auto& lp : lps) {
    const std::string t = token_text(lp.token_id);
    json top = json::array();
    for (const auto& [tid, tlp] : lp.top) {
      const std::string tt = token_text(tid);
      top.push_back({{"token", tt}, {"logprob", finite_logprob(tlp)}, {"bytes", byte_list(tt)}});
    }
    content.push_back({{"token", t},
                       {"logprob", finite_logprob(lp.logprob)},
                       {"bytes", byte_list(t)},
                       {"top_logprobs", top}});
  }
  return {{"content", content}};
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
  json choices = json::array();
  for (Choice& c : choices_) {
    if (kind_ == Kind::kCompletion) {
      const std::string& echo =
          c.prompt_index < static_cast<int>(echo_.size()) ? echo_[c.prompt_index] : std::string();
      json lp = want_logprobs_ ? completion_logprobs(c, c.logprobs, c.tokens) : json(nullptr);
      choices.push_back({{"index", c.index},
                         {"text", echo + c.text},
                         {"logprobs", lp},
                         {"finish_reason", c.finish_reason},
                         {"stop_reason", c.stop_reason},
                         {"prompt_logprobs", nullptr}});
    } else {
      json msg = {{"role", "assistant"}};
      if (ctx_.qwen3_reasoning) {
        ReasoningSplit s = split_reasoning(c.text);
        msg["content"] = s.content ? json(*s.content) : json(nullptr);
        msg["reasoning_content"] = s.reasoning ? json(*s.reasoning) : json(nullptr);
      } else {
        msg["content"] = c.text;
      }
      msg["tool_calls"] = json::array();
      choices.push_back({{"index", c.index},
                         {"message", msg},
                         {"logprobs", chat_logprobs_ ? chat_logprobs(c.logprobs) : json(nullptr)},
                         {"finish_reason", c.finish_reason},
                         {"stop_reason", c.stop_reason}});
    }
  }
  return {{"id", id_},
          {"object", kind_ == Kind::kChat ? "chat.completion" : "text_completion"},
          {"created", created_},
          {"model", ctx_.model_name},
          {"choices", choices},
          {"usage", usage()}};
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
  json choice = {{"index", c.index}};
  if (kind_ == Kind::kCompletion) {
    std::string text = delta;
    if (!c.sent_role) {  // first chunk of a completion carries the echoed prompt
      if (c.prompt_index < static_cast<int>(echo_.size())) text = echo_[c.prompt_index] + text;
      c.sent_role = true;
    }
    if (text.empty() && new_lps.empty() && !c.done) return ev;
    choice["text"] = text;
    choice["logprobs"] = want_logprobs_ ? completion_logprobs(c, new_lps, new_ids) : json(nullptr);
  } else {
    if (!c.sent_role) {
      json first = chunk_header();
      first["choices"] = json::array({{{"index", c.index},
                                       {"delta", {{"role", "assistant"}, {"content", ""}}},
                                       {"logprobs", nullptr},
                                       {"finish_reason", nullptr}}});
      ev.push_back(sse(first));
      c.sent_role = true;
    }
    json d = json::object();
    if (ctx_.qwen3_reasoning) {
      auto [r, t] = c.splitter.feed(delta);
      if (c.done) {
        auto [r2, t2] = c.splitter.finish();
        r += r2;
        t += t2;
      }
      if (!r.empty()) d["reasoning_content"] = r;
      if (!t.empty()) d["content"] = t;
    } else if (!delta.empty()) {
      d["content"] = delta;
    }
    if (d.empty() && new_lps.empty() && !c.done) return ev;
    choice["delta"] = d;
    choice["logprobs"] = chat_logprobs_ ? chat_logprobs(new_lps) : json(nullptr);
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
