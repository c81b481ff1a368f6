// Spm: SentencePiece-style score-ordered merging (spm.h).
#include "tokenizer/spm.h"

#include <algorithm>
#include <queue>
#include <stdexcept>

#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/windowed_merge.h"

namespace vllm::tok {

namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// "<0xXX>" -> XX, else -1.
int parse_byte_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') return -1;
  int v = 0;
  for (size_t i = 3; i < 5; ++i) {
    const char c = t[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

// Whether the "▁" at text[at] comes right after another "▁".
bool follows_space(std::string_view text, size_t at) {
  return at >= kSpace.size() && text.substr(at - kSpace.size(), kSpace.size()) == kSpace;
}

// Length of the symbol starting at text[i]: a whole valid UTF-8 character, else one byte.
size_t symbol_len(std::string_view text, size_t i) {
  if (static_cast<uint8_t>(text[i]) < 0x80) return 1;
  const size_t n = utf8_valid_len(text, i);
  return n ? n : 1;
}

}  // namespace

Spm::Spm(StringTable tokens, const std::vector<float>& scores, const std::vector<bool>& byte_tokens,
         int32_t unk_id, const std::vector<std::pair<std::string_view, std::string_view>>* merges,
         bool split_every_space)
    : vocab_(std::move(tokens)), unk_id_(unk_id), split_every_space_(split_every_space) {
  index_.build(vocab_);
  if (merges) {
    use_merges_ = true;
    merges_.reserve(merges->size());
    std::string joined;
    for (size_t r = 0; r < merges->size(); ++r) {
      const auto& [l, rt] = (*merges)[r];
      const int32_t li = index_.find(vocab_, l), ri = index_.find(vocab_, rt);
      joined.assign(l);
      joined.append(rt);
      const int32_t ji = index_.find(vocab_, joined);
      if (li < 0 || ri < 0 || ji < 0) continue;
      merges_.insert(li, ri, static_cast<int32_t>(r), ji);  // a later duplicate ranks worse
    }
  }
  const size_t n = vocab_.size();
  scores_.assign(n, 0.0f);
  for (size_t i = 0; i < n && i < scores.size(); ++i) scores_[i] = scores[i];
  std::fill(std::begin(byte_ids_), std::end(byte_ids_), -1);
  byte_of_.assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    if (i >= byte_tokens.size() || !byte_tokens[i]) continue;
    const int b = parse_byte_token(vocab_[i]);
    if (b < 0) continue;
    byte_of_[i] = static_cast<int16_t>(b);
    if (byte_ids_[b] < 0) byte_ids_[b] = static_cast<int32_t>(i);
  }
  // Cutting the text before each "▁" that follows another character changes nothing when no
  // piece (other than a byte token) holds such a "▁": merges never cross the cut.
  split_at_spaces_ = true;
  for (size_t i = 0; i < n && split_at_spaces_; ++i) {
    const std::string_view t = vocab_[i];
    if (byte_of_[i] >= 0) continue;
    for (size_t at = t.find(kSpace, 1); at != std::string_view::npos; at = t.find(kSpace, at + 1))
      if (!follows_space(t, at)) {
        split_at_spaces_ = false;
        break;
      }
  }
}

bool Spm::drops_bytes() const {
  if (unk_id_ >= 0) return false;
  return std::any_of(std::begin(byte_ids_), std::end(byte_ids_), [](int32_t id) { return id < 0; });
}

int Spm::byte_of(int32_t id) const {
  return id >= 0 && static_cast<size_t>(id) < byte_of_.size() ? byte_of_[id] : -1;
}

void Spm::merge(std::string_view text, std::vector<int32_t>& ids, std::vector<uint32_t>* ends,
                EncodeStats* stats) const {
  struct Sym {
    uint32_t start, len;
    int32_t prev, next;
    int32_t id;  // the piece it is, or -1 (a character without one)
  };
  std::vector<Sym> syms;
  syms.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t len = symbol_len(text, i);
    const int32_t k = static_cast<int32_t>(syms.size());
    syms.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(len), k - 1, k + 1,
                    index_.find(vocab_, text.substr(i, len))});
    i += len;
  }
  if (syms.empty()) return;
  syms.back().next = -1;
  struct Pair {
    float score;  // the piece's score, or minus the merge's rank
    int32_t left;
    uint32_t len;  // the merged piece's length, to recognise a stale entry
    int32_t id;    // the merged piece
  };
  // Highest score first; among equal scores the leftmost.
  auto lower = [](const Pair& a, const Pair& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(lower)> heap(lower);
  auto consider = [&](int32_t l) {
    if (l < 0 || syms[l].next < 0) return;
    const Sym& a = syms[l];
    const Sym& b = syms[a.next];
    if (use_merges_) {
      if (a.id < 0 || b.id < 0) return;
      if (const MergeTable::Entry* m = merges_.find(a.id, b.id))
        heap.push({-static_cast<float>(m->rank), l, a.len + b.len, m->id});
      return;
    }
    const int32_t id = index_.find(vocab_, text.substr(a.start, a.len + b.len));
    if (id >= 0) heap.push({scores_[id], l, a.len + b.len, id});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(syms.size()); ++i) consider(i);
  size_t steps = 0;
  while (!heap.empty()) {
    const Pair p = heap.top();
    heap.pop();
    ++steps;
    Sym& a = syms[p.left];
    if (a.len == 0 || a.next < 0) continue;
    Sym& b = syms[a.next];
    if (b.len == 0 || a.len + b.len != p.len) continue;  // one side changed since
    a.len += b.len;
    a.id = p.id;
    b.len = 0;
    a.next = b.next;
    if (a.next >= 0) syms[a.next].prev = p.left;
    consider(a.prev);
    consider(p.left);
  }
  if (stats) {
    ++stats->merge_loops;
    stats->merge_bytes += text.size();
    stats->max_merge_bytes = std::max(stats->max_merge_bytes, text.size());
    stats->merge_steps += steps;
  }
  for (int32_t i = 0; i >= 0; i = syms[i].next) {
    const Sym& s = syms[i];
    if (s.id >= 0) {
      ids.push_back(s.id);
      if (ends) ends->push_back(s.start + s.len);
      continue;
    }
    // A character without a piece: its bytes (or one unknown token for it).
    bool all_bytes = true;
    for (uint32_t k = 0; k < s.len; ++k)
      all_bytes &= byte_ids_[static_cast<uint8_t>(text[s.start + k])] >= 0;
    if (!all_bytes) {
      if (unk_id_ >= 0) {
        ids.push_back(unk_id_);
        if (ends) ends->push_back(s.start + s.len);
      }
      continue;
    }
    for (uint32_t k = 0; k < s.len; ++k) {
      ids.push_back(byte_ids_[static_cast<uint8_t>(text[s.start + k])]);
      if (ends) ends->push_back(s.start + k + 1);
    }
  }
}

