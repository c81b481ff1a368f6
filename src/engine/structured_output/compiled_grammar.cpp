// The shared token-mask caches of a compiled grammar (see compiled_grammar.h).
#include "engine/structured_output/compiled_grammar.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include "engine/structured_output/stack_walk.h"

namespace vllm::engine::so {

void TokenSet::assign(std::vector<int32_t> ids, int32_t vocab_size) {
  count_ = ids.size();
  const size_t words = (static_cast<size_t>(vocab_size) + 31) / 32;
  if (ids.size() >= words) {
    bits_.assign(words, 0);
    for (int32_t id : ids) bits_[id >> 5] |= 1u << (id & 31);
    ids_.clear();
    ids_.shrink_to_fit();
  } else {
    ids_ = std::move(ids);
    ids_.shrink_to_fit();
    bits_.clear();
  }
}

void TokenSet::or_into(uint32_t* words) const {
  if (!bits_.empty()) {
    for (size_t i = 0; i < bits_.size(); ++i) words[i] |= bits_[i];
  } else {
    for (int32_t id : ids_) words[id >> 5] |= 1u << (id & 31);
  }
}

std::shared_ptr<const ContextIndependent> SharedCiCache::find(const std::string& sig) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = index_.find(sig);
  if (it == index_.end()) return nullptr;
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  return it->second->second;
}

void SharedCiCache::insert(const std::string& sig, std::shared_ptr<const ContextIndependent> ci) {
  const size_t cost = ci->memory_bytes() + sig.size() * 2 + 96;
  std::lock_guard<std::mutex> l(mu_);
  if (index_.count(sig) || cost > max_bytes_) return;
  while (!lru_.empty() && bytes_ + cost > max_bytes_) {
    bytes_ -= lru_.back().second->memory_bytes() + lru_.back().first.size() * 2 + 96;
    index_.erase(lru_.back().first);
    lru_.pop_back();
  }
  lru_.emplace_front(sig, std::move(ci));
  index_.emplace(sig, lru_.begin());
  bytes_ += cost;
}

int64_t SharedCiCache::hits() const {
  std::lock_guard<std::mutex> l(mu_);
  return hits_;
}

std::string reachable_signature(const Fsm& f, int32_t state, int32_t max_states) {
  // States numbered in BFS order from `state`; transitions spelled per byte (not per byte
  // class, which differs between grammars) as runs of equal targets.
  std::unordered_map<int32_t, int32_t> local{{state, 0}};
  std::vector<int32_t> order{state};
  std::string sig;
  auto id = [&](int32_t s) -> int32_t {
    if (s < 0) return -1;
    auto [it, fresh] = local.emplace(s, static_cast<int32_t>(order.size()));
    if (fresh) order.push_back(s);
    return it->second;
  };
  auto put = [&](int32_t v) { sig.append(reinterpret_cast<const char*>(&v), 4); };
  std::vector<int32_t> by_class(f.num_classes);
  for (size_t i = 0; i < order.size(); ++i) {
    if (static_cast<int32_t>(order.size()) > max_states) return {};
    const int32_t s = order[i];
    put(f.flags[s] & Fsm::kFinal);
    for (int32_t c = 0; c < f.num_classes; ++c)
      by_class[c] = id(f.next[static_cast<size_t>(s) * f.num_classes + c]);
    int32_t prev = -2;
    for (int b = 0; b < 256; ++b) {
      const int32_t t = by_class[f.byte_class[b]];
      if (t != prev) {
        put(b);
        put(t);
        prev = t;
      }
    }
    put(-3);
    for (int32_t k = f.call_begin[s]; k < f.call_begin[s + 1]; ++k) {
      put(id(f.calls[k].target));
      put(id(f.calls[k].ret));
    }
    put(-4);
  }
  return sig;
}

