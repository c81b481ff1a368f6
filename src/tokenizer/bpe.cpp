// BPE merge loop and the windowing of long pieces (see bpe.h for the complexity argument).
#include "tokenizer/bpe.h"

#include <algorithm>
#include <functional>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/windowed_merge.h"

namespace vllm::tok {
namespace {

struct Sym {
  int32_t id;  // -1 once merged into its left neighbour
  int32_t prev, next;
  uint32_t end;  // offset just past the symbol's last byte
};

struct Cand {
  int32_t rank, pos, left_id, right_id, new_id;
  bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
};

// Per-thread buffers: the merge loop runs once per piece (or window), and allocating its
// arrays each time dominated the cost of short pieces.
struct MergeScratch {
  std::vector<Sym> syms;
  std::vector<Cand> heap;
  std::vector<int32_t> ids;
  std::vector<uint32_t> ends;
};

MergeScratch& scratch() {
  thread_local MergeScratch s;
  return s;
}

}  // namespace

Bpe::Bpe(StringTable tokens,
         const std::vector<std::pair<std::string_view, std::string_view>>& merges,
         bool ignore_merges, int32_t unk_id)
    : vocab_(std::move(tokens)), ignore_merges_(ignore_merges), unk_id_(unk_id) {
  vocab_.shrink_to_fit();
  index_.build(vocab_);
  for (size_t i = 0; i < vocab_.size(); ++i)
    max_token_chars_ = std::max(max_token_chars_, vocab_[i].size());
  const ByteLevel& bl = ByteLevel::get();
  for (int b = 0; b < 256; ++b)
    byte_ids_[b] = index_.find(vocab_, bl.encode_byte(static_cast<uint8_t>(b)));
  merges_.reserve(merges.size());
  std::string joined;
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& [l, rt] = merges[r];
    const int32_t li = index_.find(vocab_, l), ri = index_.find(vocab_, rt);
    joined.assign(l);
    joined.append(rt);
    const int32_t ji = index_.find(vocab_, joined);
    if (li < 0 || ri < 0 || ji < 0) continue;
    // First occurrence wins, as a later duplicate has a worse rank.
    merges_.insert(li, ri, static_cast<int32_t>(r), ji);
  }
}

std::optional<int32_t> Bpe::find(std::string_view t) const {
  const int32_t id = index_.find(vocab_, t);
  if (id < 0) return std::nullopt;
  return id;
}

bool Bpe::drops_bytes() const {
  if (unk_id_ >= 0) return false;
  return std::any_of(std::begin(byte_ids_), std::end(byte_ids_), [](int32_t id) { return id < 0; });
}

void Bpe::encode(std::string_view piece, std::vector<int32_t>& out, size_t limit,
                 EncodeStats* stats) const {
  if (piece.empty()) return;
  if (stats) ++stats->pieces;
  if (piece.size() == 1) {  // one symbol, nothing to merge (an invalid byte, a digit, ...)
    int32_t id = byte_ids_[static_cast<uint8_t>(piece[0])];
    if (id < 0) id = unk_id_;
    if (id >= 0) out.push_back(id);
    return;
  }
  // A two-byte piece is one merge-table probe: cheaper than the cache's lock and lookup.
  const bool cacheable = piece.size() > 2 && piece.size() <= kCacheMaxPiece;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(piece);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t start = out.size();
  // Every byte becomes at least one character of the byte-level form, so a piece longer than
  // the longest vocabulary string cannot be a single token.
  std::optional<int32_t> whole;
  if (ignore_merges_ && piece.size() <= max_token_chars_)
    whole = find(ByteLevel::get().encode(piece));
  if (whole) {
    out.push_back(*whole);
  } else if (piece.size() > kMaxPieceBytes) {
    merge_long(piece, out, limit, stats);
  } else {
    merge(piece, out, nullptr, stats);
  }
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cache_.size() >= kCacheMaxEntries) cache_.clear();
    cache_.emplace(std::string(piece), std::vector<int32_t>(out.begin() + start, out.end()));
  }
}

void Bpe::merge_long(std::string_view piece, std::vector<int32_t>& out, size_t limit,
                     EncodeStats* stats) const {
  MergeScratch& sc = scratch();
  merge_in_windows(piece, out, limit, kMaxPieceBytes, kCommitBytes, sc.ids, sc.ends,
                   [&](std::string_view w, std::vector<int32_t>& ids, std::vector<uint32_t>* ends) {
                     merge(w, ids, ends, stats);
                   });
}

void Bpe::merge(std::string_view bytes, std::vector<int32_t>& ids, std::vector<uint32_t>* ends,
                EncodeStats* stats) const {
  MergeScratch& sc = scratch();
  std::vector<Sym>& syms = sc.syms;
  syms.clear();
  for (size_t i = 0; i < bytes.size(); ++i) {
    int32_t id = byte_ids_[static_cast<uint8_t>(bytes[i])];
    if (id < 0) id = unk_id_;
    if (id < 0) continue;  // no unk token: the byte is dropped, as Hugging Face does
    const auto n = static_cast<int32_t>(syms.size());
    syms.push_back(Sym{id, n - 1, n + 1, static_cast<uint32_t>(i + 1)});
  }
  if (stats) {
    ++stats->merge_loops;
    stats->merge_bytes += bytes.size();
    stats->max_merge_bytes = std::max(stats->max_merge_bytes, bytes.size());
  }
  if (syms.empty()) return;
  syms.back().next = -1;

  std::vector<Cand>& heap = sc.heap;
  heap.clear();
  const auto cmp = std::greater<Cand>();
  auto add_pair = [&](int32_t l) {
    if (l < 0) return false;
    const int32_t r = syms[l].next;
    if (r < 0) return false;
    const MergeTable::Entry* m = merges_.find(syms[l].id, syms[r].id);
    if (m == nullptr) return false;
    heap.push_back(Cand{m->rank, l, syms[l].id, syms[r].id, m->id});
    return true;
  };
  auto push_pair = [&](int32_t l) {
    if (add_pair(l)) std::push_heap(heap.begin(), heap.end(), cmp);
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(syms.size()); ++i) add_pair(i);
  std::make_heap(heap.begin(), heap.end(), cmp);

  size_t steps = 0;
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), cmp);
    const Cand c = heap.back();
    heap.pop_back();
    ++steps;
    Sym& l = syms[c.pos];
    if (l.id != c.left_id || l.next < 0) continue;
    Sym& r = syms[l.next];
    if (r.id != c.right_id) continue;
    l.id = c.new_id;
    l.end = r.end;
    r.id = -1;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = c.pos;
    push_pair(l.prev);
    push_pair(c.pos);
  }
  if (stats) stats->merge_steps += steps;
  for (int32_t i = 0; i >= 0; i = syms[i].next) {
    ids.push_back(syms[i].id);
    if (ends) ends->push_back(syms[i].end);
  }
}

}  // namespace vllm::tok