void Spm::encode_piece(std::string_view piece, std::vector<int32_t>& out, size_t limit,
                       EncodeStats* stats) const {
  if (stats) ++stats->pieces;
  if (piece.size() <= kMaxPieceBytes) {
    merge(piece, out, nullptr, stats);
    return;
  }
  std::vector<int32_t> ids;
  std::vector<uint32_t> ends;
  merge_in_windows(piece, out, limit, kMaxPieceBytes, kCommitBytes, ids, ends,
                   [&](std::string_view w, std::vector<int32_t>& got, std::vector<uint32_t>* at) {
                     merge(w, got, at, stats);
                   });
}

void Spm::encode(std::string_view escaped, std::vector<int32_t>& out, size_t limit,
                 EncodeStats* stats) const {
  if (!split_at_spaces_ && !split_every_space_) {
    encode_piece(escaped, out, limit, stats);
    return;
  }
  // Pieces: each starts at a run of "▁" that follows another character (or at the start).
  size_t start = 0;
  for (size_t at = escaped.find(kSpace, 1); at != std::string_view::npos && out.size() <= limit;
       at = escaped.find(kSpace, at + kSpace.size())) {
    if (!split_every_space_ && follows_space(escaped, at)) continue;  // inside a run of spaces
    encode_piece(escaped.substr(start, at - start), out, limit, stats);
    start = at;
  }
  if (start < escaped.size() && out.size() <= limit)
    encode_piece(escaped.substr(start), out, limit, stats);
}

}  // namespace vllm::tok
