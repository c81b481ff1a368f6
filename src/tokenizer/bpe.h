// Byte-level BPE model: vocabulary, merge ranks and the merge loop. Merging a piece of n bytes
// is O(n log n): a min-heap of adjacent pairs keyed by (rank, position) over a linked list of
// symbols, with stale heap entries skipped when popped.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/string_table.h"

namespace vllm::tok {

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Bpe {
 public:
  // tokens: the model vocabulary in byte-level form, index = id (empty strings are holes).
  // merges: "left right" pairs in rank order. Merges whose parts or result are missing from
  // the vocabulary are ignored. unk_id < 0: bytes missing from the vocabulary are dropped.
  Bpe(StringTable tokens, const std::vector<std::pair<std::string_view, std::string_view>>& merges,
      bool ignore_merges, int32_t unk_id);

  // Appends the ids of one pre-token given as raw bytes.
  void encode(std::string_view piece, std::vector<int32_t>& out) const;
  std::optional<int32_t> find(std::string_view byte_level_token) const;
  size_t num_merges() const { return merges_.size(); }

 private:
  void merge_piece(std::string_view piece, std::vector<int32_t>& out) const;

  StringTable vocab_;
  StringIndex index_;
  int32_t byte_ids_[256];
  MergeTable merges_;
  bool ignore_merges_;
  int32_t unk_id_;

  // Pre-token results repeat heavily in natural text.
  static constexpr size_t kCacheMaxPiece = 64;
  static constexpr size_t kCacheMaxEntries = 1 << 16;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
};

}  // namespace vllm::tok
