// OpenAIServer: routes, auth, error mapping and the non-generation endpoints.
#include "api/server/openai_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <cstdio>
#include <ctime>

#include "api/llm.h"
#include "api/server/metrics.h"
#include "api/server/protocol.h"
#include "api/server/serving.h"
#include "api/version.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::api {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// httplib::Server with access to its listening socket, to raise the accept backlog (the
// library listens with a backlog of 5, too few for hundreds of clients connecting at once).
class HttpServer : public httplib::Server {
 public:
  void raise_backlog(int n) {
    const auto s = svr_sock_.load();
    if (s != INVALID_SOCKET) ::listen(s, n);
  }
};

constexpr const char* kJson = "application/json";

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void send_error(httplib::Response& res, int status, const std::string& msg,
                const std::string& param = {}) {
  res.status = status;
  res.set_content(dump(ApiError::error_body(status, msg, param)), kJson);
}

// Runs a handler, turning exceptions into OpenAI error responses.
template <typename F>
void guarded(httplib::Response& res, F&& f) {
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

}  // namespace

OpenAIServer::OpenAIServer(LLM& llm, ServerConfig cfg) : llm_(llm), cfg_(std::move(cfg)) {
  names_ = cfg_.served_model_names;
  if (names_.empty()) names_.push_back(llm_.model_path());
  if (!cfg_.reasoning_parser.empty() && cfg_.reasoning_parser != "qwen3")
    throw std::invalid_argument("--reasoning-parser: only 'qwen3' is supported, got '" +
                                cfg_.reasoning_parser + "'");
  metrics_ = std::make_unique<ServerMetrics>(names_.front());
  engine::AsyncEngineOptions opts;
  opts.max_waiting_requests = cfg_.max_waiting_requests;
  engine_ = std::make_unique<engine::AsyncEngine>(llm_.engine(), opts, metrics_.get());
  ctx_ = std::make_unique<ServingContext>(
      ServingContext{llm_, *engine_, names_.front(), cfg_.reasoning_parser == "qwen3"});
  http_ = std::make_unique<HttpServer>();
  install_routes();
}

OpenAIServer::~OpenAIServer() {
  stop();
  engine_->shutdown();
}

bool OpenAIServer::bind() {
  if (cfg_.port == 0) {
    port_ = http_->bind_to_any_port(cfg_.host);
    if (port_ <= 0) {
      std::fprintf(stderr, "error: cannot bind %s\n", cfg_.host.c_str());
      return false;
    }
  } else {
    if (!http_->bind_to_port(cfg_.host, cfg_.port)) {
      std::fprintf(stderr, "error: cannot bind %s:%d\n", cfg_.host.c_str(), cfg_.port);
      return false;
    }
    port_ = cfg_.port;
  }
  static_cast<HttpServer*>(http_.get())->raise_backlog(4096);
  return true;
}

void OpenAIServer::serve() { http_->listen_after_bind(); }

void OpenAIServer::stop() {
  if (http_) http_->stop();
}

bool OpenAIServer::authorized(const httplib::Request& req, httplib::Response& res) const {
  if (cfg_.api_key.empty() || req.path.rfind("/v1", 0) != 0) return true;
  if (req.get_header_value("Authorization") == "Bearer " + cfg_.api_key) return true;
  send_error(res, 401, "Unauthorized: a valid API key is required (Authorization: Bearer KEY)");
  return false;
}

void OpenAIServer::check_model(const std::optional<std::string>& model) const {
  if (!model) return;
  for (const auto& n : names_)
    if (n == *model) return;
  throw ApiError(404, "The model `" + *model + "` does not exist.", "model");
}

void OpenAIServer::handle_generate(const httplib::Request& req, httplib::Response& res, bool chat) {
  const ojson body = parse_body(req.body);
  const tok::Tokenizer& tk = llm_.tokenizer();
  std::vector<std::vector<int32_t>> prompts;
  std::vector<std::string> echo;
  std::shared_ptr<Generation> gen;
  bool stream = false;
  if (chat) {
    ChatRequest r = parse_chat_request(body);
    check_model(r.model);
    const std::string prompt = llm_.apply_chat_template(
        r.messages, r.tools, r.add_generation_prompt, r.chat_template_kwargs);
    // The template already holds the special tokens (vLLM: add_special_tokens=False).
    prompts.push_back(tk.encode(prompt, /*add_special_tokens=*/false));
    stream = r.stream;
    gen = Generation::start(*ctx_, Generation::Kind::kChat, r, std::move(prompts), {}, r.logprobs);
  } else {
    CompletionRequest r = parse_completion_request(body);
    check_model(r.model);
    for (const auto& t : r.prompt_texts) {
      prompts.push_back(tk.encode(t, /*add_special_tokens=*/true));
      if (r.echo) echo.push_back(t);
    }
    for (auto& ids : r.prompt_ids) {
      if (r.echo) {
        try {
          echo.push_back(tk.decode(ids, false));
        } catch (const std::exception& e) {
          throw bad_request(std::string("prompt: ") + e.what(), "prompt");
        }
      }
      prompts.push_back(std::move(ids));
    }
    stream = r.stream;
    gen = Generation::start(*ctx_, Generation::Kind::kCompletion, r, std::move(prompts),
                            std::move(echo), false);
  }
  if (!stream) {
    res.set_content(dump(gen->collect()), kJson);
    return;
  }
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [gen](size_t, httplib::DataSink& sink) {
        bool gone = false;
        auto write = [&](const std::string& s) {
          if (!sink.write(s.data(), s.size())) gone = true;
          return !gone;
        };
        if (gen->stream_step(write, 200ms)) return true;
        if (gone) return false;  // the client hung up: its requests are aborted
        sink.done();
        return true;
      },
      [gen](bool) { gen->abort_all(); });
}

