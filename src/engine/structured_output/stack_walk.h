// The pushdown automaton at run time. A configuration is (DFA state, stack node); a stack
// node is (return state, parent node), hash-consed so equal stacks have equal ids and a set
// of configurations stays duplicate-free. A matcher state is a sorted set of configurations
// whose states all have byte edges ("normalized": calls entered and finished rules returned
// from), plus whether the root rule could end here.
//
// walk() runs a list of tokens (in vocabulary-trie order) from a set of configurations,
// sharing the automaton work of common prefixes and skipping every token below a prefix the
// automaton rejects. With track_pop, node -1 stands for an unknown caller: a token that needs
// to return into it is reported "uncertain" (the context-independent pre-pass of the mask
// cache); without it, node -1 is the root and returning past it is a rejection.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/structured_output/fsm.h"
#include "engine/structured_output/vocab_index.h"

namespace vllm::engine::so {

struct Config {
  int32_t state;
  int32_t node;  // -1: bottom of the stack
  bool operator==(const Config& o) const { return state == o.state && node == o.node; }
  bool operator<(const Config& o) const {
    return state != o.state ? state < o.state : node < o.node;
  }
};

struct StackNode {
  int32_t ret;
  int32_t parent;
};

class NodePool {
 public:
  int32_t intern(int32_t ret, int32_t parent);
  const StackNode& operator[](int32_t i) const { return nodes_[i]; }
  size_t size() const { return nodes_.size(); }
  void truncate(size_t n);  // forget nodes >= n (nothing may reference them)
  void clear() {
    nodes_.clear();
    slots_.clear();
  }

 private:
  // Open addressing over node ids (-1 empty): copying a pool (a matcher copy) is two vector
  // copies, no per-node allocations.
  size_t slot_of(int32_t ret, int32_t parent) const {
    const uint64_t k =
        (static_cast<uint64_t>(static_cast<uint32_t>(ret)) << 32) | static_cast<uint32_t>(parent);
    return static_cast<size_t>((k * 0x9E3779B97F4A7C15ull) >> 32) & (slots_.size() - 1);
  }
  void rehash(size_t n);
  std::vector<StackNode> nodes_;
  std::vector<int32_t> slots_;
};

// Where stack nodes live during one operation: a matcher's own pool (ids below kScratch)
// and, for mask walks, a scratch pool whose nodes are dropped afterwards.
class Stacks {
 public:
  static constexpr int32_t kScratch = 1 << 30;
  Stacks(NodePool* persist, bool write_persist)
      : persist_(persist), write_persist_(write_persist) {}
  const StackNode& get(int32_t id) const {
    return id >= kScratch ? scratch_[id - kScratch] : (*persist_)[id];
  }
  int32_t push(int32_t ret, int32_t parent) {
    return write_persist_ ? persist_->intern(ret, parent) : kScratch + scratch_.intern(ret, parent);
  }

 private:
  NodePool* persist_;
  bool write_persist_;
  NodePool scratch_;
};

// Expands `raw` through calls and returns into `out` (configurations with byte edges,
// sorted, unique). Returns true when some configuration finishes at the bottom of the stack.
bool closure(const Fsm& f, Stacks& stacks, std::vector<Config>& raw, std::vector<Config>& out);

// One byte: raw successors of `in`, then closure. Returns false when no configuration has an
// edge for the byte (`out` untouched then).
bool step(const Fsm& f, Stacks& stacks, const std::vector<Config>& in, uint8_t b,
          std::vector<Config>& out, bool& bottom_final, std::vector<Config>& scratch);

enum class TokenOutcome : uint8_t { kRejected, kAccepted, kUncertain };

// Reusable buffers for walk(); one per thread.
struct WalkBuffers {
  std::vector<std::vector<Config>> sets;
  std::vector<uint8_t> popped;
  std::vector<Config> raw;
};

// items: sorted positions (nullptr = all of them, in order); item_lcp: common prefix length
// of item i with item i-1 (nullptr = the vocabulary's own). on_token(item index, outcome) is
// called for every accepted or uncertain item (rejected ones are skipped silently).
template <class F>
void walk(const Fsm& f, Stacks& stacks, const VocabIndex& voc, const int32_t* items,
          const uint16_t* item_lcp, int32_t n, const std::vector<Config>& start, bool track_pop,
          WalkBuffers& wb, F&& on_token) {
  const size_t depth = static_cast<size_t>(voc.max_token_len()) + 1;
  if (wb.sets.size() < depth) wb.sets.resize(depth);
  if (wb.popped.size() < depth) wb.popped.resize(depth);
  wb.sets[0] = start;
  wb.popped[0] = 0;
  int32_t valid = 0;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t pos_i = items ? items[i] : i;
    const int32_t l = item_lcp ? item_lcp[i] : voc.sorted_lcp(pos_i);
    if (i == 0) valid = 0;
    valid = std::min(valid, l);
    const std::string_view t = voc.sorted_bytes(pos_i);
    int32_t pos = valid;
    const int32_t len = static_cast<int32_t>(t.size());
    while (pos < len) {
      const std::vector<Config>& in = wb.sets[pos];
      if (in.size() == 1) {
        // Inline fast path: one configuration, a target that neither calls nor finishes.
        const int32_t tgt = f.next[static_cast<size_t>(in[0].state) * f.num_classes +
                                   f.byte_class[static_cast<uint8_t>(t[pos])]];
        if (tgt < 0) break;
        if ((f.flags[tgt] & (Fsm::kFinal | Fsm::kHasCalls | Fsm::kHasBytes)) == Fsm::kHasBytes) {
          std::vector<Config>& out = wb.sets[pos + 1];
          const int32_t node = in[0].node;
          out.clear();
          out.push_back({tgt, node});
          wb.popped[pos + 1] = wb.popped[pos];
          ++pos;
          continue;
        }
      }
      bool bf = false;
      if (!step(f, stacks, wb.sets[pos], static_cast<uint8_t>(t[pos]), wb.sets[pos + 1], bf,
                wb.raw))
        break;
      wb.popped[pos + 1] = wb.popped[pos] | (track_pop && bf);
      ++pos;
    }
    if (pos == len) {
      on_token(i, TokenOutcome::kAccepted);
      valid = len;
      continue;
    }
    const TokenOutcome out = wb.popped[pos] ? TokenOutcome::kUncertain : TokenOutcome::kRejected;
    valid = pos;
    if (out == TokenOutcome::kUncertain) on_token(i, out);
    // Every following token sharing the first pos+1 bytes fails at the same byte.
    int32_t j = i + 1;
    if (pos == 0 && !items && out == TokenOutcome::kRejected)
      j = voc.first_byte_end(static_cast<uint8_t>(t[0]));
    while (j < n) {
      const int32_t lj = item_lcp ? item_lcp[j] : voc.sorted_lcp(items ? items[j] : j);
      if (lj <= pos) break;
      if (out == TokenOutcome::kUncertain) on_token(j, out);
      ++j;
    }
    i = j - 1;
  }
}

}  // namespace vllm::engine::so
