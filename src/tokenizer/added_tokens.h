// Added tokens (special or not: <|im_start|>, <think>, <tool_call>, ...): matched in the raw
// text before normalization and BPE, leftmost-longest, honouring lstrip / rstrip / single_word.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::tok {

struct AddedToken {
  int32_t id = -1;
  std::string content;
  bool special = false;
  bool lstrip = false;
  bool rstrip = false;
  bool single_word = false;
  bool normalized = false;  // matched against normalized text instead of raw text
};

// A piece of input: either an added token (id >= 0) or text for the model (id < 0).
struct TextSegment {
  std::string_view text;
  int32_t id = -1;
};

class AddedTokenMatcher {
 public:
  void build(const std::vector<AddedToken>& tokens, bool normalized_set);
  bool empty() const { return tokens_.empty(); }
  // Splits text into segments; whitespace eaten by lstrip/rstrip belongs to no segment.
  void split(std::string_view text, std::vector<TextSegment>& out) const;

 private:
  struct Node {
    int32_t child_begin = 0, child_count = 0;  // into edges_, sorted by byte
    int32_t token = -1;                        // index into tokens_
  };
  struct Edge {
    uint8_t byte;
    int32_t node;
  };
  std::vector<AddedToken> tokens_;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  bool first_byte_[256] = {};
};

}  // namespace vllm::tok
