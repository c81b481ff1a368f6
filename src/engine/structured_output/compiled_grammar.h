// A grammar compiled for one vocabulary: the pushdown automaton (fsm.h), the vocabulary trie
// (vocab_index.h) and the two token-mask caches every matcher of this grammar shares.
//
//  * Context-independent sets, per automaton state T (computed on first use, like
//    xgrammar's adaptive token mask cache): walking the vocabulary trie from T with an
//    unknown caller splits tokens into accepted (consumed without leaving T's rule),
//    rejected, and uncertain (they finish T's rule mid-token, so the caller decides). The
//    string-content state of a JSON grammar accepts ~all tokens and leaves only the few with
//    a closing quote in the middle uncertain, whatever property the string belongs to.
//  * Full masks, keyed by the whole normalized state (every configuration's state and stack):
//    a bounded LRU. A hit is one copy; a miss ORs the context-independent sets of the
//    configurations and checks only their uncertain tokens against the real stack.
//
// Immutable apart from the caches, which are guarded by a mutex, so one instance is shared
// by all requests (and threads) that use the same grammar text.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "engine/structured_output/fsm.h"
#include "engine/structured_output/vocab_index.h"

namespace vllm::engine::so {

struct CacheLimits {
  size_t mask_cache_bytes = 16u << 20;  // full-state masks, LRU
  size_t ci_cache_bytes = 32u << 20;    // context-independent sets; past it, computed per use
};

// A token set stored as a sorted id list when that is smaller than a bitmask.
class TokenSet {
 public:
  void assign(std::vector<int32_t> ids, int32_t vocab_size);
  void or_into(uint32_t* words) const;
  size_t count() const { return count_; }
  size_t memory_bytes() const { return ids_.size() * 4 + bits_.size() * 4; }

 private:
  std::vector<int32_t> ids_;
  std::vector<uint32_t> bits_;
  size_t count_ = 0;
};

struct ContextIndependent {
  TokenSet accepted;                    // token ids
  std::vector<int32_t> uncertain;       // sorted vocabulary positions
  std::vector<uint16_t> uncertain_lcp;  // common prefix with the previous uncertain token
  size_t memory_bytes() const {
    return accepted.memory_bytes() + uncertain.size() * 6 + sizeof(*this);
  }
};

// Context-independent sets shared by all grammars of one GrammarCompiler (one vocabulary):
// keyed by a canonical spelling of everything reachable from the state (byte transitions,
// calls, final flags), so e.g. the JSON string-content state is walked over the vocabulary
// once per process instead of once per schema. Bounded by bytes (LRU).
class SharedCiCache {
 public:
  explicit SharedCiCache(size_t max_bytes) : max_bytes_(max_bytes) {}
  std::shared_ptr<const ContextIndependent> find(const std::string& sig);
  void insert(const std::string& sig, std::shared_ptr<const ContextIndependent> ci);
  int64_t hits() const;

 private:
  mutable std::mutex mu_;
  size_t max_bytes_, bytes_ = 0;
  int64_t hits_ = 0;
  using Entry = std::pair<std::string, std::shared_ptr<const ContextIndependent>>;
  std::list<Entry> lru_;
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

// The canonical spelling used as SharedCiCache key; empty when more than max_states states
// are reachable (large rules are not worth sharing).
std::string reachable_signature(const Fsm& f, int32_t state, int32_t max_states = 512);

struct GrammarStats {
  int32_t num_states = 0, num_rules = 0, num_classes = 0;
  size_t fsm_bytes = 0, ci_bytes = 0, mask_cache_bytes = 0;
  int64_t ci_computed = 0, ci_shared = 0, mask_hits = 0, mask_misses = 0;
  size_t mask_entries = 0;
};

class CompiledGrammar {
 public:
  CompiledGrammar(Fsm fsm, std::shared_ptr<const VocabIndex> vocab, int32_t num_rules,
                  CacheLimits limits = {}, std::shared_ptr<SharedCiCache> shared = nullptr);
  const Fsm& fsm() const { return fsm_; }
  const VocabIndex& vocab() const { return *vocab_; }
  int32_t vocab_size() const { return vocab_->vocab_size(); }

  std::shared_ptr<const ContextIndependent> context_independent(int32_t state) const;
  // Copies the cached mask for `key` into words (mask_words() of them); false on a miss.
  bool lookup_mask(const std::string& key, uint32_t* words) const;
  void store_mask(const std::string& key, const uint32_t* words) const;
  // Per state: the fewest bytes that finish its rule (INT32_MAX: never), computed on first
  // use. For shortest completions (tests, forced endings), not for masks.
  const std::vector<int32_t>& finish_distance() const;
  GrammarStats stats() const;
  size_t memory_bytes() const;  // automaton + caches now

 private:
  std::shared_ptr<ContextIndependent> compute_ci(int32_t state) const;
  // Per rule: states of the rule and of every rule it can call (bounds a signature's size).
  const std::vector<int32_t>& rule_closure_states() const;

  Fsm fsm_;
  std::shared_ptr<const VocabIndex> vocab_;
  int32_t num_rules_;
  CacheLimits limits_;
  std::shared_ptr<SharedCiCache> shared_;

  mutable std::mutex mu_;
  mutable std::vector<std::shared_ptr<const ContextIndependent>> ci_;
  mutable size_t ci_bytes_ = 0;
  mutable int64_t ci_computed_ = 0, ci_shared_ = 0, hits_ = 0, misses_ = 0;
  struct MaskEntry {
    std::string key;
    TokenSet set;
  };
  mutable std::list<MaskEntry> lru_;  // front = most recent
  mutable std::unordered_map<std::string_view, std::list<MaskEntry>::iterator> index_;
  mutable size_t mask_bytes_ = 0;
  mutable std::once_flag dist_once_, closure_once_;
  mutable std::vector<int32_t> closure_;
  mutable std::vector<int32_t> dist_;
};

}  // namespace vllm::engine::so
