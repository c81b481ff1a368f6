// Reasoning content split out of <think>...</think> (vLLM's `--reasoning-parser qwen3`).
// Whole outputs: both tags must be present, else everything is content. Streams: text before
// <think> is content, text inside is reasoning, text after </think> is content; a tag split
// across deltas is held back until it is complete.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace vllm::api {

struct ReasoningSplit {
  std::optional<std::string> reasoning;
  std::optional<std::string> content;
};

// Non-streaming split of a complete output.
ReasoningSplit split_reasoning(const std::string& text);

class ReasoningStreamSplitter {
 public:
  // Returns the reasoning and content text completed by this delta (either may be empty).
  std::pair<std::string, std::string> feed(const std::string& delta);
  // End of the stream: releases any held-back partial tag.
  std::pair<std::string, std::string> finish();

 private:
  enum class State { kBefore, kReasoning, kAfter };
  State state_ = State::kBefore;
  std::string pending_;
};

}  // namespace vllm::api
