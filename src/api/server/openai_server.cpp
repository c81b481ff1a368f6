#include "api/server/openai_server.h"

#include <cstdio>
#include <ctime>

#include "api/llm.h"
#include "api/server/anthropic_api.h"
#include "api/server/embeddings.h"
#include "api/server/harmony_parser.h"
#include "api/server/http_server.h"
#include "api/server/metrics.h"
#include "api/server/protocol.h"
#include "api/server/request_inputs.h"
#include "api/server/responses_background.h"
#include "api/server/responses_store.h"
#include "api/server/server_replies.h"
#include "api/server/serving.h"
#include "api/server/tool_parsers.h"
#include "api/version.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::api {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

constexpr const char* kJson = "application/json";

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_error(http::Response& res, int status, const std::string& msg,
                const std::string& param = {}) {
  res.status = status;
  res.content_type = kJson;
  res.body = dump(ApiError::error_body(status, msg, param));
}

// Runs a handler, turning exceptions into OpenAI error responses.
template <typename F>
void guarded(http::Response& res, F&& f) {
  try {
    f();
  } catch (const ApiError& e) {
    send_error(res, e.status(), e.what(), e.param());
  } catch (const tok::ChatTemplateError& e) {
    send_error(res, 400, std::string("chat template: ") + e.what());
  } catch (const std::invalid_argument& e) {
    send_error(res, 400, e.what());
  } catch (const std::exception& e) {
    send_error(res, 500, std::string("internal error: ") + e.what());
  }
}

// guarded() for Anthropic's routes: the same statuses with Anthropic's error body.
template <typename F>
void guarded_anthropic(http::Response& res, F&& f) {
  auto fail = [&](int status, const std::string& msg) {
    res.status = status;
    res.content_type = kJson;
    res.body = dump(anthropic_error_body(status, msg));
  };
  try {
    f();
  } catch (const ApiError& e) {
    fail(e.status(), e.what());
  } catch (const tok::ChatTemplateError& e) {
    fail(400, std::string("chat template: ") + e.what());
  } catch (const std::invalid_argument& e) {
    fail(400, e.what());
  } catch (const std::exception& e) {
    fail(500, std::string("internal error: ") + e.what());
  }
}

// Compares without an early exit, so the time taken says nothing about the key.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= a[i] ^ (i < b.size() ? b[i] : 0);
  return diff == 0;
}

// One request counted in /load's server_load while it lives.
struct LoadCount {
  explicit LoadCount(std::shared_ptr<std::atomic<int64_t>> n) : n(std::move(n)) { ++*this->n; }
  ~LoadCount() { --*n; }
  std::shared_ptr<std::atomic<int64_t>> n;
};

}  // namespace

void send_json(http::Response& res, const json& j) {
  res.content_type = kJson;
  res.body = dump(j);
}

void start_sse(http::Response& res) {
  res.content_type = "text/event-stream";
  res.headers.emplace_back("Cache-Control", "no-cache");
}

void check_parsers(const ServerConfig& cfg, const std::string& architecture) {
  const bool harmony = is_harmony_architecture(architecture);
  const std::string& rp = cfg.reasoning_parser;
  if (!rp.empty() && rp != "openai_gptoss" && !reasoning_parser_by_name(rp))
    throw std::invalid_argument("--reasoning-parser: '" + rp +
                                "' is not implemented here; choose one of " +
                                reasoning_parser_names());
  // As vLLM: gpt-oss output is harmony, read by openai_gptoss (its default there) and nothing
  // else; harmony parsers do not read other models' output.
  if (rp == "openai_gptoss" && !harmony)
    throw std::invalid_argument(
        "--reasoning-parser openai_gptoss reads gpt-oss (harmony) output, "
        "but the model is " +
        architecture + ", not GptOssForCausalLM");
  if (reasoning_parser_by_name(rp) && harmony)
    throw std::invalid_argument("--reasoning-parser " + rp +
                                ": gpt-oss models write harmony; use "
                                "openai_gptoss (the default for them)");
  const std::string& tp = cfg.tool_call_parser;
  const std::optional<ToolParserKind> kind = tp.empty() ? std::nullopt : tool_parser_by_name(tp);
  if (!tp.empty() && !kind)
    throw std::invalid_argument("--tool-call-parser: '" + tp +
                                "' is not implemented here; choose one of " + tool_parser_names());
  if (kind == ToolParserKind::kOpenAI && !harmony)
    throw std::invalid_argument(
        "--tool-call-parser openai reads gpt-oss (harmony) tool calls, "
        "but the model is " +
        architecture + ", not GptOssForCausalLM");
  if (kind && kind != ToolParserKind::kOpenAI && harmony)
    throw std::invalid_argument("--tool-call-parser " + tp +
                                ": gpt-oss models write harmony tool calls; use openai");
}

