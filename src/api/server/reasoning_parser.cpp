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

ThinkTags think_tags(const tok::Tokenizer& tokenizer) {
  return {tokenizer.token_to_id(kStart), tokenizer.token_to_id(kEnd)};
}

bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, std::optional<int32_t> start_id,
                           std::optional<int32_t> end_id) {
  if (!end_id) return false;
  for (size_t i = prompt.size(); i-- > 0;) {
    if (prompt[i] == *end_id) return true;
    if (start_id && prompt[i] == *start_id) return false;
  }
  return false;
}

ReasoningSplit split_reasoning(const std::string& text) {
  const size_t e = text.find(kEnd);
  if (e == std::string::npos) return {std::nullopt, text};
  // As vLLM: a <think> before the end tag starts the reasoning (what precedes it is dropped).
  const size_t s = text.find(kStart);
  const size_t body = s != std::string::npos && s < e ? s + kStart.size() : 0;
  ReasoningSplit r;
  r.reasoning = text.substr(body, e - body);
  std::string content = text.substr(e + kEnd.size());
  if (!content.empty()) r.content = std::move(content);
  return r;
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed(const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  while (state_ == State::kReasoning) {
    const size_t end = pending_.find(kEnd);
    const size_t start = start_seen_ ? std::string::npos : pending_.find(kStart);
    if (start != std::string::npos && start < end) {  // drop the opening tag
      reasoning += pending_.substr(0, start);
      pending_.erase(0, start + kStart.size());
      start_seen_ = true;
      continue;
    }
    if (end != std::string::npos) {
      reasoning += pending_.substr(0, end);
      pending_.erase(0, end + kEnd.size());
      state_ = State::kAfter;
      break;
    }
    size_t hold = partial_tag_suffix(pending_, kEnd);
    if (!start_seen_) hold = std::max(hold, partial_tag_suffix(pending_, kStart));
    reasoning += pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return {reasoning, content};
  }
  content += pending_;
  pending_.clear();
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::finish() {
  std::string rest;
  rest.swap(pending_);
  if (state_ == State::kReasoning) return {rest, ""};
  return {"", rest};
}

}  // namespace vllm::api
