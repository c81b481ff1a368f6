// The pooling endpoints of OpenAIServer (openai_server.h): /v1/embeddings and vLLM's /pooling
// (embeddings.h), and the score API, /score and /rerank (scoring.h).
#include <cstdio>

#include "api/server/embeddings.h"
#include "api/server/openai_server.h"
#include "api/server/protocol.h"
#include "api/server/scoring.h"
#include "api/server/server_replies.h"
#include "api/server/serving.h"

namespace vllm::api {

namespace {

void log_ignored(bool debug, const char* what, const std::vector<std::string>& ignored) {
  if (!debug || ignored.empty()) return;
  std::string names;
  for (const auto& f : ignored) names += (names.empty() ? "" : ", ") + f;
  std::fprintf(stderr, "DEBUG vllm.cpp: %s request: fields ignored (unknown): %s\n", what,
               names.c_str());
}

}  // namespace

PoolingServeOptions OpenAIServer::pooling_options(const std::optional<std::string>& model) const {
  PoolingServeOptions o;
  o.lora_id = check_model(model);
  o.model_name = o.lora_id ? *model : names_.front();
  o.pooler = &*cfg_.pooling;
  o.max_model_len = engine_->config().max_model_len;
  o.trust_request_chat_template = cfg_.trust_request_chat_template;
  o.score_template = cfg_.chat_template_given;
  return o;
}

void OpenAIServer::handle_embeddings(const http::Request& req, http::Response& res,
                                     PoolingApi api) {
  const EmbeddingRequest r = parse_embedding_request(parse_body(req.body), api);
  const PoolingServeOptions o = pooling_options(r.model);
  log_ignored(cfg_.debug_log, api == PoolingApi::kClassify ? "classification" : "embeddings",
              r.ignored);
  send_json(res, serve_embeddings(*ctx_, r, o, [&req] { return req.client_gone(); }));
}

void OpenAIServer::handle_score(const http::Request& req, http::Response& res, bool rerank) {
  const ScoreRequest r = parse_score_request(parse_body(req.body), rerank);
  const PoolingServeOptions o = pooling_options(r.model);
  log_ignored(cfg_.debug_log, rerank ? "rerank" : "score", r.ignored);
  send_json(res, serve_score(*ctx_, r, o, [&req] { return req.client_gone(); }));
}

}  // namespace vllm::api