OpenAIServer::OpenAIServer(LLM& llm, ServerConfig cfg) : llm_(llm), cfg_(std::move(cfg)) {
  if (cfg_.responses_store) {
    responses_store_ = std::make_unique<ResponsesStore>();
    background_ = std::make_unique<BackgroundResponses>();
  }
  names_ = cfg_.served_model_names;
  if (names_.empty()) names_.push_back(llm_.model_path());
  check_parsers(cfg_, llm_.model().config().architecture);
  // As vLLM's start-up checks: its DeepSeek tool parsers need the calls' special tokens.
  if (auto k = tool_parser_by_name(cfg_.tool_call_parser);
      k == ToolParserKind::kDeepseekV3 || k == ToolParserKind::kDeepseekV31) {
    const tok::Tokenizer& t = llm_.tokenizer();
    if (!t.token_to_id("<｜tool▁calls▁begin｜>") || !t.token_to_id("<｜tool▁calls▁end｜>"))
      throw std::invalid_argument("--tool-call-parser " + cfg_.tool_call_parser +
                                  " cannot be used with this model: its vocabulary has no "
                                  "<｜tool▁calls▁begin｜> / <｜tool▁calls▁end｜> tokens");
  }
  // As vLLM's start-up check: its deepseek_r1 parser cannot be built without both tags.
  if (reasoning_parser_by_name(cfg_.reasoning_parser) == ReasoningParserKind::kDeepseekR1) {
    const ThinkTags t = think_tags(llm_.tokenizer());
    if (!t.start || !t.end)
      throw std::invalid_argument(
          "--reasoning-parser deepseek_r1 cannot be used with this model: its vocabulary has no "
          "<think> / </think> tokens");
  }
  // vLLM's olmo3 parser looks up the tokens of "</think>" ("</" or "\u0120</", "think", ">").
  if (reasoning_parser_by_name(cfg_.reasoning_parser) == ReasoningParserKind::kOlmo3 &&
      think_tags(llm_.tokenizer(), ReasoningParserKind::kOlmo3).end_rest.empty())
    throw std::invalid_argument(
        "--reasoning-parser olmo3 cannot be used with this model: its vocabulary lacks one of "
        "the tokens \"</\", \"\u0120</\", \"think\", \">\" that Olmo 3's </think> is written "
        "with");
  // vLLM's --tool-strict-level floors the structural tags of the parsers that have one (every
  // such parser's tag is built here) and means nothing elsewhere.
  if (!cfg_.tool_strict_level.empty() && !tool_strict_level_by_name(cfg_.tool_strict_level))
    throw std::invalid_argument("--tool-strict-level: '" + cfg_.tool_strict_level +
                                "' is not one of auto, function, parameter");
  if (cfg_.enable_auto_tool_choice && cfg_.tool_call_parser.empty())
    throw std::invalid_argument("--enable-auto-tool-choice requires --tool-call-parser (one of " +
                                std::string(tool_parser_names()) + ")");
  metrics_ = std::make_unique<ServerMetrics>(names_.front());
  if (const int32_t max_loras = llm_.engine().config().max_loras; max_loras > 0) {
    std::vector<std::string> lora_names(1);
    for (const auto& l : llm_.lora_modules()) {
      if (static_cast<int32_t>(lora_names.size()) <= l.id) lora_names.resize(l.id + 1);
      lora_names[l.id] = l.name;
    }
    metrics_->enable_lora_info(max_loras, std::move(lora_names));
  }
  engine::AsyncEngineOptions opts;
  opts.max_waiting_requests = cfg_.max_waiting_requests;
  opts.max_num_queued_reqs = cfg_.max_num_queued_reqs;
  opts.max_num_queued_tokens = cfg_.max_num_queued_tokens;
  engine_ = std::make_unique<engine::AsyncEngine>(llm_.engine(), opts, metrics_.get());
  ctx_ = std::make_unique<ServingContext>(ServingContext{
      llm_, *engine_, names_.front(), reasoning_parser_by_name(cfg_.reasoning_parser),
      cfg_.log_outputs, cfg_.max_log_len});
  ctx_->harmony = is_harmony_architecture(llm_.model().config().architecture);
  ctx_->system_fingerprint = system_fingerprint();
  http::Options ho;
  ho.host = cfg_.host;
  ho.port = cfg_.port;
  ho.max_body_bytes = cfg_.max_body_bytes;
  ho.request_timeout_s = cfg_.request_timeout_s;
  ho.allowed_origins = cfg_.allowed_origins;
  ho.allowed_methods = cfg_.allowed_methods;
  ho.allowed_headers = cfg_.allowed_headers;
  ho.allow_credentials = cfg_.allow_credentials;
  ho.tls_key_pem = cfg_.tls_key_pem;
  ho.tls_cert_pem = cfg_.tls_cert_pem;
  if (cfg_.request_id_headers) ho.new_request_id = [] { return random_id(""); };
  ho.root_path = cfg_.root_path;
  ho.unix_socket = cfg_.unix_socket;
  http_ =
      std::make_unique<http::Server>(ho, [](int status, const std::string& msg,
                                            http::Response& res) { send_error(res, status, msg); });
  install_routes();
}

