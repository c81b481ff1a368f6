// OpenAIServer: the OpenAI API of `vllm serve` over the connection layer in http_server.h.
// Routes the OpenAI endpoints, /health, /version, /tokenize, /detokenize and /metrics; checks
// the API key and served model name; maps errors to OpenAI error JSON. Generation handlers run
// on the HTTP layer's workers and only talk to the engine through AsyncEngine; a client that
// hangs up has its requests aborted, streaming or not.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "api/pooler_config.h"
#include "api/server/embeddings.h"
#include "api/server/protocol.h"
#include "engine/async_engine.h"

namespace vllm::api::http {
class Server;
struct Request;
struct Response;
}  // namespace vllm::api::http

namespace vllm::api {

class Generation;
class ResponsesStore;
class BackgroundResponses;
struct InputOptions;

class LLM;
class ServerMetrics;
struct ServingContext;

struct ServerConfig {
  std::string host = "127.0.0.1";
  int port = 8000;                              // 0: any free port (see OpenAIServer::port())
  std::vector<std::string> served_model_names;  // first is the one reported; empty: model path
  std::vector<std::string> api_keys;            // any of them authenticates; none: open
  std::string reasoning_parser;  // "", or a name reasoning_parser_by_name knows, or openai_gptoss
  bool enable_auto_tool_choice = false;     // tool_choice "auto" parses tool calls ...
  std::string tool_call_parser;             // ... with this parser (tool_parsers.h)
  std::string tool_strict_level;            // --tool-strict-level: "", auto, function, parameter
  size_t max_body_bytes = size_t{8} << 20;  // larger bodies get 413 (chunked too)
  int request_timeout_s = 30;               // a whole request must arrive within this
  int64_t max_waiting_requests = 1024;      // beyond this, 503
  // vLLM's admission limits (--max-num-queued-reqs / --max-num-queued-tokens): 503 beyond.
  std::optional<int64_t> max_num_queued_reqs, max_num_queued_tokens;
  // --fingerprint-mode full / hash (both vllm.cpp-VERSION-HASH8 here: there is no parallelism
  // to name), custom (fingerprint_value) or none.
  std::string fingerprint_mode = "full";
  std::optional<std::string> fingerprint_value;
  // --shutdown-timeout: seconds stop(true) lets the requests already taken finish (0: abort).
  int shutdown_timeout_s = 0;
  // CORS (vLLM's defaults: any origin, method and header, no credentials); empty origins: no
  // CORS headers at all.
  std::vector<std::string> allowed_origins = {"*"};
  std::vector<std::string> allowed_methods = {"*"};
  std::vector<std::string> allowed_headers = {"*"};
  bool allow_credentials = false;
  // TLS: PEM text of the key and certificate (both or neither).
  std::string tls_key_pem, tls_cert_pem;
  // Request parsing: --max-logprobs and the generation_config.json defaults.
  ParseOptions parse;
  bool trust_request_chat_template = false;  // a request may bring its own chat_template
  // --chat-template was given: a cross-encoder's score API renders each (query, document) pair
  // through it (vLLM applies no template it was not given).
  bool chat_template_given = false;
  std::string response_role = "assistant";  // --response-role
  bool log_requests = false;                // --enable-log-requests: one line per request
  bool log_outputs = false;                 // --enable-log-outputs: one line per finished choice
  int64_t max_log_len = -1;           // --max-log-len: logged output text cut to this (-1: whole)
  bool debug_log = false;             // debug lines (ignored request fields, ...)
  bool request_id_headers = false;    // --enable-request-id-headers: X-Request-Id
  bool server_load_tracking = false;  // --enable-server-load-tracking: /load counts requests
  std::string root_path;              // --root-path: a prefix proxies may leave on paths
  std::string unix_socket;            // --uds: listen here instead of host:port
  bool exclude_tools_when_tool_choice_none = false;  // --exclude-tools-when-tool-choice-none
  // --structured-outputs-config enable_in_reasoning: grammars apply from the first token.
  bool structured_outputs_in_reasoning = false;
  // VLLM_ENABLE_RESPONSES_API_STORE=1: /v1/responses keeps responses in memory for
  // previous_response_id and GET /v1/responses/{id} (vLLM's opt-in store).
  bool responses_store = false;
  // A pooling model (--runner pooling, or a Sentence Transformers folder; pooler_config.h):
  // /v1/embeddings is served and the generation routes answer 404, as in vLLM, whose pooling
  // servers register no generation routes. nullopt: a generation model (/v1/embeddings 404).
  std::optional<PoolerSetup> pooling;
};

// Throws std::invalid_argument naming the flag when --reasoning-parser / --tool-call-parser is
// unknown or does not fit the model (`architecture`: its Hugging Face class name): gpt-oss
// (GptOssForCausalLM) takes only openai_gptoss / openai, other models never.
void check_parsers(const ServerConfig& cfg, const std::string& architecture);

class OpenAIServer {
 public:
  // Starts the engine thread over llm.engine(); `llm` must outlive the server.
  OpenAIServer(LLM& llm, ServerConfig cfg);
  ~OpenAIServer();

