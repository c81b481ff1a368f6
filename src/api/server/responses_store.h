// vLLM's opt-in in-memory store for /v1/responses (VLLM_ENABLE_RESPONSES_API_STORE=1): what
// previous_response_id continues and GET /v1/responses/{id} returns (responses_api.h).
#pragma once

#include <cstddef>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

#include "api/server/protocol.h"

namespace vllm::api {

// A stored response (VLLM_ENABLE_RESPONSES_API_STORE=1, as vLLM): the chat messages its request
// ran on and the Response it gave.
struct StoredResponse {
  ojson messages;
  nlohmann::json response;
};

// vLLM's in-memory response store: previous_response_id continues a stored response, GET
// /v1/responses/{id} returns one. vLLM's never forgets; this one keeps the newest `capacity`
// responses within `max_bytes` of their JSON text (a long chain of continued responses stores
// its history again in every link), and an evicted id is a 404 like an unknown one.
class ResponsesStore {
 public:
  explicit ResponsesStore(size_t capacity = 10000, size_t max_bytes = size_t{256} << 20)
      : capacity_(capacity), max_bytes_(max_bytes) {}
  void put(const std::string& id, StoredResponse r);
  std::optional<StoredResponse> get(const std::string& id) const;

 private:
  struct Entry {
    StoredResponse r;
    size_t bytes = 0;
  };
  mutable std::mutex mu_;
  size_t capacity_, max_bytes_, bytes_ = 0;
  std::unordered_map<std::string, Entry> map_;
  std::deque<std::string> order_;
};

}  // namespace vllm::api