OpenAIServer::~OpenAIServer() { stop(); }

// vLLM's "vllm-VERSION-HASH8", HASH8 the start of a hash of what decides the computation
// (vLLM: VllmConfig.compute_hash): here the model file, its architecture, the KV cache's type,
// block size and length, and the weight products' activation rounding. FNV-1a, so the same
// server configuration gives the same fingerprint in every build.
std::optional<std::string> OpenAIServer::system_fingerprint() const {
  if (cfg_.fingerprint_mode == "none") return std::nullopt;
  if (cfg_.fingerprint_mode == "custom") return cfg_.fingerprint_value;
  const engine::EngineConfig& ec = engine_->config();
  std::string key = std::string(kVersion) + '\n' + llm_.model_path() + '\n' +
                    llm_.model().config().architecture + '\n' +
                    std::string(vt::dtype_name(ec.kv_cache_dtype.value_or(vt::DType::F32))) + '\n' +
                    std::to_string(ec.block_size) + '\n' + std::to_string(ec.max_model_len) + '\n' +
                    std::to_string(ec.bf16_activations.value_or(true));
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : key) h = (h ^ ch) * 0x100000001b3ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return "vllm.cpp-" + std::string(kVersion) + "-" + std::string(hex, 8);
}

bool OpenAIServer::bind() {
  if (!http_->bind()) return false;
  port_ = http_->port();
  return true;
}

void OpenAIServer::serve() { http_->wait(); }

