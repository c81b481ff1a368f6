// SentencePiece-style BPE with piece scores: GGUF's tokenizer.ggml.model "llama" (Llama 2,
// Mistral 7B v0.1-v0.3, TinyLlama, CodeLlama; also Mixtral's and Phi-3's). The input is text
// whose spaces are already U+2581 ("▁"); symbols start as UTF-8 characters and the adjacent
// pair whose concatenation is the highest-scoring vocabulary piece is merged first (ties:
// leftmost) until no pair forms a piece. A character without a piece is spelled with the
// <0xXX> byte tokens (else the unknown token). The rule is llama.cpp's and sentencepiece's;
// this code is ours.
//
// Cost: merging n bytes is O(n log n) (a max-heap of candidate pairs over a linked list of
// symbols, stale entries skipped when popped). Text is first cut where a "▁" follows another
// character, when no piece of the vocabulary could span such a cut (checked at load), and a
// piece longer than kMaxPieceBytes is merged a window at a time, as Bpe does.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/string_table.h"

namespace vllm::tok {

struct EncodeStats;

class Spm {
 public:
  static constexpr size_t kMaxPieceBytes = 1024;
  static constexpr size_t kCommitBytes = 768;

  // tokens: the vocabulary (index = id) in SentencePiece form ("▁Hello", "<0x0A>"); scores: one
  // per token (missing: 0); byte_tokens: whether a token of the form <0xXX> is a byte token
  // (GGUF token type 6); unk_id < 0: characters without a piece or byte token are dropped.
  //
  // merges (tokenizer.json's BPE with byte_fallback): when given, a pair merges only if it is
  // one of these "left right" pairs, the lowest rank first (ties: leftmost), as Hugging Face's
  // BPE does; scores are then unused. split_every_space: Metaspace's split (a cut before
  // every "▁", so pieces never hold two).
  Spm(StringTable tokens, const std::vector<float>& scores, const std::vector<bool>& byte_tokens,
      int32_t unk_id,
      const std::vector<std::pair<std::string_view, std::string_view>>* merges = nullptr,
      bool split_every_space = false);

  // Appends the ids of `escaped` (spaces already "▁"). Stops early, after the window that takes
  // out.size() past `limit`, like Bpe::encode.
  void encode(std::string_view escaped, std::vector<int32_t>& out,
              size_t limit = std::numeric_limits<size_t>::max(),
              EncodeStats* stats = nullptr) const;
  int32_t find(std::string_view piece) const { return index_.find(vocab_, piece); }
  // True when some byte has neither a byte token nor an unknown token to stand for it.
  bool drops_bytes() const;
  // The byte a byte token stands for (-1 for any other id).
  int byte_of(int32_t id) const;

 private:
  void merge(std::string_view text, std::vector<int32_t>& ids, std::vector<uint32_t>* ends,
             EncodeStats* stats) const;
  void encode_piece(std::string_view piece, std::vector<int32_t>& out, size_t limit,
                    EncodeStats* stats) const;

  StringTable vocab_;
  StringIndex index_;
  std::vector<float> scores_;
  int32_t byte_ids_[256];
  std::vector<int16_t> byte_of_;  // per id: the byte of a byte token, else -1
  int32_t unk_id_;
  bool split_at_spaces_ = false;  // no piece has a "▁" after another character
  bool split_every_space_ = false;
  bool use_merges_ = false;
  MergeTable merges_;
};

}  // namespace vllm::tok
