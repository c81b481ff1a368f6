// What the Responses and Anthropic translations (responses_api.h, anthropic_api.h) share
// when they read the chat path's output: one SSE event as Generation::stream_step writes it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace vllm::api {

// One chat SSE event: a comment (": keep-alive", passed on as is), the end ("data: [DONE]"),
// a JSON chunk, or anything else (nothing to translate).
struct ChatSse {
  enum Kind { kComment, kDone, kChunk, kOther } kind = kOther;
  nlohmann::json chunk;  // kChunk
};

inline ChatSse read_chat_sse(const std::string& sse) {
  ChatSse ev;
  if (sse.rfind(":", 0) == 0) {
    ev.kind = ChatSse::kComment;
    return ev;
  }
  if (sse.rfind("data: ", 0) != 0) return ev;
  std::string data = sse.substr(6);
  while (!data.empty() && (data.back() == '\n' || data.back() == '\r')) data.pop_back();
  if (data == "[DONE]") {
    ev.kind = ChatSse::kDone;
    return ev;
  }
  ev.chunk = nlohmann::json::parse(data, nullptr, false);
  if (!ev.chunk.is_discarded()) ev.kind = ChatSse::kChunk;
  return ev;
}

// A JSON value that is a non-empty string (a delta worth an event).
inline bool nonempty_string(const nlohmann::json& v) {
  return v.is_string() && !v.get_ref<const std::string&>().empty();
}

}  // namespace vllm::api