void OpenAIServer::stop(bool graceful) {
  std::call_once(stopped_, [this, graceful] {
    http_->stop_accepting();
    if (graceful && cfg_.shutdown_timeout_s > 0) {
      const int64_t n = engine_->num_unfinished();
      if (n > 0)
        std::fprintf(stderr,
                     "vllm.cpp: draining %lld in-flight requests (--shutdown-timeout %d s)\n",
                     static_cast<long long>(n), cfg_.shutdown_timeout_s);
      const int64_t left = engine_->drain(std::chrono::seconds(cfg_.shutdown_timeout_s));
      if (left > 0)
        std::fprintf(stderr, "vllm.cpp: aborting %lld requests still running at the timeout\n",
                     static_cast<long long>(left));
    }
    engine_->shutdown();                         // closes every stream, so every handler returns
    if (background_) background_->cancel_all();  // their threads end too, and their replays
    http_->drain();
  });
}

// vLLM checks the key on /v1/* only. Here /tokenize, /detokenize and /metrics need it too:
// the first two do work for whoever calls them, and /metrics tells about the traffic. /health,
// /ping and /version stay open for load balancers.
bool OpenAIServer::authorized(const http::Request& req, http::Response& res) const {
  if (cfg_.api_keys.empty()) return true;
  const std::string given = req.header("authorization");
  bool ok = false;
  for (const auto& key : cfg_.api_keys) ok |= same_secret(given, "Bearer " + key);
  if (ok) return true;
  send_error(res, 401, "Unauthorized: a valid API key is required (Authorization: Bearer KEY)");
  return false;
}

int32_t OpenAIServer::check_model(const std::optional<std::string>& model) const {
  if (!model) return 0;
  for (const auto& n : names_)
    if (n == *model) return 0;
  if (const LLM::LoraModule* l = llm_.lora_by_name(*model)) return l->id;
  throw ApiError(404, "The model `" + *model + "` does not exist.", "model");
}

void OpenAIServer::log_request(const char* kind, const GenerationRequest& r, size_t n_prompts,
                               size_t n_prompt_tokens) const {
  if (cfg_.debug_log && !r.ignored_fields.empty()) {
    std::string names;
    for (const auto& f : r.ignored_fields) names += (names.empty() ? "" : ", ") + f;
    std::fprintf(stderr, "DEBUG vllm.cpp: %s request: fields ignored (unknown): %s\n", kind,
                 names.c_str());
  }
  if (cfg_.debug_log)
    for (const auto& n : r.debug_notes)
      std::fprintf(stderr, "DEBUG vllm.cpp: %s request: %s\n", kind, n.c_str());
  if (!cfg_.log_requests) return;
  const auto& s = r.sampling;
  std::fprintf(stderr,
               "INFO vllm.cpp: %s request: %zu prompt(s), %zu prompt tokens, n=%d, "
               "max_tokens=%s, temperature=%g, top_p=%g, top_k=%d, stream=%d, priority=%lld\n",
               kind, n_prompts, n_prompt_tokens, r.n,
               s.max_tokens ? std::to_string(*s.max_tokens).c_str() : "auto", s.temperature,
               s.top_p, s.top_k, r.stream, static_cast<long long>(r.priority));
}

InputOptions OpenAIServer::input_options() const {
  InputOptions io;
  io.max_model_len = engine_->config().max_model_len;
  io.trust_request_chat_template = cfg_.trust_request_chat_template;
  io.reasoning_parser = reasoning_parser_by_name(cfg_.reasoning_parser);
  io.harmony = ctx_->harmony;
  io.response_role = cfg_.response_role;
  io.exclude_tools_when_tool_choice_none = cfg_.exclude_tools_when_tool_choice_none;
  io.grammar_in_reasoning = cfg_.structured_outputs_in_reasoning;
  if (cfg_.enable_auto_tool_choice)
    io.auto_tool_parser = tool_parser_by_name(cfg_.tool_call_parser);
  if (!cfg_.tool_strict_level.empty())
    io.tool_strict_level = *tool_strict_level_by_name(cfg_.tool_strict_level);
  else if (io.auto_tool_parser)
    io.tool_strict_level = default_tool_strict_level(*io.auto_tool_parser);
  return io;
}

