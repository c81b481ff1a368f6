// A small HTTP client for the client commands (`vllm chat`, `vllm complete`, `vllm bench
// serve`) over libcurl: JSON requests to an OpenAI-compatible server, and server-sent-event
// streams split into their `data:` payloads. Lives in libvllm_client.so with libcurl, so the
// other `vllm` commands never map it.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace vllm::client {

struct Endpoint {
  std::string base_url;  // e.g. http://localhost:8000/v1 (no trailing slash)
  std::string api_key;   // sent as a Bearer token when not empty
};

// "http://host:port" or ".../v1" -> ".../v1" without a trailing slash.
std::string normalize_base_url(std::string url);

struct HttpResult {
  long status = 0;
  std::string body;
};

// Throws std::runtime_error when the server cannot be reached.
HttpResult http_get(const Endpoint& ep, const std::string& path);
HttpResult http_post_json(const Endpoint& ep, const std::string& path, const nlohmann::json& body);

// POSTs body and calls on_data with every SSE `data:` payload as it arrives (including the
// final "[DONE]"). Returns the HTTP status; a non-2xx body is returned in *error_body.
long http_stream(const Endpoint& ep, const std::string& path, const nlohmann::json& body,
                 const std::function<void(const std::string&)>& on_data,
                 std::string* error_body = nullptr);

// Splits server-sent events as bytes arrive: feed() any slice, get each complete `data:`
// payload back through the callback.
class SseParser {
 public:
  explicit SseParser(std::function<void(const std::string&)> on_data)
      : on_data_(std::move(on_data)) {}
  void feed(const char* p, size_t n);

 private:
  std::function<void(const std::string&)> on_data_;
  std::string buf_;
};

// The first model of GET /v1/models (throws with the server's answer when there is none).
std::string first_model(const Endpoint& ep);

// The message of an OpenAI error body, or the body itself.
std::string error_message(const std::string& body);

}  // namespace vllm::client