  // Binds the socket; false (with a message on stderr) when the address is taken.
  bool bind();
  int port() const { return port_; }
  // Serves until stop() (from another thread or a signal handler thread) has finished.
  void serve();
  // Stops taking requests, aborts what runs, waits for the handlers; idempotent. `graceful`
  // (SIGTERM / SIGINT) first lets what runs finish for up to --shutdown-timeout seconds.
  void stop(bool graceful = false);

  engine::AsyncEngine& engine() { return *engine_; }
  const std::string& model_name() const { return names_.front(); }

 private:
  void install_routes();
  bool authorized(const http::Request& req, http::Response& res) const;
  // 404 unless `model` (when given) is a served name or a LoRA adapter's; returns the adapter's
  // id (0: the base model).
  int32_t check_model(const std::optional<std::string>& model) const;
  void handle_generate(const http::Request& req, http::Response& res, bool chat);
  void handle_completions(const http::Request& req, http::Response& res);
  void handle_chat(const http::Request& req, http::Response& res);
  // Parses and admits a chat (or completions) body; `also_ignored` joins the fields the
  // request's parser found unknown (logged with --enable-log-requests' debug log).
  std::shared_ptr<Generation> start_generation(const ojson& body, const std::string& header_id,
                                               bool chat,
                                               const std::vector<std::string>& also_ignored,
                                               bool* stream);
  // --fingerprint-mode's system_fingerprint (none: nullopt).
  std::optional<std::string> system_fingerprint() const;
  // What prepare_chat / prepare_completion need from the server's flags.
  InputOptions input_options() const;
  void handle_responses(const http::Request& req, http::Response& res);
  void handle_get_response(const http::Request& req, http::Response& res);
  void handle_cancel_response(const http::Request& req, http::Response& res);
  void handle_messages(const http::Request& req, http::Response& res);
  void handle_count_tokens(const http::Request& req, http::Response& res);
  void log_request(const char* kind, const GenerationRequest& r, size_t n_prompts,
                   size_t n_prompt_tokens) const;
  void handle_embeddings_api(const http::Request& req, http::Response& res) {
    handle_embeddings(req, res, PoolingApi::kEmbeddings);
  }
  void handle_pooling_api(const http::Request& req, http::Response& res) {
    handle_embeddings(req, res, PoolingApi::kPooling);
  }
  void handle_classify_api(const http::Request& req, http::Response& res) {
    handle_embeddings(req, res, PoolingApi::kClassify);
  }
  // /v1/embeddings, vLLM's /pooling or /classify (openai_server_pooling.cpp).
  void handle_embeddings(const http::Request& req, http::Response& res, PoolingApi api);
  void handle_score_api(const http::Request& req, http::Response& res) {
    handle_score(req, res, false);
  }
  void handle_rerank_api(const http::Request& req, http::Response& res) {
    handle_score(req, res, true);
  }
  // What a pooling route's requests run with: the served model or LoRA adapter `model` names
  // (check_model's 404 otherwise), the pooler, the limits.
  PoolingServeOptions pooling_options(const std::optional<std::string>& model) const;
  // /score, /v1/score, or /rerank, /v1/rerank, /v2/rerank (`rerank`).
  void handle_score(const http::Request& req, http::Response& res, bool rerank);
  void handle_tokenize(const http::Request& req, http::Response& res);
  void handle_detokenize(const http::Request& req, http::Response& res);

  LLM& llm_;
  ServerConfig cfg_;
  std::vector<std::string> names_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<ResponsesStore> responses_store_;  // cfg_.responses_store
  std::unique_ptr<BackgroundResponses> background_;  // with the store: background responses
  std::unique_ptr<engine::AsyncEngine> engine_;
  std::unique_ptr<ServingContext> ctx_;
  std::unique_ptr<http::Server> http_;
  // Generation requests being handled (streams until their last chunk), for GET /load.
  std::shared_ptr<std::atomic<int64_t>> load_ = std::make_shared<std::atomic<int64_t>>(0);
  int port_ = 0;
  std::once_flag stopped_;
};

}  // namespace vllm::api
