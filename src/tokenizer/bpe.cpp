// BPE merge loop (see bpe.h for the complexity argument).
#include "tokenizer/bpe.h"

#include <queue>

#include "tokenizer/byte_level.h"

namespace vllm::tok {

Bpe::Bpe(const std::vector<std::string>& tokens,
         const std::vector<std::pair<std::string, std::string>>& merges, bool ignore_merges,
         int32_t unk_id)
    : ignore_merges_(ignore_merges), unk_id_(unk_id) {
  vocab_.reserve(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].empty()) vocab_.emplace(tokens[i], static_cast<int32_t>(i));
  }
  const ByteLevel& bl = ByteLevel::get();
  for (int b = 0; b < 256; ++b) {
    auto it = vocab_.find(bl.encode_byte(static_cast<uint8_t>(b)));
    byte_ids_[b] = it == vocab_.end() ? -1 : it->second;
  }
  merges_.reserve(merges.size());
  std::string joined;
  for (size_t r = 0; r < merges.size(); ++r) {
    const auto& [l, rt] = merges[r];
    auto li = vocab_.find(l), ri = vocab_.find(rt);
    joined = l + rt;
    auto ji = vocab_.find(joined);
    if (li == vocab_.end() || ri == vocab_.end() || ji == vocab_.end()) continue;
    // First occurrence wins, as a later duplicate has a worse rank.
    merges_.emplace(key(li->second, ri->second), Merge{static_cast<int32_t>(r), ji->second});
  }
}

std::optional<int32_t> Bpe::find(std::string_view t) const {
  auto it = vocab_.find(t);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
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
    auto it = merges_.find(key(syms[l].id, syms[r].id));
    if (it != merges_.end())
      heap.push(Cand{it->second.rank, l, syms[l].id, syms[r].id, it->second.id});
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
