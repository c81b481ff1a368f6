// /v1/embeddings for a pooling model (vLLM's EmbeddingCompletionRequest and
// EmbeddingChatRequest, OpenAI's embeddings API): every input is tokenized (or rendered by the
// chat template), run as a pooling request (engine::PoolingParams) and answered with its
// vector, as floats or as base64 of float32 / float16 / bfloat16 values. vLLM's own /pooling
// (PoolingCompletionRequest / PoolingChatRequest) is the same request with a `task` (the
// model's: embed or classify) and answers "pooling" objects. A classifier's /classify
// (ClassificationCompletionRequest / ClassificationChatRequest) takes the same inputs and
// answers each with its label and class probabilities.
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

enum class PoolingApi { kEmbeddings, kPooling, kClassify };

namespace detail {
class Fields;
}

// What every pooling request has (vLLM's PoolingBasicRequestMixin and use_activation).
struct PoolingRequestBase {
  std::optional<std::string> model;
  std::optional<bool> use_activation;
  std::optional<int64_t> truncate_prompt_tokens;
  bool truncate_left = true;
  int64_t priority = 0;
  std::optional<std::string> request_id;
  std::string cache_salt;
  std::vector<std::string> ignored;  // unknown fields, for the debug log
};
// Reads those fields but `model` (use_activation, truncation, padding, mm_processor_kwargs,
// priority, request_id, cache_salt, user), refusing what cannot be honoured by name.
void parse_pooling_base(detail::Fields& f, PoolingRequestBase& r);
// vLLM's list answer of a pooling route: {"id", "object": "list", "created", "model", "data",
// "usage"} with prompt tokens only.
nlohmann::json pooling_list_response(const std::string& id, const std::string& model,
                                     nlohmann::json data, int64_t prompt_tokens);

struct EmbeddingRequest : PoolingRequestBase {
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
  std::optional<bool> add_special_tokens;    // default: true for inputs, false for chats
  std::string encoding_format = "float";     // float or base64
  std::string embed_dtype = "float32";       // float32, float16 or bfloat16 (base64 only)
  std::string endianness = "native";         // native, big or little (base64 only)
  int32_t dimensions = 0;                    // 0: the pooler's default
  PoolingApi api = PoolingApi::kEmbeddings;  // the route: its answer's layout
  std::optional<std::string> task;           // /pooling's task (null: the model's)
};

// Whether `path` is a pooling task's route: /v1/embeddings, /pooling, and the score API (/score,
// /v1/score, /rerank, /v1/rerank, /v2/rerank).
bool is_pooling_route(const std::string& path);
// The 404 for `path` on a server whose runner does not serve it, nullopt when it does: an
// embedding (pooling) server (`pooler` set) has no generation route, a generation server no
// pooling route (vLLM registers the routes of the model's tasks only).
std::optional<ApiError> route_refusal(const std::string& path, const PoolerSetup* pooler);

// Parses a /v1/embeddings body; throws ApiError(400) naming the field that is malformed or
// cannot be honoured (encoding_format "bytes", an fp8 embed_dtype, padding "max_length", the
// removed `normalize`, ...).
// `api`: the route; a /pooling body's `task` must be the model's (serve_embeddings checks it),
// and /classify reads no encoding fields (encoding_format, embed_dtype, endianness, dimensions).
EmbeddingRequest parse_embedding_request(const ojson& body,
                                         PoolingApi api = PoolingApi::kEmbeddings);

// How the server runs a pooling route's requests (/v1/embeddings, /pooling, /classify, /score,
// /rerank).
struct PoolingServeOptions {
  const PoolerSetup* pooler = nullptr;
  std::string model_name;  // the answer's `model`
  int32_t lora_id = 0;
  int32_t max_model_len = 0;
  bool trust_request_chat_template = false;
  // A cross-encoder renders each (query, document) pair through the server's chat template
  // (--chat-template was given).
  bool score_template = false;
};

// Truncates each prompt (truncate_prompt_tokens) and checks it against `max_model_len`: a 400
// naming `field` for an empty or over-long one. Returns the prompts' total token count.
int64_t check_pooling_prompts(std::vector<std::vector<int32_t>>& prompts,
                              const GenerationRequest& trunc, int32_t max_model_len,
                              const char* field);

// Runs each prompt as a pooling request with `sp` (ids `id_prefix`-0, -1, ...) and returns their
// pooled vectors in order. ApiError 503 when the engine is overloaded, 400 when one is refused
// at admission, 499 once `client_gone` says true; whatever still runs is aborted on the way out.
std::vector<std::vector<float>> run_pooling(ServingContext& ctx,
                                            const std::vector<std::vector<int32_t>>& prompts,
                                            const engine::SamplingParams& sp, int64_t priority,
                                            const std::string& id_prefix,
                                            const std::function<bool()>& client_gone);

// Runs every input as a pooling request and returns the OpenAI response object (for a
// classifier: vLLM's ClassificationResponse, or /pooling's items holding probabilities). Throws
// ApiError: 400 for a bad input (a prompt longer than max_model_len, dimensions the model
// cannot give), 503 when the engine is overloaded, 499 once `client_gone` says true (every
// request aborted).
nlohmann::json serve_embeddings(ServingContext& ctx, const EmbeddingRequest& r,
                                const PoolingServeOptions& o,
                                const std::function<bool()>& client_gone);

}  // namespace vllm::api
