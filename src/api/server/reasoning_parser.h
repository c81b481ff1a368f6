// Reasoning content split out of <think>...</think> (vLLM's `--reasoning-parser qwen3`, as of
// its current Qwen3ReasoningParser). Whole outputs: without </think> everything is content;
// with it, the text before it is reasoning (a leading <think> removed; Qwen3-Thinking-2507
// templates put <think> in the prompt, so the output may only close it) and the text after it
// is content. Streams: text is reasoning until </think> (a <think> tag is dropped), then
// content; a stream whose prompt already closed the thinking section (enable_thinking false)
// is all content. A tag split across deltas is held back until it is complete.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace vllm::api {

struct ReasoningSplit {
  std::optional<std::string> reasoning;
  std::optional<std::string> content;
};

// The ids of the <think> and </think> tags in a vocabulary (either may be missing).
struct ThinkTags {
  std::optional<int32_t> start, end;
};
ThinkTags think_tags(const tok::Tokenizer& tokenizer);

// vLLM's is_reasoning_end over a prompt: true when its last think tag is the end tag
// `end_id` (enable_thinking false renders an empty <think></think>). False without an end id.
bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, std::optional<int32_t> start_id,
                           std::optional<int32_t> end_id);

// Non-streaming split of a complete output.
ReasoningSplit split_reasoning(const std::string& text);

class ReasoningStreamSplitter {
 public:
  // `prompt_ended_reasoning`: the prompt's last think tag was </think> (vLLM's is_reasoning_end
  // over the prompt), so everything generated is content.
  explicit ReasoningStreamSplitter(bool prompt_ended_reasoning = false)
      : state_(prompt_ended_reasoning ? State::kAfter : State::kReasoning) {}
  // Returns the reasoning and content text completed by this delta (either may be empty).
  std::pair<std::string, std::string> feed(const std::string& delta);
  // End of the stream: releases any held-back partial tag.
  std::pair<std::string, std::string> finish();

 private:
  enum class State { kReasoning, kAfter };
  State state_;
  bool start_seen_ = false;  // a <think> tag was dropped already
  std::string pending_;
};

}  // namespace vllm::api
