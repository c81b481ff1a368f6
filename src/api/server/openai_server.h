// OpenAIServer: the HTTP front of `vllm serve` (cpp-httplib). Routes the OpenAI endpoints,
// /health, /version, /tokenize, /detokenize and /metrics; checks the API key and served model
// name; maps errors to OpenAI error JSON. Handlers run on httplib's worker threads and only
// talk to the engine through AsyncEngine.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/async_engine.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace vllm::api {

class LLM;
class ServerMetrics;
struct ServingContext;

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8000;                              // 0: any free port (see OpenAIServer::port())
  std::vector<std::string> served_model_names;  // first is the one reported; empty: model path
  std::string api_key;                          // empty: no authentication
  std::string reasoning_parser;                 // "" or "qwen3"
  size_t max_body_bytes = size_t{8} << 20;      // larger bodies get 413
  int http_threads = 512;               // connections served at once (streams hold one each)
  int64_t max_waiting_requests = 1024;  // beyond this, 503
};

class OpenAIServer {
 public:
  // Starts the engine thread over llm.engine(); `llm` must outlive the server.
  OpenAIServer(LLM& llm, ServerConfig cfg);
  ~OpenAIServer();

  // Binds the socket; false (with a message on stderr) when the address is taken.
  bool bind();
  int port() const { return port_; }
  // Serves until stop() (from another thread or a signal handler thread).
  void serve();
  void stop();

  engine::AsyncEngine& engine() { return *engine_; }
  const std::string& model_name() const { return names_.front(); }

 private:
  void install_routes();
  bool authorized(const httplib::Request& req, httplib::Response& res) const;
  void check_model(const std::optional<std::string>& model) const;
  void handle_generate(const httplib::Request& req, httplib::Response& res, bool chat);
  void handle_tokenize(const httplib::Request& req, httplib::Response& res);
  void handle_detokenize(const httplib::Request& req, httplib::Response& res);

  LLM& llm_;
  ServerConfig cfg_;
  std::vector<std::string> names_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<engine::AsyncEngine> engine_;
  std::unique_ptr<ServingContext> ctx_;
  std::unique_ptr<httplib::Server> http_;
  int port_ = 0;
};

}  // namespace vllm::api
