// StopStringMatcher: finds the earliest stop string in held-back + new text and otherwise
// holds back the longest suffix that is a proper prefix of some stop string.
#include <algorithm>

#include "tokenizer/tokenizer.h"

namespace vllm::tok {

StopStringMatcher::StopStringMatcher(std::vector<std::string> stops, bool include_stop)
    : include_stop_(include_stop) {
  for (auto& s : stops) {
    if (!s.empty()) stops_.push_back(std::move(s));
  }
}

StopStringMatcher::Result StopStringMatcher::feed(std::string_view text) {
  Result r;
  if (stopped_) return r;
  held_.append(text);
  size_t best = std::string::npos;
  const std::string* which = nullptr;
  for (const auto& s : stops_) {
    const size_t p = held_.find(s);
    if (p != std::string::npos &&
        (p < best || (p == best && which != nullptr && s.size() > which->size()))) {
      best = p;
      which = &s;
    }
  }
  if (which != nullptr) {
    stopped_ = true;
    r.stopped = true;
    r.stop = *which;
    r.text = held_.substr(0, best + (include_stop_ ? which->size() : 0));
    held_.clear();
    return r;
  }
  size_t hold = 0;
  for (const auto& s : stops_) {
    const size_t max_k = std::min(s.size() - 1, held_.size());
    for (size_t k = max_k; k > hold; --k) {
      if (held_.compare(held_.size() - k, k, s, 0, k) == 0) {
        hold = k;
        break;
      }
    }
  }
  r.text = held_.substr(0, held_.size() - hold);
  held_.erase(0, held_.size() - hold);
  return r;
}

std::string StopStringMatcher::flush() {
  std::string out;
  if (!stopped_) out.swap(held_);
  held_.clear();
  return out;
}

}  // namespace vllm::tok
