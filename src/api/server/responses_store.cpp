// The /v1/responses store (responses_store.h).
#include "api/server/responses_store.h"

namespace vllm::api {

void ResponsesStore::put(const std::string& id, StoredResponse r) {
  const size_t bytes = id.size() + r.messages.dump().size() + r.response.dump().size();
  std::lock_guard<std::mutex> l(mu_);
  auto it = map_.find(id);
  if (it != map_.end()) {  // a request_id used twice: the newer replaces it, in its place
    bytes_ -= it->second.bytes;
    it->second = {std::move(r), bytes};
  } else {
    map_.emplace(id, Entry{std::move(r), bytes});
    order_.push_back(id);
  }
  bytes_ += bytes;
  while (!order_.empty() && (order_.size() > capacity_ || bytes_ > max_bytes_)) {
    auto old = map_.find(order_.front());
    bytes_ -= old->second.bytes;
    map_.erase(old);
    order_.pop_front();
  }
}

std::optional<StoredResponse> ResponsesStore::get(const std::string& id) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = map_.find(id);
  if (it == map_.end()) return std::nullopt;
  return it->second.r;
}

}  // namespace vllm::api
