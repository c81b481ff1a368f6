// Anthropic's Messages API (POST /v1/messages, /v1/messages/count_tokens) as vLLM serves it
// (vLLM 0.33's entrypoints/anthropic): a request becomes the chat-completions request vLLM's
// to_chat_completion_request builds (the system prompt as the first message, text / thinking /
// tool_use / tool_result blocks as chat messages, tools as function tools, tool_choice
// auto / any / tool / none, thinking and output_config as reasoning_effort,
// thinking_token_budget and response_format), and the chat completion, whole or streamed,
// becomes the Message object or Anthropic's event stream. Errors use Anthropic's body
// ({"type": "error", "error": {"type", "message"}}). What cannot be honoured is refused naming
// the field: images, server tools, tool_addition / tool_removal blocks, mcp_servers,
// container, context_management (vLLM ignores the last three; here they are refused, since
// nothing would carry them out).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/server/protocol.h"

namespace vllm::api {

struct AnthropicCall {
  ojson chat;                        // the chat-completions body that runs the request
  std::vector<std::string> ignored;  // fields nothing reads (logged)
  bool stream = false;
};

// Throws ApiError (400 naming the field). `count_tokens`: the count_tokens body (no
// max_tokens, no sampling).
AnthropicCall anthropic_to_chat(const ojson& body, bool count_tokens = false);

// Anthropic's error body for an HTTP status.
nlohmann::json anthropic_error_body(int status, const std::string& message);

// A finished chat completion (choice 0) as the Message object.
nlohmann::json message_from_chat(const nlohmann::json& completion);

// A chat-completions SSE stream, one event per feed(), as Anthropic's events
// ("event: TYPE\ndata: JSON\n\n"): message_start, content_block_start / _delta / _stop per
// thinking, text and tool_use block, message_delta (stop_reason, usage), message_stop.
class AnthropicStream {
 public:
  std::vector<std::string> feed(const std::string& chat_sse);

 private:
  enum class Block { kNone, kThinking, kText, kToolUse };
  void emit(std::vector<std::string>& out, const char* type, nlohmann::json data);
  void start(std::vector<std::string>& out, Block kind, nlohmann::json block);
  void stop(std::vector<std::string>& out);
  void stop_and_flush(std::vector<std::string>& out);

  bool started_ = false, done_ = false, failed_ = false, tool_used_ = false;
  int next_index_ = 0, index_ = -1;
  Block cur_ = Block::kNone;
  std::string tool_id_, last_args_, pending_text_;
  std::vector<std::pair<int, std::string>> tool_ids_;  // chat tool-call index -> id
  std::string finish_;
  nlohmann::json stop_reason_;
};

}  // namespace vllm::api
