// The OpenAI Responses API (POST /v1/responses) as vLLM serves it, with or without its opt-in
// response store (VLLM_ENABLE_RESPONSES_API_STORE): a request becomes the chat-completions
// request that runs it (vLLM's construct_input_messages: `instructions` as the system message,
// input items as chat messages, flat function tools as chat tools, `text.format` as
// response_format), and the chat completion, whole or streamed, becomes the Response object
// or its event stream (response.created ... response.completed, vLLM's "simple" events:
// reasoning, message and function_call items). What cannot be honoured is refused naming the
// field: built-in tools, `background` without the store (with it the response runs on without
// its client: openai_server.cpp), `previous_response_id` (404 unless the store is on, as
// vLLM), `include` beyond reasoning.encrypted_content and message.output_text.logprobs,
// `conversation`, `prompt`, `max_tool_calls`.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/server/protocol.h"
#include "api/server/responses_store.h"

namespace vllm::api {

struct ResponsesCall {
  ojson chat;          // the chat-completions body that runs the request
  bool store = false;  // keep the response for previous_response_id (a store, and store true)
  ojson echo;          // the Response's fields that repeat the request
  std::string id;      // "resp_..."
  std::vector<std::string> ignored;  // request fields vLLM ignores too (logged)
  bool stream = false;
  bool logprobs = false;    // include has message.output_text.logprobs
  bool background = false;  // runs on without its client (needs the store)
};

struct ResponsesOptions {
  // --enable-auto-tool-choice: without it tool_choice "auto" renders the tools but leaves the
  // output unparsed, as vLLM's Responses path does (its chat path answers 400 instead).
  bool auto_tools = false;
  // The store, when enabled (null: vLLM's default, nothing is stored).
  const ResponsesStore* store = nullptr;
};

// Throws ApiError: 400 naming the field, 404 for a previous_response_id not in the store.
ResponsesCall responses_to_chat(const ojson& body, const ResponsesOptions& opts);

// Counts the tokens of a text (the reasoning tokens of usage.output_tokens_details).
using TokenCounter = std::function<int64_t(const std::string&)>;

// A background response before it finished (vLLM's: status "queued", no output, no usage).
nlohmann::json queued_response(const ResponsesCall& call, int64_t created_at);

// A finished chat completion (choice 0) as the Response object.
nlohmann::json response_from_chat(const nlohmann::json& completion, const ResponsesCall& call,
                                  int64_t created_at, const TokenCounter& count);

// A chat-completions SSE stream, one event per feed(), as Responses SSE events
// ("event: TYPE\ndata: JSON\n\n", each with its sequence_number).
class ResponsesStream {
 public:
  ResponsesStream(const ResponsesCall& call, int64_t created_at, TokenCounter count);
  // response.created and response.in_progress.
  std::vector<std::string> start();
  std::vector<std::string> feed(const std::string& chat_sse);
  // The whole Response once the stream completed (null before, or after an error).
  const nlohmann::json* final_response() const { return final_.is_null() ? nullptr : &final_; }

 private:
  enum class Item { kNone, kReasoning, kMessage, kCall };
  void emit(std::vector<std::string>& out, nlohmann::json ev);
  void open(std::vector<std::string>& out, Item kind, const nlohmann::json& call = {});
  void close(std::vector<std::string>& out, const std::string& status);
  nlohmann::json response(const std::string& status) const;

  const ResponsesCall& call_;
  int64_t created_;
  TokenCounter count_;
  int64_t seq_ = 0;
  Item cur_ = Item::kNone;
  std::string item_id_, text_, call_id_, call_name_;
  int call_index_ = -1;
  nlohmann::json output_ = nlohmann::json::array();
  nlohmann::json usage_;
  std::string finish_;
  std::string reasoning_;  // every reasoning delta, for usage's reasoning_tokens
  nlohmann::json logprobs_ = nlohmann::json::array();  // the open message's (call_.logprobs)
  bool failed_ = false, done_ = false;
  nlohmann::json final_;
};

}  // namespace vllm::api
