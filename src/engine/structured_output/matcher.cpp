// Matcher: accept / fill_mask / rollback over the shared automaton and caches.
#include "engine/structured_output/matcher.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <functional>
#include <stdexcept>

namespace vllm::engine::so {

Matcher::Matcher(std::shared_ptr<const CompiledGrammar> g, int32_t max_rollback)
    : grammar_(std::move(g)), max_rollback_(max_rollback) {
  reset();
}

void Matcher::reset() {
  pool_.clear();
  history_.clear();
  terminated_ = false;
  Stacks stacks(&pool_, true);
  std::vector<Config> raw{{grammar_->fsm().root_start, -1}};
  complete_ = closure(grammar_->fsm(), stacks, raw, configs_);
}

void Matcher::add_stop_ids(const std::vector<int32_t>& ids) {
  for (int32_t id : ids)
    if (id >= 0 && id < grammar_->vocab_size() && !grammar_->vocab().is_stop(id))
      extra_stops_.push_back(id);
}

bool Matcher::advance(std::string_view bytes) {
  const Fsm& f = grammar_->fsm();
  Stacks stacks(&pool_, true);
  thread_local std::vector<Config> a, b, raw;
  a = configs_;
  bool bf = complete_;
  for (char ch : bytes) {
    if (!step(f, stacks, a, static_cast<uint8_t>(ch), b, bf, raw)) return false;
    std::swap(a, b);
  }
  configs_ = a;
  complete_ = bf;
  return true;
}

bool Matcher::accept_bytes(std::string_view bytes) {
  if (terminated_) return false;
  Snapshot snap{configs_, complete_, terminated_, pool_.size()};
  if (!advance(bytes)) {
    pool_.truncate(snap.pool_size);
    return false;
  }
  history_.push_back(std::move(snap));
  if (static_cast<int32_t>(history_.size()) > max_rollback_) history_.erase(history_.begin());
  return true;
}

bool Matcher::accept(int32_t token) {
  if (terminated_ || token < 0 || token >= grammar_->vocab_size()) return false;
  const VocabIndex& v = grammar_->vocab();
  if (v.is_stop(token) ||
      std::find(extra_stops_.begin(), extra_stops_.end(), token) != extra_stops_.end()) {
    if (!complete_) return false;
    history_.push_back({configs_, complete_, terminated_, pool_.size()});
    if (static_cast<int32_t>(history_.size()) > max_rollback_) history_.erase(history_.begin());
    terminated_ = true;
    return true;
  }
  const int32_t pos = v.position(token);
  if (pos < 0) return false;  // special, not a stop token
  return accept_bytes(v.sorted_bytes(pos));
}

void Matcher::rollback(int32_t n) {
  if (n < 0 || n > static_cast<int32_t>(history_.size()))
    throw std::out_of_range("Matcher::rollback(" + std::to_string(n) + "): only " +
                            std::to_string(history_.size()) + " tokens of history kept");
  for (int32_t i = 0; i < n; ++i) {
    Snapshot& s = history_.back();
    configs_ = std::move(s.configs);
    complete_ = s.complete;
    terminated_ = s.terminated;
    pool_.truncate(s.pool_size);
    history_.pop_back();
  }
}

std::string Matcher::state_key() const {
  std::vector<std::vector<int32_t>> parts;
  parts.reserve(configs_.size());
  for (const Config& c : configs_) {
    std::vector<int32_t> p{c.state};
    for (int32_t n = c.node; n >= 0; n = pool_[n].parent) p.push_back(pool_[n].ret);
    p.push_back(-1);
    parts.push_back(std::move(p));
  }
  std::sort(parts.begin(), parts.end());
  std::string key(1, complete_ ? 'C' : 'c');
  for (const auto& p : parts) key.append(reinterpret_cast<const char*>(p.data()), p.size() * 4);
  return key;
}

void Matcher::compute_mask(uint32_t* words) {
  const CompiledGrammar& g = *grammar_;
  const VocabIndex& v = g.vocab();
  std::memset(words, 0, sizeof(uint32_t) * v.mask_words());
  thread_local WalkBuffers wb;
  Stacks stacks(&pool_, false);
  std::vector<Config> start(1);
  for (const Config& c : configs_) {
    const auto ci = g.context_independent(c.state);
    ci->accepted.or_into(words);
    if (ci->uncertain.empty()) continue;
    start[0] = c;
    walk(g.fsm(), stacks, v, ci->uncertain.data(), ci->uncertain_lcp.data(),
         static_cast<int32_t>(ci->uncertain.size()), start, /*track_pop=*/false, wb,
         [&](int32_t i, TokenOutcome o) {
           if (o != TokenOutcome::kAccepted) return;
           const int32_t id = v.sorted_id(ci->uncertain[i]);
           words[id >> 5] |= 1u << (id & 31);
         });
  }
  if (complete_)
    for (int32_t id : v.stop_ids()) words[id >> 5] |= 1u << (id & 31);
}

void Matcher::fill_mask(std::span<uint32_t> words) {
  const int32_t nw = mask_words();
  if (static_cast<int32_t>(words.size()) < nw)
    throw std::invalid_argument("Matcher::fill_mask: bitmask has " + std::to_string(words.size()) +
                                " words, the vocabulary needs " + std::to_string(nw));
  std::fill(words.begin() + nw, words.end(), 0u);
  if (terminated_) {
    std::fill(words.begin(), words.begin() + nw, 0u);
    for (int32_t id : grammar_->vocab().stop_ids()) words[id >> 5] |= 1u << (id & 31);
  } else {
    const std::string key = state_key();
    if (!grammar_->lookup_mask(key, words.data())) {
      compute_mask(words.data());
      grammar_->store_mask(key, words.data());
    }
  }
  if (complete_ || terminated_)
    for (int32_t id : extra_stops_) words[id >> 5] |= 1u << (id & 31);
}

bool Matcher::shortest_completion(std::string& out, int32_t max_bytes) const {
  out.clear();
  if (complete_) return true;
  const Fsm& f = grammar_->fsm();
  const std::vector<int32_t>& dist = grammar_->finish_distance();
  // Cost of a configuration: finish its rule, then every rule below it on the stack.
  int64_t best = INT64_MAX;
  const Config* pick = nullptr;
  for (const Config& c : configs_) {
    int64_t cost = dist[c.state];
    for (int32_t n = c.node; n >= 0 && cost < INT32_MAX; n = pool_[n].parent)
      cost += dist[pool_[n].ret];
    if (cost < best) {
      best = cost;
      pick = &c;
    }
  }
  if (!pick || best >= INT32_MAX || best > max_bytes) return false;
  // Lowest byte of each class, to spell a class edge.
  std::vector<int32_t> rep(f.num_classes, -1);
  for (int b = 255; b >= 0; --b) rep[f.byte_class[b]] = b;
  // Finish the rule at `s` along strictly decreasing distances (calls recurse).
  std::function<bool(int32_t, int)> finish = [&](int32_t s, int depth) -> bool {
    for (int guard = 0; dist[s] > 0; ++guard) {
      if (guard > max_bytes + 64 || depth > 256) return false;
      bool moved = false;
      for (int32_t c = 0; c < f.num_classes && !moved; ++c) {
        const int32_t t = f.next[static_cast<size_t>(s) * f.num_classes + c];
        if (t >= 0 && dist[t] != INT32_MAX && 1 + dist[t] == dist[s]) {
          out += static_cast<char>(rep[c]);
          s = t;
          moved = true;
        }
      }
      for (int32_t k = f.call_begin[s]; k < f.call_begin[s + 1] && !moved; ++k) {
        const Fsm::Call& c = f.calls[k];
        const int64_t after = c.ret < 0 ? 0 : dist[c.ret];
        if (static_cast<int64_t>(dist[c.target]) + after != dist[s]) continue;
        if (!finish(c.target, depth + 1)) return false;
        if (c.ret < 0) return true;
        s = c.ret;
        moved = true;
      }
      if (!moved) return false;
    }
    return true;
  };
  if (!finish(pick->state, 0)) return false;
  for (int32_t n = pick->node; n >= 0; n = pool_[n].parent)
    if (!finish(pool_[n].ret, 0)) return false;
  return static_cast<int32_t>(out.size()) <= max_bytes;
}

}  // namespace vllm::engine::so
