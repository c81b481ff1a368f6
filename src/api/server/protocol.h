// OpenAI protocol requests: strict parsing of /v1/completions and /v1/chat/completions bodies
// into engine SamplingParams and the serving options around them. Every field of vLLM's
// CompletionRequest / ChatCompletionRequest is either honoured or refused with a 400 naming it
// (docs/SERVING.md lists which); wrong types and out-of-range values are 400s naming the field.
// Fields no version of vLLM knows are ignored, as OpenAI does, and reported in
// `ignored_fields` for a debug log line.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/generation_config.h"
#include "api/server/api_error.h"
#include "engine/sampling_params.h"
#include "engine/structured_output/structured_output.h"

namespace vllm::api {

using ojson = nlohmann::ordered_json;

// The most choices one request may fan out to.
inline constexpr int kMaxN = 128;

// What the server tells the parsers: its limits and its default sampling parameters.
struct ParseOptions {
  // --max-logprobs: the most logprobs / top_logprobs / prompt_logprobs (-1: no limit).
  int32_t max_logprobs = 20;
  // --enable-force-include-usage: every stream ends with a usage chunk, as if
  // stream_options.include_usage were true.
  bool force_include_usage = false;
  // --return-tokens-as-token-ids: the default of the request field of that name.
  bool return_tokens_as_token_ids = false;
  // generation_config.json's defaults (--generation-config) for fields a request leaves
  // unset; max_new_tokens caps max_tokens.
  GenerationDefaults defaults;
  // --default-chat-template-kwargs: template variables for chat requests and /tokenize
  // messages; a request's own chat_template_kwargs (or reasoning_effort) win key by key.
  ojson default_chat_template_kwargs = ojson::object();
  // --chat-template-content-format openai: message content reaches the template as a list of
  // {"type": "text", "text": ...} parts instead of one string.
  bool content_parts = false;
  // --reasoning-effort-map: a request's reasoning_effort (chat, Responses, Messages) rewritten
  // to the value the chat template knows, after it is validated (vLLM's map_reasoning_effort).
  std::map<std::string, std::string> reasoning_effort_map;
};

// A structured-output constraint as the request asked for it (compiled later, in the HTTP
// worker, against the model's tokenizer; structured_outputs.h).
struct OutputConstraint {
  engine::so::GrammarKind kind = engine::so::GrammarKind::kJsonObject;
  std::string text;   // what GrammarCompiler::compile takes
  std::string field;  // the request field it came from, named in errors
};

// tool_choice, with vLLM's defaults: "auto" when tools are given without one, else "none".
enum class ToolChoice { kNone, kAuto, kRequired, kNamed };

// Fields shared by both endpoints.
struct GenerationRequest {
  std::optional<std::string> model;
  int32_t n = 1;
  bool stream = false;
  bool include_usage = false;
  bool continuous_usage_stats = false;
  engine::SamplingParams sampling;
  // bad_words as given; the server tokenizes them into sampling.bad_words_token_ids.
  std::vector<std::string> bad_words;
  // Prompt handling.
  std::optional<bool> add_special_tokens;         // default: completions true, chat false
  std::optional<int64_t> truncate_prompt_tokens;  // keep this many (-1: max_model_len)
  bool truncate_left = true;                      // truncation_side "left" (vLLM's default)
  // Echo: completions prepend the prompt (and its logprobs); chat prepends the last message
  // when it has the response's role.
  bool echo = false;
  // Output options.
  bool return_token_ids = false;
  bool return_tokens_as_token_ids = false;
  std::optional<std::string> request_id;
  int64_t priority = 0;
  // response_format / structured_outputs / guided_*: at most one.
  std::optional<OutputConstraint> constraint;
  std::vector<std::string> ignored_fields;
  // Accepted fields that change nothing here (guided_decoding_backend), for a debug line.
  std::vector<std::string> debug_notes;
};

struct CompletionRequest : GenerationRequest {
  // Exactly one of these is filled: text prompts, or token-id prompts.
  std::vector<std::string> prompt_texts;
  std::vector<std::vector<int32_t>> prompt_ids;
  // echo with max_tokens 0: the prompt (and its logprobs) only; the engine still runs one step.
  bool echo_only = false;
};

struct ChatRequest : GenerationRequest {
  // Validated and normalized as vLLM's parse_chat_messages does for string-content templates:
  // content flattened to text ("" for null), only the keys vLLM passes on (tool_calls with
  // their arguments parsed into objects, tool_call_id, name, reasoning).
  ojson messages;
  ojson tools;  // null when absent; each as vLLM hands it to the template (model_dump)
  ToolChoice tool_choice = ToolChoice::kNone;
  bool tool_choice_given = false;  // false: the default (auto with tools)
  std::string tool_choice_name;    // kNamed
  bool parallel_tool_calls = true;
  ojson chat_template_kwargs = ojson::object();
  std::optional<std::string> chat_template;  // request-level template (needs the server's trust)
  bool add_generation_prompt = true;
  bool continue_final_message = false;
  bool include_reasoning = true;
  bool return_prompt_text = false;  // the rendered prompt goes back in the response
  bool logprobs = false;
  int32_t top_logprobs = 0;
};

// Both throw ApiError(400) on malformed bodies and on fields this server does not implement.
CompletionRequest parse_completion_request(const ojson& body, const ParseOptions& opts = {});
ChatRequest parse_chat_request(const ojson& body, const ParseOptions& opts = {});

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
TokenizeRequest parse_tokenize_request(const ojson& body, const ParseOptions& opts = {});

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
