// BPE merge loop (see bpe.h for the complexity argument).
#include "tokenizer/bpe.h"

#include <queue>

#include "tokenizer/byte_level.h"

namespace vllm::tok {

Bpe::Bpe(StringTable tokens,
         const std::vector<std::pair<std::string_view, std::string_view>>& merges,
         bool ignore_merges, int32_t unk_id)
    : vocab_(std::move(tokens)), ignore_merges_(ignore_merges), unk_id_(unk_id) {
  vocab_.shrink_to_fit();
  index_.build(vocab_);
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

void Bpe::encode(std::string_view piece, std::vector<int32_t>& out) const {
  if (piece.empty()) return;
  const bool cacheable = piece.size() <= kCacheMaxPiece;
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(piece);
    if (it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const size_t start = out.size();
  if (ignore_merges_) {
    if (auto id = find(ByteLevel::get().encode(piece))) {
      out.push_back(*id);
    } else {
      merge_piece(piece, out);
    }
  } else {
    merge_piece(piece, out);
  }
  if (cacheable) {
    std::lock_guard<std::mutex> lock(cache_mu_);
    if (cache_.size() >= kCacheMaxEntries) cache_.clear();
    cache_.emplace(std::string(piece), std::vector<int32_t>(out.begin() + start, out.end()));
  }
}

void Bpe::merge_piece(std::string_view piece, std::vector<int32_t>& out) const {
  struct Sym {
    int32_t id, prev, next;
    bool alive;
  };
  std::vector<Sym> syms;
  syms.reserve(piece.size());
  for (char c : piece) {
    int32_t id = byte_ids_[static_cast<uint8_t>(c)];
    if (id < 0) id = unk_id_;
    if (id < 0) continue;  // no unk token: the byte is dropped, as Hugging Face does
    const auto n = static_cast<int32_t>(syms.size());
    syms.push_back(Sym{id, n - 1, n + 1, true});
  }
  if (syms.empty()) return;
  syms.back().next = -1;

  struct Cand {
    int32_t rank, pos, left_id, right_id, new_id;
    bool operator>(const Cand& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::priority_queue<Cand, std::vector<Cand>, std::greater<Cand>> heap;
  auto push_pair = [&](int32_t l) {
    if (l < 0) return;
    const int32_t r = syms[l].next;
    if (r < 0) return;
    if (const MergeTable::Entry* m = merges_.find(syms[l].id, syms[r].id))
      heap.push(Cand{m->rank, l, syms[l].id, syms[r].id, m->id});
  };
  for (int32_t i = 0; i + 1 < static_cast<int32_t>(syms.size()); ++i) push_pair(i);

  while (!heap.empty()) {
    const Cand c = heap.top();
    heap.pop();
    Sym& l = syms[c.pos];
    if (!l.alive || l.id != c.left_id || l.next < 0) continue;
    Sym& r = syms[l.next];
    if (r.id != c.right_id) continue;
    l.id = c.new_id;
    r.alive = false;
    l.next = r.next;
    if (r.next >= 0) syms[r.next].prev = c.pos;
    push_pair(l.prev);
    push_pair(c.pos);
  }
  for (int32_t i = 0; i >= 0; i = syms[i].next) out.push_back(syms[i].id);
}

}  // namespace vllm::tok
