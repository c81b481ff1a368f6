// vLLM's score and rerank APIs (/score, /v1/score, /rerank, /v1/rerank, /v2/rerank; vLLM 0.33's
// entrypoints/pooling/scoring): how relevant each document is to a query. An embedding model
// scores as a bi-encoder: every query and document is embedded on its own, and a pair's score
// is the cosine similarity of their vectors. A one-label classifier scores as a cross-encoder:
// each (query, document) pair is one prompt (the pair's tokens, the two texts joined, or the
// --chat-template rendered with roles "query" and "document"), and its score is the classifier's
// activated logit.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/pooler_config.h"
#include "api/server/embeddings.h"
#include "api/server/protocol.h"

namespace vllm::api {

struct ServingContext;

struct ScoreRequest : PoolingRequestBase {
  bool rerank = false;  // /rerank's body and answer (query, documents, top_n)
  // data_1 / data_2 (or queries / documents, queries / items, text_1 / text_2): 1:1, 1:N or N:N.
  std::vector<std::string> queries;
  std::vector<std::string> documents;
  int64_t top_n = 0;  // rerank: the best n results (0: all of them)
  int64_t max_tokens_per_query = 0;
  int64_t max_tokens_per_doc = 0;
  // A score template's inputs: `instruction` folds into chat_template_kwargs (whose own
  // "instruction" wins), as vLLM does.
  std::optional<std::string> instruction;
  ojson chat_template_kwargs;  // null: none given
};

// Parses a /score (rerank false) or /rerank body; throws ApiError(400) naming the field that is
// malformed or cannot be honoured (a multimodal input, a score template's `instruction` /
// `chat_template_kwargs` for a model that scores without one, mismatched input counts, ...).
ScoreRequest parse_score_request(const ojson& body, bool rerank);

// Scores every pair and returns vLLM's ScoreResponse (rerank: RerankResponse, sorted by
// relevance). ApiError as serve_embeddings.
nlohmann::json serve_score(ServingContext& ctx, const ScoreRequest& r, const PoolingServeOptions& o,
                           const std::function<bool()>& client_gone);

}  // namespace vllm::api