std::shared_ptr<Generation> OpenAIServer::start_generation(
    const ojson& body, const std::string& header_id, bool chat,
    const std::vector<std::string>& also_ignored, bool* stream) {
  const InputOptions io = input_options();
  auto count = [](const PreparedInputs& in) {
    size_t n = 0;
    for (const auto& p : in.prompts) n += p.ids.size();
    return n;
  };
  auto check_priority = [this](const GenerationRequest& r) {
    if (r.priority != 0 &&
        engine_->config().scheduling_policy != engine::SchedulingPolicy::kPriority)
      throw bad_request("Got priority " + std::to_string(r.priority) +
                            " but priority scheduling is not enabled (start the server with "
                            "--scheduling-policy priority)",
                        "priority");
  };
  // As vLLM: a client's X-Request-Id header names the completion (over the body's request_id).
  if (chat) {
    ChatRequest r = parse_chat_request(body, cfg_.parse);
    if (!header_id.empty()) r.request_id = header_id;
    r.ignored_fields.insert(r.ignored_fields.end(), also_ignored.begin(), also_ignored.end());
    r.sampling.lora_id = check_model(r.model);
    check_priority(r);
    PreparedInputs in = prepare_chat(llm_, r, io);
    if (r.sampling.lora_id) in.options.model_name = *r.model;
    log_request("chat", r, in.prompts.size(), count(in));
    *stream = r.stream;
    return Generation::start(*ctx_, Generation::Kind::kChat, r, std::move(in.prompts),
                             std::move(in.options));
  }
  CompletionRequest r = parse_completion_request(body, cfg_.parse);
  if (!header_id.empty()) r.request_id = header_id;
  r.sampling.lora_id = check_model(r.model);
  check_priority(r);
  PreparedInputs in = prepare_completion(llm_, r, io);
  if (r.sampling.lora_id) in.options.model_name = *r.model;
  log_request("completion", r, in.prompts.size(), count(in));
  *stream = r.stream;
  return Generation::start(*ctx_, Generation::Kind::kCompletion, r, std::move(in.prompts),
                           std::move(in.options));
}

void stream_generation(http::Response& res, std::shared_ptr<Generation> gen,
                       std::function<std::vector<std::string>(const std::string&)> translate,
                       std::vector<std::string> first) {
  start_sse(res);
  res.stream = [gen, translate = std::move(translate),
                first = std::move(first)](http::StreamWriter& w) {
    for (const auto& e : first)
      if (!w.write(e)) return gen->abort_all();
    auto write = [&](const std::string& s) {
      if (!translate) return w.write(s);
      for (const auto& e : translate(s))
        if (!w.write(e)) return false;
      return true;
    };
    while (gen->stream_step(write, 200ms)) {
    }
    gen->abort_all();  // a no-op unless the client went away
  };
}

void OpenAIServer::handle_completions(const http::Request& req, http::Response& res) {
  handle_generate(req, res, false);
}

void OpenAIServer::handle_chat(const http::Request& req, http::Response& res) {
  handle_generate(req, res, true);
}

void OpenAIServer::handle_generate(const http::Request& req, http::Response& res, bool chat) {
  bool stream = false;
  std::shared_ptr<Generation> gen =
      start_generation(parse_body(req.body), req.header("x-request-id"), chat, {}, &stream);
  if (!stream) {
    // The client may hang up while its requests run; then they are aborted, not finished.
    send_json(res, gen->collect([&req] { return req.client_gone(); }));
    return;
  }
  stream_generation(res, std::move(gen));
}

