// Tokenizer core: encode and encode_bounded (added tokens -> NFC -> pre-tokenizer -> BPE ->
// BOS/EOS, stopping early when a token budget runs out), decode, id tables, and construction
// from GGUF vocabulary data. tokenizer_json.cpp holds the tokenizer.json loader.
#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "tokenizer/bpe.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/spm.h"
#include "tokenizer/unicode.h"

namespace vllm::tok {

namespace {

constexpr std::string_view kSpmSpace = "\xE2\x96\x81";  // U+2581

// A SentencePiece piece as text: each "▁" is a space.
std::string spm_unescape(std::string_view piece) {
  std::string out;
  out.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    if (piece.substr(i, kSpmSpace.size()) == kSpmSpace) {
      out += ' ';
      i += kSpmSpace.size();
    } else {
      out += piece[i++];
    }
  }
  return out;
}

// The GGUF tokens matched whole in the text, by token type: control (3, special) and
// user-defined (4), and with `unknown_too` the unknown token (2, special).
std::vector<AddedToken> typed_added_tokens(const VocabData& v, bool unknown_too) {
  std::vector<AddedToken> out;
  for (size_t i = 0; i < v.tokens.size() && i < v.token_types.size(); ++i) {
    const int32_t type = v.token_types[i];
    if (type != 3 && type != 4 && !(unknown_too && type == 2)) continue;
    AddedToken a;
    a.id = static_cast<int32_t>(i);
    a.content = v.tokens[i];
    a.special = type != 4;
    a.rstrip =
        v.phi3_rstrip && a.content != "<unk>" && a.content != "<s>" && a.content != "<|endoftext|>";
    out.push_back(std::move(a));
  }
  return out;
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

void Tokenizer::finalize(const std::vector<std::string>& tokens,
                         const std::vector<int32_t>& types) {
  size_t n = tokens.size();
  for (const auto& t : added_) {
    if (t.id < 0) throw std::invalid_argument("added token '" + t.content + "' has no id");
    n = std::max(n, static_cast<size_t>(t.id) + 1);
  }
  std::vector<int32_t> added_at(n, -1);  // index into added_ of the token that owns an id
  for (size_t i = 0; i < added_.size(); ++i) added_at[added_[i].id] = static_cast<int32_t>(i);
  auto text_of = [&](size_t id) -> std::string_view {
    if (added_at[id] >= 0) return added_[added_at[id]].content;
    return id < tokens.size() ? std::string_view(tokens[id]) : std::string_view();
  };
  size_t bytes = 0;
  for (size_t i = 0; i < n; ++i) bytes += text_of(i).size();
  id_to_token_ = StringTable();
  id_bytes_ = StringTable();
  id_to_token_.reserve(n, bytes);
  id_bytes_.reserve(n, bytes);
  const ByteLevel& bl = ByteLevel::get();
  for (size_t i = 0; i < n; ++i) {
    id_to_token_.push_back(text_of(i));
    if (!spm_) {
      id_bytes_.push_back(bl.decode_token(text_of(i)));
    } else if (const int b = spm_->byte_of(static_cast<int32_t>(i)); b >= 0) {
      id_bytes_.push_back(std::string(1, static_cast<char>(b)));
    } else if (added_at[i] >= 0 || (i < types.size() && types[i] == 2)) {
      id_bytes_.push_back(text_of(i));  // control, unknown and user-defined: as written
    } else {
      id_bytes_.push_back(spm_unescape(text_of(i)));  // "▁" is a space
    }
  }
  id_bytes_.shrink_to_fit();
  flags_.assign(n, 0);
  for (const auto& t : added_) flags_[t.id] = static_cast<uint8_t>(1 | (t.special ? 2 : 0));
  raw_matcher_.build(added_, /*normalized_set=*/false);
  normalized_matcher_.build(added_, /*normalized_set=*/true);
  // Every id stands for at most max_len bytes of the text BPE sees (added tokens match their
  // content exactly, an invalid byte is one id), and NFC shrinks text by at most
  // nfc_max_shrink(). Anything that can consume input without producing ids voids the bound.
  size_t max_len = 1;
  for (size_t i = 0; i < n; ++i) max_len = std::max(max_len, id_bytes_[i].size());
  const bool swallows = std::any_of(added_.begin(), added_.end(),
                                    [](const AddedToken& t) { return t.lstrip || t.rstrip; });
  const bool drops = spm_ ? spm_->drops_bytes() : pre_->removes_text() || bpe_->drops_bytes();
  max_bytes_per_id_ = swallows || drops ? 0 : max_len * (nfc_ ? nfc_max_shrink() : 1);
  auto name_of = [&](int32_t id) {
    return id >= 0 && id < vocab_size() ? std::string(id_to_token_[id]) : std::string();
  };
  if (bos_token_.empty()) bos_token_ = name_of(bos_id_);
  if (eos_token_.empty()) eos_token_ = name_of(eos_id_);
}

std::unique_ptr<Tokenizer> Tokenizer::from_spm_vocab(const VocabData& v) {
  auto t = std::unique_ptr<Tokenizer>(new Tokenizer());
  std::vector<bool> byte_tokens(v.tokens.size(), false);
  for (size_t i = 0; i < v.tokens.size() && i < v.token_types.size(); ++i)
    byte_tokens[i] = v.token_types[i] == 6;
  t->unk_id_ = v.unk_id;
  t->spm_ = std::make_unique<Spm>(StringTable::of(v.tokens), v.scores, byte_tokens, v.unk_id);
  t->space_prefix_ = v.add_space_prefix ? SpacePrefix::kAlways : SpacePrefix::kNone;
  // The unknown token too, as llama.cpp and Hugging Face match <unk> in SentencePiece text.
  t->added_ = typed_added_tokens(v, /*unknown_too=*/true);
  return t;
}

std::unique_ptr<Tokenizer> Tokenizer::from_bpe_vocab(const VocabData& v) {
  auto t = std::unique_ptr<Tokenizer>(new Tokenizer());
  t->pre_ = PreTokenizer::from_gguf_pre(v.pre);
  // Qwen2's tokenizer.json normalizes to NFC; the other supported families do not normalize.
  t->nfc_ = v.pre == "qwen2" || v.pre == "deepseek-r1-qwen";
  std::vector<std::pair<std::string_view, std::string_view>> merges;
  merges.reserve(v.merges.size());
  for (const auto& m : v.merges) {
    const size_t sp = m.find(' ', 1);
    if (sp == std::string::npos) throw std::invalid_argument("malformed GGUF merge '" + m + "'");
    const std::string_view mv(m);
    merges.emplace_back(mv.substr(0, sp), mv.substr(sp + 1));
  }
  t->unk_id_ = v.unk_id;
  t->bpe_ = std::make_unique<Bpe>(StringTable::of(v.tokens), merges, t->pre_->ignore_merges_hint(),
                                  v.unk_id);
  t->added_ = typed_added_tokens(v, /*unknown_too=*/false);
  return t;
}

std::unique_ptr<Tokenizer> Tokenizer::from_vocab(const VocabData& v) {
  if (v.model != "gpt2" && v.model != "llama")
    throw std::invalid_argument("unsupported tokenizer.ggml.model '" + v.model +
                                "' (supported: 'gpt2', byte-level BPE, and 'llama', "
                                "SentencePiece-style BPE)");
  if (v.tokens.empty()) throw std::invalid_argument("GGUF vocabulary has no tokens");
  if (!v.scores.empty() && v.scores.size() != v.tokens.size())
    throw std::invalid_argument(
        "GGUF tokenizer.ggml.scores has " + std::to_string(v.scores.size()) +
        " entries but tokenizer.ggml.tokens has " + std::to_string(v.tokens.size()));
  std::unique_ptr<Tokenizer> t = v.model == "llama" ? from_spm_vocab(v) : from_bpe_vocab(v);
  t->bos_id_ = v.bos_id;
  t->eos_id_ = v.eos_id;
  t->pad_id_ = v.pad_id;
  auto check = [&](int32_t id, const char* what) {
    if (id >= static_cast<int32_t>(v.tokens.size()))
      throw std::invalid_argument(std::string("GGUF ") + what + " id " + std::to_string(id) +
                                  " is outside the vocabulary");
  };
  check(v.bos_id, "bos");
  check(v.eos_id, "eos");
  check(v.pad_id, "pad");
  check(v.unk_id, "unk");
  if (v.add_bos && v.bos_id >= 0) t->prefix_ids_.push_back(v.bos_id);
  if (v.add_eos && v.eos_id >= 0) t->suffix_ids_.push_back(v.eos_id);
  t->chat_template_ = v.chat_template;
  t->finalize(v.tokens, v.token_types);
  return t;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special_tokens,
                                       EncodeStats* stats) const {
  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_special_tokens) out.insert(out.end(), prefix_ids_.begin(), prefix_ids_.end());
  std::vector<TextSegment> segs;
  raw_matcher_.split(text, segs);
  constexpr size_t kNoLimit = std::numeric_limits<size_t>::max();
  bool at_start = true;  // segments alternate: text follows an added token unless first
  for (const auto& s : segs) {
    if (s.id >= 0) {
      out.push_back(s.id);
    } else {
      encode_segment(s.text, at_start, out, kNoLimit, stats);
    }
    at_start = false;
  }
  if (add_special_tokens) out.insert(out.end(), suffix_ids_.begin(), suffix_ids_.end());
  return out;
}

bool Tokenizer::encode_bounded(std::string_view text, bool add_special_tokens, size_t max_tokens,
                               std::vector<int32_t>& out, EncodeStats* stats) const {
  out.clear();
  const size_t fixed = add_special_tokens ? prefix_ids_.size() + suffix_ids_.size() : 0;
  if (fixed > max_tokens) return false;
  // The text alone yields at least ceil(bytes / max_bytes_per_id_) ids.
  if (max_bytes_per_id_ > 0 &&
      (text.size() + max_bytes_per_id_ - 1) / max_bytes_per_id_ > max_tokens - fixed)
    return false;
  // The ids come out in order and are never taken back, so the text's ids may stop as soon as
  // they alone pass what the budget leaves after the suffix.
  const size_t limit = max_tokens - (add_special_tokens ? suffix_ids_.size() : 0);
  if (add_special_tokens) out.insert(out.end(), prefix_ids_.begin(), prefix_ids_.end());
  std::vector<TextSegment> segs;
  raw_matcher_.split(text, segs);
  bool at_start = true;  // segments alternate: text follows an added token unless first
  for (const auto& s : segs) {
    if (s.id >= 0) {
      out.push_back(s.id);
    } else {
      encode_segment(s.text, at_start, out, limit, stats);
    }
    at_start = false;
    if (out.size() > limit) {
      out.clear();
      return false;
    }
  }
  if (add_special_tokens) out.insert(out.end(), suffix_ids_.begin(), suffix_ids_.end());
  return true;
}

void Tokenizer::encode_segment(std::string_view text, bool at_start, std::vector<int32_t>& out,
                               size_t limit, EncodeStats* stats) const {
  if (!spm_) {
    encode_text(text, out, limit, stats);
    return;
  }
  // llama.cpp's SentencePiece input: a space first where the text starts or follows an added
  // token (add_space_prefix; tokenizer.json: Prepend, or Metaspace's prepend_scheme, which adds
  // none to text already starting with a space), then every space as "▁". No normalization.
  std::string escaped;
  escaped.reserve(text.size() + text.size() / 4 + 3);
  const bool prefix =
      space_prefix_ == SpacePrefix::kAlways || (space_prefix_ == SpacePrefix::kFirst && at_start);
  if (prefix && !(prefix_unless_space_ && !text.empty() && text[0] == ' ')) escaped += kSpmSpace;
  for (const char c : text) {
    if (c == ' ')
      escaped += kSpmSpace;
    else
      escaped += c;
  }
  spm_->encode(escaped, out, limit, stats);
}

void Tokenizer::encode_text(std::string_view text, std::vector<int32_t>& out, size_t limit,
                            EncodeStats* stats) const {
  // Valid runs go through the normal pipeline; each invalid byte is its own piece so that no
  // input byte is ever dropped (Hugging Face cannot receive invalid UTF-8 at all).
  size_t run = 0, i = 0;
  while (i < text.size() && out.size() <= limit) {
    if (static_cast<uint8_t>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_valid_len(text, i);
    if (n) {
      i += n;
      continue;
    }
    if (i > run) encode_valid(text.substr(run, i - run), out, limit, stats);
    bpe_->encode(text.substr(i, 1), out, limit, stats);
    run = ++i;
  }
  if (i > run && out.size() <= limit) encode_valid(text.substr(run, i - run), out, limit, stats);
}

void Tokenizer::encode_valid(std::string_view text, std::vector<int32_t>& out, size_t limit,
                             EncodeStats* stats) const {
  std::string normalized;
  if (nfc_ && !nfc_quick_stable(text)) {
    normalized = nfc_normalize(text);
    text = normalized;
  }
  if (normalized_matcher_.empty()) {
    encode_pieces(text, out, limit, stats);
    return;
  }
  std::vector<TextSegment> segs;
  normalized_matcher_.split(text, segs);
  for (const auto& s : segs) {
    if (out.size() > limit) return;
    if (s.id >= 0) {
      out.push_back(s.id);
    } else {
      encode_pieces(s.text, out, limit, stats);
    }
  }
}

void Tokenizer::encode_pieces(std::string_view text, std::vector<int32_t>& out, size_t limit,
                              EncodeStats* stats) const {
  pre_->for_each(text, [&](std::string_view piece) {
    bpe_->encode(piece, out, limit, stats);
    return out.size() <= limit;
  });
}

void Tokenizer::check_id(int32_t id) const {
  if (id < 0 || id >= vocab_size())
    throw std::out_of_range("token id " + std::to_string(id) + " is out of range [0, " +
                            std::to_string(vocab_size()) + ")");
}

std::string_view Tokenizer::token_bytes(int32_t id) const {
  check_id(id);
  return id_bytes_[id];
}

std::string Tokenizer::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  std::string bytes;
  for (int32_t id : ids) {
    check_id(id);
    if (skip_special_tokens && (flags_[id] & 2)) continue;
    bytes += id_bytes_[id];
  }
  if (spm_ && space_prefix_ != SpacePrefix::kNone && !bytes.empty() && bytes[0] == ' ')
    bytes.erase(0, 1);
  return utf8_lossy(bytes);
}

std::optional<int32_t> Tokenizer::token_to_id(std::string_view token) const {
  for (const auto& a : added_) {
    if (a.content == token) return a.id;
  }
  if (spm_) {
    const int32_t id = spm_->find(token);
    return id >= 0 ? std::optional<int32_t>(id) : std::nullopt;
  }
  return bpe_->find(token);
}

std::string Tokenizer::id_to_token(int32_t id) const {
  check_id(id);
  return std::string(id_to_token_[id]);
}

bool Tokenizer::is_special(int32_t id) const {
  return id >= 0 && id < vocab_size() && (flags_[id] & 2);
}
bool Tokenizer::is_added(int32_t id) const {
  return id >= 0 && id < vocab_size() && (flags_[id] & 1);
}

std::vector<int32_t> Tokenizer::stop_ids() const {
  std::vector<int32_t> ids = generation_eos_ids_;
  if (eos_id_ >= 0) ids.push_back(eos_id_);
  // End-of-turn tokens of the chat templates, as llama.cpp ends generation on them (a GGUF
  // names only one EOS: Gemma's <eos>, while its turns end with <end_of_turn>; gpt-oss's
  // harmony answers end with <|return|> or, calling a tool, <|call|>, never with <|end|>).
  for (const char* name :
       {"<|im_end|>", "<|endoftext|>", "<end_of_turn>", "<|eot_id|>", "<|return|>", "<|call|>"}) {
    if (auto id = token_to_id(name); id && is_special(*id)) ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace vllm::tok
