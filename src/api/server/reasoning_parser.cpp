// Qwen3-style <think> splitting, whole and streaming.
#include "api/server/reasoning_parser.h"

#include <string_view>

namespace vllm::api {
namespace {

constexpr std::string_view kStart = "<think>";
constexpr std::string_view kEnd = "</think>";

// Length of the longest suffix of `s` that is a proper prefix of `tag`.
size_t partial_tag_suffix(const std::string& s, std::string_view tag) {
  const size_t max = std::min(s.size(), tag.size() - 1);
  for (size_t n = max; n > 0; --n)
    if (std::string_view(s).substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

}  // namespace

ReasoningSplit split_reasoning(const std::string& text) {
  const size_t s = text.find(kStart);
  if (s == std::string::npos || text.find(kEnd, s + kStart.size()) == std::string::npos)
    return {std::nullopt, text};
  const size_t body = s + kStart.size();
  const size_t e = text.find(kEnd, body);
  ReasoningSplit r;
  r.reasoning = text.substr(body, e - body);
  std::string content = text.substr(e + kEnd.size());
  if (!content.empty()) r.content = std::move(content);
  return r;
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed(const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  for (;;) {
    if (state_ == State::kAfter) {
      content += pending_;
      pending_.clear();
      break;
    }
    const std::string_view tag = state_ == State::kBefore ? kStart : kEnd;
    std::string& out = state_ == State::kBefore ? content : reasoning;
    const size_t at = pending_.find(tag);
    if (at != std::string::npos) {
      out += pending_.substr(0, at);
      pending_.erase(0, at + tag.size());
      state_ = state_ == State::kBefore ? State::kReasoning : State::kAfter;
      continue;
    }
    const size_t hold = partial_tag_suffix(pending_, tag);
    out += pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    break;
  }
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::finish() {
  std::string rest;
  rest.swap(pending_);
  if (state_ == State::kReasoning) return {rest, ""};
  return {"", rest};
}

}  // namespace vllm::api