// /v1/messages: the chat request it translates to (anthropic_api.h), its completion or stream
// translated back.
void OpenAIServer::handle_messages(const http::Request& req, http::Response& res) {
  const AnthropicCall call = anthropic_to_chat(parse_body(req.body));
  bool stream = false;
  std::shared_ptr<Generation> gen =
      start_generation(call.chat, req.header("x-request-id"), true, call.ignored, &stream);
  if (!stream) {
    send_json(res, message_from_chat(gen->collect([&req] { return req.client_gone(); })));
    return;
  }
  auto as = std::make_shared<AnthropicStream>();
  stream_generation(res, std::move(gen), [as](const std::string& s) { return as->feed(s); });
}

// /v1/messages/count_tokens: the rendered prompt's tokens, as vLLM counts them.
void OpenAIServer::handle_count_tokens(const http::Request& req, http::Response& res) {
  const AnthropicCall call = anthropic_to_chat(parse_body(req.body), true);
  ChatRequest r = parse_chat_request(call.chat, cfg_.parse);
  check_model(r.model);
  const PreparedInputs in = prepare_chat(llm_, r, input_options());
  size_t n = 0;
  for (const auto& p : in.prompts) n += p.ids.size();
  send_json(res, json{{"input_tokens", n}, {"context_management", {{"original_input_tokens", n}}}});
}

void OpenAIServer::handle_tokenize(const http::Request& req, http::Response& res) {
  const TokenizeRequest r = parse_tokenize_request(parse_body(req.body), cfg_.parse);
  check_model(r.model);
  const tok::Tokenizer& tk = llm_.tokenizer();
  std::string text = r.prompt
                         ? *r.prompt
                         : llm_.apply_chat_template(r.messages, ojson(), r.add_generation_prompt,
                                                    r.chat_template_kwargs);
  const std::vector<int32_t> ids =
      encode_prompt(llm_, text, r.add_special_tokens, engine_->config().max_model_len,
                    r.prompt ? "prompt" : "messages");
  json out = {{"count", ids.size()},
              {"max_model_len", engine_->config().max_model_len},
              {"tokens", ids},
              {"token_strs", nullptr}};
  if (r.return_token_strs) {
    json strs = json::array();
    for (int32_t id : ids) strs.push_back(tk.id_to_token(id));
    out["token_strs"] = strs;
  }
  send_json(res, out);
}

void OpenAIServer::handle_detokenize(const http::Request& req, http::Response& res) {
  const DetokenizeRequest r = parse_detokenize_request(parse_body(req.body));
  check_model(r.model);
  std::string text;
  try {
    text = llm_.decode(r.tokens, false);
  } catch (const std::exception& e) {
    throw bad_request(e.what(), "tokens");
  }
  send_json(res, json{{"prompt", text}});
}