void OpenAIServer::handle_tokenize(const httplib::Request& req, httplib::Response& res) {
  const TokenizeRequest r = parse_tokenize_request(parse_body(req.body));
  check_model(r.model);
  const tok::Tokenizer& tk = llm_.tokenizer();
  std::string text = r.prompt
                         ? *r.prompt
                         : llm_.apply_chat_template(r.messages, ojson(), r.add_generation_prompt,
                                                    r.chat_template_kwargs);
  const std::vector<int32_t> ids = tk.encode(text, r.add_special_tokens);
  json out = {{"count", ids.size()},
              {"max_model_len", engine_->config().max_model_len},
              {"tokens", ids},
              {"token_strs", nullptr}};
  if (r.return_token_strs) {
    json strs = json::array();
    for (int32_t id : ids) strs.push_back(tk.id_to_token(id));
    out["token_strs"] = strs;
  }
  res.set_content(dump(out), kJson);
}

void OpenAIServer::handle_detokenize(const httplib::Request& req, httplib::Response& res) {
  const DetokenizeRequest r = parse_detokenize_request(parse_body(req.body));
  check_model(r.model);
  std::string text;
  try {
    text = llm_.tokenizer().decode(r.tokens, false);
  } catch (const std::exception& e) {
    throw bad_request(e.what(), "tokens");
  }
  res.set_content(dump(json{{"prompt", text}}), kJson);
}

void OpenAIServer::install_routes() {
  auto& s = *http_;
  s.new_task_queue = [n = cfg_.http_threads] { return new httplib::ThreadPool(n); };
  s.set_payload_max_length(cfg_.max_body_bytes);
  s.set_keep_alive_max_count(1000);
  s.set_keep_alive_timeout(10);
  s.set_read_timeout(30);
  s.set_write_timeout(10);
  s.set_tcp_nodelay(true);

  // The key is checked inside each handler, after httplib has read the body: rejecting in a
  // pre-routing handler would leave the body on a keep-alive connection, to be misread as the
  // next request.
  // Statuses httplib sets on its own (no route, body too large, unparsable request) get an
  // OpenAI error body too.
  s.set_error_handler(
      httplib::Server::HandlerWithResponse([](const httplib::Request&, httplib::Response& res) {
        if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
        std::string msg = "error";
        if (res.status == 404) msg = "Not Found";
        if (res.status == 413) msg = "Request body too large";
        if (res.status == 400) msg = "Bad Request";
        if (res.status == 405) msg = "Method Not Allowed";
        send_error(res, res.status, msg);
        return httplib::Server::HandlerResponse::Handled;
      }));
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    send_error(res, 500, "internal server error");
  });

  s.Get("/health", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  s.Get("/ping", [](const httplib::Request&, httplib::Response& res) { res.status = 200; });
  s.Get("/version", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump(json{{"version", kVersion}}), kJson);
  });
  s.Get("/v1/models", [this](const httplib::Request& req, httplib::Response& res) {
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
    res.set_content(dump(json{{"object", "list"}, {"data", data}}), kJson);
  });
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_->render(engine_->metrics()), "text/plain; version=0.0.4");
  });
  s.Post("/v1/completions", [this](const httplib::Request& req, httplib::Response& res) {
    if (authorized(req, res)) guarded(res, [&] { handle_generate(req, res, false); });
  });
  s.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
    if (authorized(req, res)) guarded(res, [&] { handle_generate(req, res, true); });
  });
  s.Post("/tokenize", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { handle_tokenize(req, res); });
  });
  s.Post("/detokenize", [this](const httplib::Request& req, httplib::Response& res) {
    guarded(res, [&] { handle_detokenize(req, res); });
  });
}

}  // namespace vllm::api
