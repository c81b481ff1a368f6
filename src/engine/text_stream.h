// The engine's seam to the tokenizer: an incremental detokenizer per request. The engine only
// needs "append one id, get the new UTF-8-complete text"; the tokenizer layer implements it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace vllm::engine {

class TextStream {
 public:
  virtual ~TextStream() = default;
  // Feeds one generated id; returns the text it completes (may be empty while a multi-byte
  // character or a merge is pending).
  virtual std::string append(int32_t id) = 0;
};

// Makes the stream of one request; it sees the prompt so it can detokenize the first output
// token in context (leading-space handling), and skip_special_tokens from the request.
using TextStreamFactory = std::function<std::unique_ptr<TextStream>(
    std::span<const int32_t> prompt_ids, bool skip_special_tokens)>;

}  // namespace vllm::engine