void OpenAIServer::install_routes() {
  http::Server& s = *http_;
  using Req = const http::Request&;
  using Res = http::Response&;
  // Cheap, never-blocking routes run on the polling threads, so they answer however busy the
  // workers are.
  constexpr bool kInline = true;
  s.route(
      "GET", "/health", [](Req, Res res) { res.content_type.clear(); }, kInline);
  s.route(
      "GET", "/ping", [](Req, Res res) { res.content_type.clear(); }, kInline);
  s.route(
      "POST", "/ping", [](Req, Res res) { res.content_type.clear(); }, kInline);
  s.route(
      "GET", "/version",
      [](Req, Res res) {
        send_json(res, json{{"version", kVersion}});
      },
      kInline);
  s.route(
      "GET", "/v1/models",
      [this](Req req, Res res) {
        if (!authorized(req, res)) return;
        json data = json::array();
        const int64_t created = static_cast<int64_t>(std::time(nullptr));
        for (const auto& n : names_)
          data.push_back({{"id", n},
                          {"object", "model"},
                          {"created", created},
                          {"owned_by", "vllm"},
                          {"root", llm_.model_path()},
                          {"parent", nullptr},
                          {"max_model_len", engine_->config().max_model_len}});
        // vLLM's adapter cards: root the adapter's path, parent its base model.
        for (const auto& l : llm_.lora_modules())
          data.push_back(
              {{"id", l.name},
               {"object", "model"},
               {"created", created},
               {"owned_by", "vllm"},
               {"root", l.path},
               {"parent", l.base_model_name.empty() ? names_.front() : l.base_model_name},
               {"max_model_len", nullptr}});
        send_json(res, json{{"object", "list"}, {"data", data}});
      },
      kInline);
  s.route(
      "GET", "/metrics",
      [this](Req req, Res res) {
        if (!authorized(req, res)) return;
        res.content_type = "text/plain; version=0.0.4";
        res.body = metrics_->render(engine_->metrics());
      },
      kInline);
  // vLLM's /load: the generation requests being handled, counted only with
  // --enable-server-load-tracking (else always 0).
  s.route(
      "GET", "/load",
      [this](Req, Res res) {
        send_json(res, json{{"server_load", load_->load()}});
      },
      kInline);
  // Generation routes: the API key checked, the request counted for /load while it runs (a
  // stream until its last chunk), exceptions turned into `guard`'s error bodies.
  // A pooling model serves its task's routes (embeddings, score) and no generation route; a
  // generation model the reverse (vLLM registers the routes of the model's tasks only).
  auto generation = [this, &s](const char* path, auto handler, auto guard) {
    s.route("POST", path, [this, handler, guard, path](Req req, Res res) {
      if (!authorized(req, res)) return;
      if (auto refused = route_refusal(path, cfg_.pooling ? &*cfg_.pooling : nullptr)) {
        guard(res, [&] { throw *refused; });
        return;
      }
      std::shared_ptr<LoadCount> counted;
      if (cfg_.server_load_tracking) counted = std::make_shared<LoadCount>(load_);
      guard(res, [&] { (this->*handler)(req, res); });
      if (counted && res.stream)
        res.stream = [counted, inner = std::move(res.stream)](http::StreamWriter& w) { inner(w); };
    });
  };
  auto openai = [](Res res, auto f) { guarded(res, f); };
  generation("/v1/completions", &OpenAIServer::handle_completions, openai);
  generation("/v1/chat/completions", &OpenAIServer::handle_chat, openai);
  generation("/v1/responses", &OpenAIServer::handle_responses, openai);
  generation("/v1/messages", &OpenAIServer::handle_messages,
             [](Res res, auto f) { guarded_anthropic(res, f); });
  generation("/v1/embeddings", &OpenAIServer::handle_embeddings_api, openai);
  generation("/pooling", &OpenAIServer::handle_pooling_api, openai);
  generation("/classify", &OpenAIServer::handle_classify_api, openai);
  for (const char* p : {"/score", "/v1/score"})
    generation(p, &OpenAIServer::handle_score_api, openai);
  for (const char* p : {"/rerank", "/v1/rerank", "/v2/rerank"})
    generation(p, &OpenAIServer::handle_rerank_api, openai);
  // GET /v1/responses/{id} (?stream=true&starting_after=N), POST /v1/responses/{id}/cancel:
  // the store's (VLLM_ENABLE_RESPONSES_API_STORE=1), else 404.
  s.route("GET", "/v1/responses/*", [this](Req req, Res res) {
    if (authorized(req, res)) guarded(res, [&] { handle_get_response(req, res); });
  });
  s.route("POST", "/v1/responses/*/cancel", [this](Req req, Res res) {
    if (authorized(req, res)) guarded(res, [&] { handle_cancel_response(req, res); });
  });
  s.route("POST", "/v1/messages/count_tokens", [this](Req req, Res res) {
    if (authorized(req, res)) guarded_anthropic(res, [&] { handle_count_tokens(req, res); });
  });
  s.route("POST", "/tokenize", [this](Req req, Res res) {
    if (authorized(req, res)) guarded(res, [&] { handle_tokenize(req, res); });
  });
  s.route("POST", "/detokenize", [this](Req req, Res res) {
    if (authorized(req, res)) guarded(res, [&] { handle_detokenize(req, res); });
  });
}

}  // namespace vllm::api