const std::vector<int32_t>& CompiledGrammar::rule_closure_states() const {
  std::call_once(closure_once_, [&] {
    const Fsm& f = fsm_;
    int32_t nr = 0;
    for (int32_t r : f.state_rule) nr = std::max(nr, r + 1);
    std::vector<int32_t> size(nr, 0);
    std::vector<std::vector<int32_t>> callees(nr);
    for (int32_t s = 0; s < f.num_states(); ++s) {
      const int32_t r = f.state_rule[s];
      ++size[r];
      for (int32_t k = f.call_begin[s]; k < f.call_begin[s + 1]; ++k)
        callees[r].push_back(f.state_rule[f.calls[k].target]);
    }
    closure_.assign(nr, 0);
    for (int32_t r = 0; r < nr; ++r) {
      std::vector<bool> seen(nr, false);
      std::vector<int32_t> stack{r};
      seen[r] = true;
      int64_t total = 0;
      while (!stack.empty()) {
        const int32_t x = stack.back();
        stack.pop_back();
        total += size[x];
        for (int32_t y : callees[x])
          if (!seen[y]) {
            seen[y] = true;
            stack.push_back(y);
          }
      }
      closure_[r] = static_cast<int32_t>(std::min<int64_t>(total, INT32_MAX));
    }
  });
  return closure_;
}

CompiledGrammar::CompiledGrammar(Fsm fsm, std::shared_ptr<const VocabIndex> vocab,
                                 int32_t num_rules, CacheLimits limits,
                                 std::shared_ptr<SharedCiCache> shared)
    : fsm_(std::move(fsm)),
      vocab_(std::move(vocab)),
      num_rules_(num_rules),
      limits_(limits),
      shared_(std::move(shared)) {
  ci_.resize(fsm_.num_states());
}

std::shared_ptr<ContextIndependent> CompiledGrammar::compute_ci(int32_t state) const {
  auto ci = std::make_shared<ContextIndependent>();
  thread_local WalkBuffers wb;
  Stacks stacks(nullptr, false);
  const std::vector<Config> start{{state, -1}};
  std::vector<int32_t> accepted;
  const VocabIndex& v = *vocab_;
  walk(fsm_, stacks, v, nullptr, nullptr, v.num_sorted(), start, /*track_pop=*/true, wb,
       [&](int32_t i, TokenOutcome o) {
         if (o == TokenOutcome::kAccepted) {
           accepted.push_back(v.sorted_id(i));
         } else {
           ci->uncertain.push_back(i);
         }
       });
  ci->accepted.assign(std::move(accepted), v.vocab_size());
  ci->uncertain_lcp.resize(ci->uncertain.size());
  for (size_t k = 0; k < ci->uncertain.size(); ++k) {
    if (k == 0) {
      ci->uncertain_lcp[k] = 0;
      continue;
    }
    const std::string_view a = v.sorted_bytes(ci->uncertain[k - 1]),
                           b = v.sorted_bytes(ci->uncertain[k]);
    size_t m = 0;
    while (m < a.size() && m < b.size() && a[m] == b[m]) ++m;
    ci->uncertain_lcp[k] = static_cast<uint16_t>(m);
  }
  ci->uncertain.shrink_to_fit();
  return ci;
}

std::shared_ptr<const ContextIndependent> CompiledGrammar::context_independent(
    int32_t state) const {
  {
    std::lock_guard<std::mutex> l(mu_);
    if (ci_[state]) return ci_[state];
  }
  // Computed outside the lock; two threads racing on one state both compute, one keeps it.
  std::string sig;
  std::shared_ptr<const ContextIndependent> ci;
  constexpr int32_t kMaxShared = 512;
  if (shared_ && rule_closure_states()[fsm_.state_rule[state]] <= kMaxShared) {
    sig = reachable_signature(fsm_, state, kMaxShared);
    if (!sig.empty()) ci = shared_->find(sig);
  }
  const bool from_shared = ci != nullptr;
  if (!ci) {
    ci = compute_ci(state);
    if (!sig.empty()) shared_->insert(sig, ci);
  }
  std::lock_guard<std::mutex> l(mu_);
  ++(from_shared ? ci_shared_ : ci_computed_);
  if (ci_[state]) return ci_[state];
  if (ci_bytes_ + ci->memory_bytes() <= limits_.ci_cache_bytes) {
    ci_bytes_ += ci->memory_bytes();
    ci_[state] = ci;
  }
  return ci;
}

