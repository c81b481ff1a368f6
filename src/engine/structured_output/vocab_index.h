// A tokenizer's vocabulary as the mask computation wants it: the non-special tokens sorted
// by their bytes, with the common-prefix length to the previous one, which makes the sorted
// list an implicit byte trie (a walk reuses the automaton states of the shared prefix and
// skips every token below a rejected prefix). Built once per tokenizer and shared by every
// grammar compiled for it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::tok {
class Tokenizer;
}

namespace vllm::engine::so {

class VocabIndex {
 public:
  // stop_ids: the ids a matcher allows once the grammar is complete (default: the
  // tokenizer's stop_ids()). Special tokens other than these are never allowed.
  static std::shared_ptr<const VocabIndex> build(const tok::Tokenizer& tok);
  static std::shared_ptr<const VocabIndex> build(const tok::Tokenizer& tok,
                                                 std::vector<int32_t> stop_ids);
  // For tests: a vocabulary given as byte strings (index = id), no special tokens.
  static std::shared_ptr<const VocabIndex> from_strings(const std::vector<std::string>& tokens,
                                                        std::vector<int32_t> stop_ids);

  int32_t vocab_size() const { return vocab_size_; }
  int32_t mask_words() const { return (vocab_size_ + 31) / 32; }
  int32_t num_sorted() const { return static_cast<int32_t>(sorted_ids_.size()); }
  int32_t sorted_id(int32_t i) const { return sorted_ids_[i]; }
  int32_t sorted_lcp(int32_t i) const { return lcp_[i]; }
  std::string_view sorted_bytes(int32_t i) const {
    return {blob_.data() + off_[i], static_cast<size_t>(off_[i + 1] - off_[i])};
  }
  // Sorted position of a token id; -1 for special tokens and empty tokens.
  int32_t position(int32_t id) const { return pos_[id]; }
  bool is_stop(int32_t id) const { return id >= 0 && id < vocab_size_ && stop_[id]; }
  const std::vector<int32_t>& stop_ids() const { return stop_ids_; }
  int32_t max_token_len() const { return max_len_; }
  // One past the last sorted position whose token starts with byte b (the walk jumps over a
  // whole first-byte subtree in one step).
  int32_t first_byte_end(uint8_t b) const { return first_end_[b]; }
  size_t memory_bytes() const;

 private:
  void finish(const std::vector<std::string>& bytes_by_id, const std::vector<bool>& excluded,
              std::vector<int32_t> stop_ids);
  int32_t vocab_size_ = 0, max_len_ = 0;
  std::vector<int32_t> sorted_ids_, pos_, stop_ids_;
  std::vector<uint16_t> lcp_;
  std::string blob_;
  std::vector<uint32_t> off_;
  std::vector<uint8_t> stop_;
  std::vector<int32_t> first_end_ = std::vector<int32_t>(256, 0);
};

}  // namespace vllm::engine::so
