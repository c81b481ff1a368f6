// Byte-level BPE model: vocabulary, merge ranks and the merge loop. Merging a piece of n bytes
// is O(n log n): a min-heap of adjacent pairs keyed by (rank, position) over a linked list of
// symbols, with stale heap entries skipped when popped. Pieces longer than kMaxPieceBytes are
// merged a bounded window at a time, so the cost of any input is linear in its length.
#pragma once

#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tokenizer/string_table.h"

namespace vllm::tok {

struct EncodeStats;

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class Bpe {
 public:
  // A piece up to this many bytes is merged whole, as the reference tokenizers do. A longer one
  // (which natural text practically never produces: the longest pre-token in the golden corpora
  // is 201 bytes, the longest vocabulary token 128) is merged window by window: the merge loop
  // runs over its next kMaxPieceBytes bytes and keeps the tokens that end within the first
  // kCommitBytes, so the kept tokens were merged with at least kMaxPieceBytes - kCommitBytes
  // bytes of right context. Only tokens crossing a window's commit point can differ from an
  // unbounded merge, and only in pieces whose merges interact over longer distances than that
  // (long runs of one repeated character). See docs/TOKENIZER.md.
  static constexpr size_t kMaxPieceBytes = 1024;
  static constexpr size_t kCommitBytes = 768;

  // tokens: the model vocabulary in byte-level form, index = id (empty strings are holes).
  // merges: "left right" pairs in rank order. Merges whose parts or result are missing from
  // the vocabulary are ignored. unk_id < 0: bytes missing from the vocabulary are dropped.
  Bpe(StringTable tokens, const std::vector<std::pair<std::string_view, std::string_view>>& merges,
      bool ignore_merges, int32_t unk_id);

  // Appends the ids of one pre-token given as raw bytes. A long piece stops early, after the
  // window that takes out.size() past `limit` (the ids appended are then a prefix of the
  // piece's ids). stats, when given, counts the merge work.
  void encode(std::string_view piece, std::vector<int32_t>& out,
              size_t limit = std::numeric_limits<size_t>::max(),
              EncodeStats* stats = nullptr) const;
  std::optional<int32_t> find(std::string_view byte_level_token) const;
  size_t num_merges() const { return merges_.size(); }
  // True when some byte has neither a token nor an unk token to stand for it (such bytes are
  // dropped, so an input can be arbitrarily long and still produce no ids).
  bool drops_bytes() const;

 private:
  // Merges `bytes` whole. Appends the resulting ids to `ids` and, when ends != nullptr, the
  // offset in `bytes` where each one ends.
  void merge(std::string_view bytes, std::vector<int32_t>& ids, std::vector<uint32_t>* ends,
             EncodeStats* stats) const;
  void merge_long(std::string_view piece, std::vector<int32_t>& out, size_t limit,
                  EncodeStats* stats) const;

  StringTable vocab_;
  StringIndex index_;
  int32_t byte_ids_[256];
  size_t max_token_chars_ = 0;  // longest vocabulary string, in byte-level form
  MergeTable merges_;
  bool ignore_merges_;
  int32_t unk_id_;

  // Pre-token results repeat heavily in natural text.
  static constexpr size_t kCacheMaxPiece = 64;
  static constexpr size_t kCacheMaxEntries = 1 << 16;
  mutable std::mutex cache_mu_;
  mutable std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> cache_;
  // A windowed piece can stop early (encode's limit): it must never be one the cache keeps.
  static_assert(kCacheMaxPiece < kMaxPieceBytes);
};

}  // namespace vllm::tok