bool CompiledGrammar::lookup_mask(const std::string& key, uint32_t* words) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    ++misses_;
    return false;
  }
  ++hits_;
  lru_.splice(lru_.begin(), lru_, it->second);
  std::memset(words, 0, sizeof(uint32_t) * vocab_->mask_words());
  it->second->set.or_into(words);
  return true;
}

void CompiledGrammar::store_mask(const std::string& key, const uint32_t* words) const {
  std::vector<int32_t> ids;
  const int32_t nw = vocab_->mask_words();
  for (int32_t w = 0; w < nw; ++w)
    for (uint32_t x = words[w]; x; x &= x - 1) ids.push_back(w * 32 + __builtin_ctz(x));
  MaskEntry e{key, {}};
  e.set.assign(std::move(ids), vocab_->vocab_size());
  const size_t cost = e.set.memory_bytes() + key.size() * 2 + 96;
  std::lock_guard<std::mutex> l(mu_);
  if (index_.count(key) || cost > limits_.mask_cache_bytes) return;
  while (!lru_.empty() && mask_bytes_ + cost > limits_.mask_cache_bytes) {
    const MaskEntry& old = lru_.back();
    mask_bytes_ -= old.set.memory_bytes() + old.key.size() * 2 + 96;
    index_.erase(old.key);
    lru_.pop_back();
  }
  lru_.push_front(std::move(e));
  index_.emplace(std::string_view(lru_.front().key), lru_.begin());
  mask_bytes_ += cost;
}

const std::vector<int32_t>& CompiledGrammar::finish_distance() const {
  std::call_once(dist_once_, [&] {
    const Fsm& f = fsm_;
    const int32_t n = f.num_states();
    constexpr int32_t kInf = INT32_MAX / 4;
    dist_.assign(n, kInf);
    // Bellman-Ford relaxation; states are numbered from each rule's start, so sweeping
    // backwards moves distances from final states toward starts quickly.
    for (bool changed = true; changed;) {
      changed = false;
      for (int32_t s = n - 1; s >= 0; --s) {
        int32_t d = (f.flags[s] & Fsm::kFinal) ? 0 : kInf;
        for (int32_t c = 0; c < f.num_classes && d > 1; ++c) {
          const int32_t t = f.next[static_cast<size_t>(s) * f.num_classes + c];
          if (t >= 0) d = std::min(d, 1 + dist_[t]);
        }
        for (int32_t k = f.call_begin[s]; k < f.call_begin[s + 1]; ++k) {
          const Fsm::Call& c = f.calls[k];
          d = std::min(d, dist_[c.target] + (c.ret < 0 ? 0 : dist_[c.ret]));
        }
        if (d < dist_[s]) {
          dist_[s] = d;
          changed = true;
        }
      }
    }
    for (auto& d : dist_)
      if (d >= kInf) d = INT32_MAX;
  });
  return dist_;
}

GrammarStats CompiledGrammar::stats() const {
  std::lock_guard<std::mutex> l(mu_);
  GrammarStats s;
  s.num_states = fsm_.num_states();
  s.num_rules = num_rules_;
  s.num_classes = fsm_.num_classes;
  s.fsm_bytes = fsm_.memory_bytes();
  s.ci_bytes = ci_bytes_;
  s.mask_cache_bytes = mask_bytes_;
  s.ci_computed = ci_computed_;
  s.ci_shared = ci_shared_;
  s.mask_hits = hits_;
  s.mask_misses = misses_;
  s.mask_entries = lru_.size();
  return s;
}

size_t CompiledGrammar::memory_bytes() const {
  std::lock_guard<std::mutex> l(mu_);
  return fsm_.memory_bytes() + ci_bytes_ + mask_bytes_ + ci_.size() * 16;
}

}  // namespace vllm::engine::so
