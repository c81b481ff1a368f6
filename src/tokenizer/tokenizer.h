// The Tokenizer the engine and server use: byte-level BPE loaded from tokenizer.json
// (+ tokenizer_config.json) or from GGUF metadata, with added tokens, BOS/EOS handling and
// lossless decoding. Also declares the streaming pieces (IncrementalDetokenizer,
// StopStringMatcher), implemented in detokenizer.cpp and stop_strings.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/added_tokens.h"
#include "tokenizer/string_table.h"

namespace vllm::tok {

class Bpe;
class PreTokenizer;
class Spm;

// Work counters for one encode call. Tests use them to show that tokenization work is linear
// in the input whatever its content; they cost nothing when not asked for.
struct EncodeStats {
  size_t pieces = 0;           // pre-tokens handed to BPE
  size_t merge_loops = 0;      // BPE merge loops run (whole pieces or windows of long ones)
  size_t merge_bytes = 0;      // bytes that entered merge loops
  size_t max_merge_bytes = 0;  // the largest single merge loop, in bytes
  size_t merge_steps = 0;      // heap pops in merge loops
};

// What GGUF metadata gives (tokenizer.ggml.*).
struct VocabData {
  // "gpt2" (byte-level BPE) or "llama" (SentencePiece-style BPE with scores); anything else
  // is refused.
  std::string model;
  std::string pre;  // tokenizer.ggml.pre: qwen2, llama-bpe, smollm, gpt-2, default, ...
  std::vector<std::string> tokens;
  std::vector<int32_t> token_types;  // 1 normal, 2 unknown, 3 control, 4 user-defined, 5, 6
  std::vector<std::string> merges;   // "left right"
  std::vector<float> scores;         // "llama": one per token
  bool add_space_prefix = true;      // "llama": a space before text at the start / a special
  int32_t bos_id = -1, eos_id = -1, pad_id = -1, unk_id = -1;
  bool add_bos = false, add_eos = false;
  std::string chat_template;
  // llama.cpp's rule for Phi-3 files (general.name says phi-3 / phi3): every special token
  // but <unk>, <s> and <|endoftext|> eats the whitespace after it (rstrip), as Hugging Face's
  // tokenizer.json for those models marks them.
  bool phi3_rstrip = false;
};

class Tokenizer {
 public:
  ~Tokenizer();
  // Both throw std::invalid_argument (unsupported model / pre-tokenizer / normalizer, naming
  // the type) or std::runtime_error (unreadable or malformed file).
  static std::unique_ptr<Tokenizer> from_files(const std::string& tokenizer_json,
                                               const std::string& tokenizer_config_json);
  static std::unique_ptr<Tokenizer> from_json_text(const std::string& tokenizer_json,
                                                   const std::string& tokenizer_config_json);
  static std::unique_ptr<Tokenizer> from_vocab(const VocabData& v);

  // Invalid UTF-8 in text is kept: each invalid byte becomes its own piece and is encoded as
  // that byte's token. Pre-tokens longer than Bpe::kMaxPieceBytes are merged in windows
  // (docs/TOKENIZER.md), so the cost is linear in the text whatever it holds.
  std::vector<int32_t> encode(std::string_view text, bool add_special_tokens = true,
                              EncodeStats* stats = nullptr) const;
  // encode() for a caller with a token budget: returns false, with out cleared, as soon as it
  // is known that more than max_tokens ids would be produced; otherwise fills out with exactly
  // encode()'s ids and returns true. Refusing costs work proportional to max_tokens, not to the
  // text: a text longer than max_tokens * max_bytes_per_id() bytes is refused without being
  // looked at, and a shorter one stops at the piece that passes the budget.
  bool encode_bounded(std::string_view text, bool add_special_tokens, size_t max_tokens,
                      std::vector<int32_t>& out, EncodeStats* stats = nullptr) const;
  // The most input bytes one id can account for (the longest token, times the most NFC can
  // shrink text), or 0 when no such bound exists: an added token with lstrip / rstrip swallows
  // any run of whitespace, a "Removed" split or bytes without a token drop text.
  size_t max_bytes_per_id() const { return max_bytes_per_id_; }
  // Throws std::out_of_range on an id outside [0, vocab_size()). SentencePiece vocabularies
  // drop one leading space of the whole text (Hugging Face's Strip decoder); the streaming
  // IncrementalDetokenizer does not, as generated text follows a prompt.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;
  // The raw bytes one id stands for (may be part of a UTF-8 character). Throws like decode.
  std::string_view token_bytes(int32_t id) const;

  int32_t vocab_size() const { return static_cast<int32_t>(id_to_token_.size()); }
  std::optional<int32_t> token_to_id(std::string_view token) const;
  std::string id_to_token(int32_t id) const;  // vocabulary form (byte-level); throws like decode
  bool is_special(int32_t id) const;
  bool is_added(int32_t id) const;
  const std::vector<AddedToken>& added_tokens() const { return added_; }

  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }
  int32_t pad_id() const { return pad_id_; }
  // eos, the ChatML end tokens (<|im_end|>, <|endoftext|>) when present, and any ids given
  // with set_generation_eos_ids (generation_config.json's eos_token_id), sorted, unique.
  std::vector<int32_t> stop_ids() const;
  void set_generation_eos_ids(std::vector<int32_t> ids) { generation_eos_ids_ = std::move(ids); }

