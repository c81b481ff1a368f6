// OpenAI protocol requests: strict parsing of /v1/completions and /v1/chat/completions bodies
// into engine SamplingParams. Wrong types and out-of-range values throw ApiError (400) naming
// the field; unknown fields are ignored (reported in `ignored_fields`), as vLLM does.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/server/api_error.h"
#include "engine/sampling_params.h"

namespace vllm::api {

using ojson = nlohmann::ordered_json;

// The most top-n logprobs a request may ask for (vLLM's default max_logprobs).
inline constexpr int kMaxLogprobs = 20;
// The most choices one request may fan out to.
inline constexpr int kMaxN = 128;

// Fields shared by both endpoints.
struct GenerationRequest {
  std::optional<std::string> model;
  int32_t n = 1;
  bool stream = false;
  bool include_usage = false;
  bool continuous_usage_stats = false;
  engine::SamplingParams sampling;
  std::vector<std::string> ignored_fields;
};

struct CompletionRequest : GenerationRequest {
  // Exactly one of these is filled: text prompts, or token-id prompts.
  std::vector<std::string> prompt_texts;
  std::vector<std::vector<int32_t>> prompt_ids;
  bool echo = false;
};

struct ChatRequest : GenerationRequest {
  ojson messages;  // validated: a non-empty array of {role, content}; content flattened to text
  ojson tools;     // null when absent
  ojson chat_template_kwargs = ojson::object();
  bool add_generation_prompt = true;
  bool logprobs = false;
  int32_t top_logprobs = 0;
};

// Both throw ApiError(400) on malformed bodies.
CompletionRequest parse_completion_request(const ojson& body);
ChatRequest parse_chat_request(const ojson& body);

// POST /tokenize: {"prompt": str, "add_special_tokens": bool} or {"messages": [...], ...}.
struct TokenizeRequest {
  std::optional<std::string> model;
  std::optional<std::string> prompt;
  ojson messages;  // set instead of prompt for chat tokenization
  ojson chat_template_kwargs = ojson::object();
  bool add_generation_prompt = true;
  bool add_special_tokens = true;
  bool return_token_strs = false;
};
TokenizeRequest parse_tokenize_request(const ojson& body);

struct DetokenizeRequest {
  std::optional<std::string> model;
  std::vector<int32_t> tokens;
};
DetokenizeRequest parse_detokenize_request(const ojson& body);

// The deepest nesting of arrays and objects a request body may have (serde_json's default;
// real tool schemas stay far below it).
inline constexpr size_t kMaxJsonDepth = 128;
// Nesting depth of the arrays and objects in JSON text (strings skipped; no validation).
size_t json_depth(std::string_view text);

// Parses a request body; malformed JSON, invalid UTF-8 or nesting deeper than kMaxJsonDepth
// -> ApiError(400).
ojson parse_body(const std::string& body);

}  // namespace vllm::api
