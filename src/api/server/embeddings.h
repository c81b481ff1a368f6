// /v1/embeddings for a pooling model (vLLM's EmbeddingCompletionRequest and
// EmbeddingChatRequest, OpenAI's embeddings API): every input is tokenized (or rendered by the
// chat template), run as a pooling request (engine::PoolingParams) and answered with its
// vector, as floats or as base64 of float32 / float16 / bfloat16 values. vLLM's own /pooling
// (PoolingCompletionRequest / PoolingChatRequest) is the same request with a `task` (embed
// here) and answers "pooling" objects.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "api/pooler_config.h"
#include "api/server/api_error.h"
#include "api/server/protocol.h"

namespace vllm::api {

struct ServingContext;

struct EmbeddingRequest {
  std::optional<std::string> model;
  // Completion-style inputs: texts or token-id lists (one embedding each), in order.
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> token_ids;
  bool inputs_are_ids = false;
  // Chat-style: one conversation (`messages`, or `input` holding messages) per embedding.
  std::vector<ojson> conversations;
  std::optional<std::string> chat_template;
  ojson chat_template_kwargs = ojson::object();
  bool add_generation_prompt = false;
  bool continue_final_message = false;
  std::optional<bool> add_special_tokens;  // default: true for inputs, false for chats
  std::string encoding_format = "float";   // float or base64
  std::string embed_dtype = "float32";     // float32, float16 or bfloat16 (base64 only)
  std::string endianness = "native";       // native, big or little (base64 only)
  int32_t dimensions = 0;                  // 0: the pooler's default
  std::optional<bool> use_activation;
  std::optional<int64_t> truncate_prompt_tokens;
  bool truncate_left = true;
  int64_t priority = 0;
  std::optional<std::string> request_id;
  std::string cache_salt;
  std::vector<std::string> ignored;  // unknown fields, for the debug log
  bool pooling_api = false;          // /pooling: its answer's layout
};

// The 404 for `path` on a server whose runner does not serve it: an embedding (pooling) server
// has no generation route, a generation server no /v1/embeddings or /pooling (vLLM registers
// the routes of the model's tasks only).
ApiError wrong_runner_route(const std::string& path, bool pooling_server);

// Parses a /v1/embeddings body; throws ApiError(400) naming the field that is malformed or
// cannot be honoured (encoding_format "bytes", an fp8 embed_dtype, padding "max_length", the
// removed `normalize`, ...).
// `pooling_api`: a /pooling body, whose `task` may be null or "embed" (the other tasks are refused
// by name).
EmbeddingRequest parse_embedding_request(const ojson& body, bool pooling_api = false);

struct EmbeddingServeOptions {
  const PoolerSetup* pooler = nullptr;
  std::string model_name;  // the answer's `model`
  int32_t lora_id = 0;
  int32_t max_model_len = 0;
  bool trust_request_chat_template = false;
};

// Runs every input as a pooling request and returns the OpenAI response object. Throws
// ApiError: 400 for a bad input (a prompt longer than max_model_len, dimensions the model
// cannot give), 503 when the engine is overloaded, 499 once `client_gone` says true (every
// request aborted).
nlohmann::json serve_embeddings(ServingContext& ctx, const EmbeddingRequest& r,
                                const EmbeddingServeOptions& o,
                                const std::function<bool()>& client_gone);

}  // namespace vllm::api