  const std::string& chat_template() const { return chat_template_; }
  // Where the chat template came from, for messages ("tokenizer_config.json chat_template",
  // "GGUF metadata tokenizer.chat_template", "chat_template.jinja", ...; "" when none).
  const std::string& chat_template_source() const { return chat_template_source_; }
  void set_chat_template(std::string text, std::string source) {
    chat_template_ = std::move(text);
    chat_template_source_ = std::move(source);
  }
  const std::string& bos_token() const { return bos_token_; }
  const std::string& eos_token() const { return eos_token_; }
  bool add_bos() const { return !prefix_ids_.empty(); }

 private:
  Tokenizer();
  // Builds the id tables (tokens, with added tokens' content at their ids) and the matchers
  // once the other fields are filled.
  void finalize(const std::vector<std::string>& tokens, const std::vector<int32_t>& types = {});
  // The encode pipeline. Each stage stops once out holds more than `limit` ids; the ids
  // produced so far are then a prefix of encode()'s.
  void encode_text(std::string_view text, std::vector<int32_t>& out, size_t limit,
                   EncodeStats* stats) const;
  // One text segment between added tokens; `at_start`: it starts the input (else it follows an
  // added token), for SentencePiece's space prefix.
  void encode_segment(std::string_view text, bool at_start, std::vector<int32_t>& out, size_t limit,
                      EncodeStats* stats) const;
  // from_vocab's two kinds: bos/eos ids, the chat template and finalize() are set after.
  static std::unique_ptr<Tokenizer> from_spm_vocab(const VocabData& v);
  static std::unique_ptr<Tokenizer> from_bpe_vocab(const VocabData& v);
  void encode_valid(std::string_view text, std::vector<int32_t>& out, size_t limit,
                    EncodeStats* stats) const;
  void encode_pieces(std::string_view text, std::vector<int32_t>& out, size_t limit,
                     EncodeStats* stats) const;
  void check_id(int32_t id) const;

  StringTable id_to_token_;     // vocabulary form (byte-level)
  StringTable id_bytes_;        // raw bytes
  std::vector<uint8_t> flags_;  // bit 0: added, bit 1: special
  std::vector<AddedToken> added_;
  std::unique_ptr<Bpe> bpe_;
  std::unique_ptr<PreTokenizer> pre_;
  std::unique_ptr<Spm> spm_;  // instead of bpe_ and pre_ for SentencePiece vocabularies
  // Where a SentencePiece text segment gets a "▁" first: nowhere, only at the start of the input
  // (Metaspace prepend_scheme "first"), or also after every added token (llama.cpp's
  // add_space_prefix, Hugging Face's Prepend normalizer / prepend_scheme "always").
  enum class SpacePrefix { kNone, kFirst, kAlways };
  SpacePrefix space_prefix_ = SpacePrefix::kNone;
  bool prefix_unless_space_ = false;  // Metaspace: no "▁" first when the text starts with one

  bool nfc_ = false;
  AddedTokenMatcher raw_matcher_, normalized_matcher_;
  std::vector<int32_t> prefix_ids_, suffix_ids_;
  int32_t bos_id_ = -1, eos_id_ = -1, pad_id_ = -1, unk_id_ = -1;
  size_t max_bytes_per_id_ = 0;
  std::string bos_token_, eos_token_, chat_template_, chat_template_source_;
  std::vector<int32_t> generation_eos_ids_;
};

// Streaming detokenization: feed ids one at a time, get the newly completed text. A UTF-8
// character split across tokens is held back until complete, so no U+FFFD is emitted for it;
// the concatenation of all output plus finish() equals Tokenizer::decode of the same ids.
class IncrementalDetokenizer {
 public:
  explicit IncrementalDetokenizer(const Tokenizer& tok, bool skip_special_tokens = false)
      : tok_(tok), skip_special_(skip_special_tokens) {}
  std::string step(int32_t id);
  std::string finish();  // flushes held bytes (an unfinished character becomes U+FFFD)
  const std::string& text() const { return text_; }  // everything emitted so far
  size_t held_bytes() const { return pending_.size(); }

 private:
  const Tokenizer& tok_;
  bool skip_special_;
  std::string pending_;
  std::string text_;
};

// Stop strings that can span tokens: text that could still be the start of a stop string is
// held back until it either completes the stop (generation ends there) or cannot.
class StopStringMatcher {
 public:
  explicit StopStringMatcher(std::vector<std::string> stops, bool include_stop = false);
  struct Result {
    std::string text;      // safe to emit now
    bool stopped = false;  // a stop string completed; nothing after it is emitted
    std::string stop;      // which one
  };
  Result feed(std::string_view text);
  std::string flush();  // end of generation without a stop: releases held-back text
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  bool include_stop_;
  bool stopped_ = false;
  std::string held_;
};

}  // namespace vllm::tok
