// Thompson NFA per rule -> subset construction per rule (calls are labels like bytes) ->
// trimming -> one flat table for all rules. See fsm.h for what the result guarantees.
#include "engine/structured_output/fsm.h"

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>

namespace vllm::engine::so {
namespace {

using Seq = std::vector<std::pair<uint8_t, uint8_t>>;

void encode(uint32_t cp, int n, uint8_t* out) {
  static const uint8_t kLead[5] = {0, 0x00, 0xC0, 0xE0, 0xF0};
  for (int i = n - 1; i > 0; --i) {
    out[i] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    cp >>= 6;
  }
  out[0] = static_cast<uint8_t>(kLead[n] | cp);
}

// [a, b] all encode to n bytes. Split until the range is a product of per-byte ranges: for
// every continuation suffix, either a and b share everything above it, or a's suffix is all
// zeros and b's all ones.
void split(uint32_t a, uint32_t b, int n, std::vector<Seq>& out) {
  for (int i = 1; i < n; ++i) {
    const uint32_t m = (1u << (6 * i)) - 1;
    if ((a & ~m) != (b & ~m)) {
      if ((a & m) != 0) {
        split(a, a | m, n, out);
        split((a | m) + 1, b, n, out);
        return;
      }
      if ((b & m) != m) {
        split(a, (b & ~m) - 1, n, out);
        split(b & ~m, b, n, out);
        return;
      }
    }
  }
  uint8_t ea[4], eb[4];
  encode(a, n, ea);
  encode(b, n, eb);
  Seq s;
  for (int i = 0; i < n; ++i) s.push_back({ea[i], eb[i]});
  out.push_back(std::move(s));
}

struct NState {
  std::vector<std::array<int32_t, 3>> bytes;  // lo, hi, to
  std::vector<int32_t> eps;
  std::vector<std::pair<int32_t, int32_t>> calls;  // rule, to
};

class NfaBuilder {
 public:
  NfaBuilder(const Grammar& g, const Limits& lim, int64_t& budget)
      : g_(g), lim_(lim), budget_(budget) {}
  std::vector<NState> st;

  int32_t add() {
    if (--budget_ < 0)
      throw GrammarError("grammar too large: more than " + std::to_string(lim_.max_nfa_states) +
                         " automaton states before determinization (limit); a large repetition "
                         "count, a huge enum or choice list, or a very large schema?");
    st.emplace_back();
    return static_cast<int32_t>(st.size() - 1);
  }

  void build(const Expr& e, int32_t from, int32_t to) {
    using K = Expr::Kind;
    switch (e.kind) {
      case K::kEmpty:
        st[from].eps.push_back(to);
        return;
      case K::kBytes: {
        int32_t cur = from;
        for (size_t i = 0; i < e.bytes.size(); ++i) {
          const int32_t nx = i + 1 == e.bytes.size() ? to : add();
          const int32_t b = static_cast<uint8_t>(e.bytes[i]);
          st[cur].bytes.push_back({b, b, nx});
          cur = nx;
        }
        return;
      }
      case K::kClass:
        if (e.raw_bytes) {
          for (const auto& r : e.ranges)
            st[from].bytes.push_back({static_cast<int32_t>(r.lo),
                                      static_cast<int32_t>(std::min<uint32_t>(r.hi, 255)), to});
          return;
        }
        for (const auto& r : e.ranges)
          for (const auto& sq : utf8_sequences(r.lo, r.hi)) {
            int32_t cur = from;
            for (size_t i = 0; i < sq.size(); ++i) {
              const int32_t nx = i + 1 == sq.size() ? to : add();
              st[cur].bytes.push_back({sq[i].first, sq[i].second, nx});
              cur = nx;
            }
          }
        return;
      case K::kSeq: {
        int32_t cur = from;
        for (size_t i = 0; i < e.kids.size(); ++i) {
          const int32_t nx = i + 1 == e.kids.size() ? to : add();
          build(e.kids[i], cur, nx);
          cur = nx;
        }
        return;
      }
      case K::kAlt:
        for (const auto& k : e.kids) {
          // Fresh entry/exit states keep a looping kid from leaking paths into its siblings.
          const int32_t a = add(), b = add();
          st[from].eps.push_back(a);
          build(k, a, b);
          st[b].eps.push_back(to);
        }
        return;
      case K::kRef:
        st[from].calls.push_back({e.rule, to});
        return;
      case K::kRepeat: {
        if (e.min > lim_.max_repeat || e.max > lim_.max_repeat)
          throw GrammarError("repetition bound {" + std::to_string(e.min) + "," +
                             (e.max < 0 ? std::string() : std::to_string(e.max)) +
                             "} exceeds the limit of " + std::to_string(lim_.max_repeat));
        int32_t cur = add();
        st[from].eps.push_back(cur);
        for (int32_t i = 0; i < e.min; ++i) {
          const int32_t nx = add();
          build(e.kids[0], cur, nx);
          cur = nx;
        }
        if (e.max < 0) {
          const int32_t loop = add();
          st[cur].eps.push_back(loop);
          const int32_t back = add();
          build(e.kids[0], loop, back);
          st[back].eps.push_back(loop);
          st[loop].eps.push_back(to);
          return;
        }
        for (int32_t i = e.min; i < e.max; ++i) {
          st[cur].eps.push_back(to);
          const int32_t nx = add();
          build(e.kids[0], cur, nx);
          cur = nx;
        }
        st[cur].eps.push_back(to);
        return;
      }
    }
  }

 private:
  const Grammar& g_;
  const Limits& lim_;
  int64_t& budget_;
};

struct RuleDfa {
  std::vector<std::vector<int32_t>> next;  // per state, per class
  std::vector<bool> final;
  std::vector<std::vector<std::pair<int32_t, int32_t>>> calls;  // rule, target state
};

RuleDfa determinize(const std::vector<NState>& st, int32_t start, int32_t accept,
                    const std::array<uint8_t, 256>& cls, int32_t nc, int32_t& dfa_budget,
                    const Limits& lim) {
  std::vector<uint32_t> mark(st.size(), 0);
  uint32_t stamp = 0;
  auto closure = [&](std::vector<int32_t>& set) {
    ++stamp;
    std::vector<int32_t> stack = set;
    set.clear();
    for (int32_t s : stack) mark[s] = stamp;
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      set.push_back(s);
      for (int32_t t : st[s].eps)
        if (mark[t] != stamp) {
          mark[t] = stamp;
          stack.push_back(t);
        }
    }
    std::sort(set.begin(), set.end());
  };
  RuleDfa d;
  std::unordered_map<std::string, int32_t> ids;
  std::vector<std::vector<int32_t>> sets;
  auto intern = [&](std::vector<int32_t>& set) -> int32_t {
    std::string key(reinterpret_cast<const char*>(set.data()), set.size() * 4);
    auto it = ids.find(key);
    if (it != ids.end()) return it->second;
    if (--dfa_budget < 0)
      throw GrammarError("grammar too large: more than " + std::to_string(lim.max_dfa_states) +
                         " automaton states (limit); a large repetition count, a huge enum or "
                         "a very large schema?");
    const int32_t id = static_cast<int32_t>(sets.size());
    ids.emplace(std::move(key), id);
    sets.push_back(set);
    d.next.emplace_back(nc, -1);
    d.final.push_back(std::binary_search(set.begin(), set.end(), accept));
    d.calls.emplace_back();
    return id;
  };
  std::vector<int32_t> s0{start};
  closure(s0);
  intern(s0);
  std::vector<std::vector<int32_t>> tgt(nc);
  for (size_t i = 0; i < sets.size(); ++i) {
    for (auto& t : tgt) t.clear();
    std::vector<std::pair<int32_t, int32_t>> calls;
    for (int32_t s : sets[i]) {
      for (const auto& e : st[s].bytes)
        for (int32_t c = cls[e[0]]; c <= cls[e[1]]; ++c) tgt[c].push_back(e[2]);
      for (const auto& c : st[s].calls) calls.push_back(c);
    }
    for (int32_t c = 0; c < nc; ++c) {
      if (tgt[c].empty()) continue;
      std::sort(tgt[c].begin(), tgt[c].end());
      tgt[c].erase(std::unique(tgt[c].begin(), tgt[c].end()), tgt[c].end());
      closure(tgt[c]);
      const int32_t id = intern(tgt[c]);
      d.next[i][c] = id;
    }
    std::sort(calls.begin(), calls.end());
    for (size_t a = 0; a < calls.size();) {
      size_t b = a;
      std::vector<int32_t> set;
      while (b < calls.size() && calls[b].first == calls[a].first) set.push_back(calls[b++].second);
      std::sort(set.begin(), set.end());
      set.erase(std::unique(set.begin(), set.end()), set.end());
      closure(set);
      const int32_t id = intern(set);
      d.calls[i].push_back({calls[a].first, id});
      a = b;
    }
  }
  return d;
}

// Upper bound on the NFA states an expression expands to (saturating), so a nest of large
// repetitions fails before anything is built.
int64_t estimate_states(const Expr& e) {
  constexpr int64_t kCap = int64_t{1} << 40;
  using K = Expr::Kind;
  switch (e.kind) {
    case K::kEmpty:
    case K::kRef:
      return 1;
    case K::kBytes:
      return static_cast<int64_t>(e.bytes.size());
    case K::kClass:
      // Byte classes are edges only; a code-point range needs a few UTF-8 inner states.
      return e.raw_bytes ? 0 : 3 * static_cast<int64_t>(e.ranges.size());
    case K::kSeq: {
      int64_t n = 0;
      for (const auto& k : e.kids) n = std::min(kCap, n + estimate_states(k) + 1);
      return n;
    }
    case K::kAlt: {
      int64_t n = 0;
      for (const auto& k : e.kids) n = std::min(kCap, n + estimate_states(k) + 2);
      return n;
    }
    case K::kRepeat: {
      const int64_t copies = (e.max < 0 ? e.min + 2 : e.max + 1);
      return std::min(kCap, copies * (estimate_states(e.kids[0]) + 1) + 1);
    }
  }
  return 1;
}

void collect_refs(const Expr& e, std::vector<int32_t>& out) {
  if (e.kind == Expr::Kind::kRef) out.push_back(e.rule);
  for (const auto& k : e.kids) collect_refs(k, out);
}

void collect_bounds(const Expr& e, std::array<bool, 257>& bound) {
  if (e.kind == Expr::Kind::kBytes) {
    for (unsigned char c : e.bytes) bound[c] = bound[c + 1] = true;
  } else if (e.kind == Expr::Kind::kClass) {
    if (e.raw_bytes) {
      for (const auto& r : e.ranges) bound[r.lo] = bound[std::min<uint32_t>(r.hi, 255) + 1] = true;
    } else {
      for (const auto& r : e.ranges)
        for (const auto& sq : utf8_sequences(r.lo, r.hi))
          for (const auto& [lo, hi] : sq) bound[lo] = bound[hi + 1] = true;
    }
  }
  for (const auto& k : e.kids) collect_bounds(k, bound);
}

}  // namespace

std::vector<Seq> utf8_sequences(uint32_t lo, uint32_t hi) {
  std::vector<Seq> out;
  static const uint32_t kBand[5] = {0, 0x80, 0x800, 0x10000, 0x110000};
  for (int n = 1; n <= 4; ++n) {
    const uint32_t a = std::max(lo, kBand[n - 1]), b = std::min(hi, kBand[n] - 1);
    if (a <= b) split(a, b, n, out);
  }
  return out;
}

Fsm compile_fsm(const Grammar& g, const Limits& lim) {
  const int32_t nr = static_cast<int32_t>(g.rules.size());
  if (g.root < 0 || g.root >= nr) throw GrammarError("grammar has no root rule");
  // Rules reachable from the root, in discovery order.
  std::vector<int32_t> order{g.root};
  std::vector<bool> seen(nr, false);
  seen[g.root] = true;
  for (size_t i = 0; i < order.size(); ++i) {
    const Rule& r = g.rules[order[i]];
    if (!r.defined) throw GrammarError("rule '" + r.name + "' is referenced but never defined");
    std::vector<int32_t> refs;
    collect_refs(r.body, refs);
    for (int32_t x : refs)
      if (!seen[x]) {
        seen[x] = true;
        order.push_back(x);
      }
  }
  // Byte classes: bytes no edge tells apart share a column.
  std::array<bool, 257> bound{};
  bound[0] = true;
  for (int32_t r : order) collect_bounds(g.rules[r].body, bound);
  Fsm f;
  int32_t nc = -1;
  for (int b = 0; b < 256; ++b) {
    if (bound[b]) ++nc;
    f.byte_class[b] = static_cast<uint8_t>(nc);
  }
  f.num_classes = nc + 1;

  int64_t nfa_budget = lim.max_nfa_states;
  int32_t dfa_budget = lim.max_dfa_states;
  std::vector<RuleDfa> dfas(nr);
  int64_t estimate = 0;
  for (int32_t r : order) estimate += estimate_states(g.rules[r].body);
  if (estimate > lim.max_nfa_states)
    throw GrammarError("grammar too large: it expands to about " + std::to_string(estimate) +
                       " automaton states, over the limit of " +
                       std::to_string(lim.max_nfa_states) +
                       " (nested or large repetition counts, a huge enum or choice list?)");
  for (int32_t r : order) {
    NfaBuilder nb(g, lim, nfa_budget);
    const int32_t s = nb.add(), e = nb.add();
    nb.build(g.rules[r].body, s, e);
    dfas[r] = determinize(nb.st, s, e, f.byte_class, f.num_classes, dfa_budget, lim);
  }

  // Productive rules: some path from the start to a final state through bytes and calls of
  // productive rules.
  std::vector<bool> productive(nr, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (int32_t r : order) {
      if (productive[r]) continue;
      const RuleDfa& d = dfas[r];
      std::vector<bool> vis(d.final.size(), false);
      std::vector<int32_t> stack{0};
      vis[0] = true;
      bool ok = false;
      while (!stack.empty() && !ok) {
        const int32_t s = stack.back();
        stack.pop_back();
        if (d.final[s]) ok = true;
        auto push = [&](int32_t t) {
          if (t >= 0 && !vis[t]) {
            vis[t] = true;
            stack.push_back(t);
          }
        };
        for (int32_t t : d.next[s]) push(t);
        for (const auto& [callee, t] : d.calls[s])
          if (productive[callee]) push(t);
      }
      if (ok) productive[r] = changed = true;
    }
  }
  if (!productive[g.root])
    throw GrammarError("the grammar matches no string: rule '" + g.rules[g.root].name +
                       "' can never complete");

  // Trim each rule to states reachable from its start and able to reach a final state.
  std::vector<std::vector<int32_t>> keep_id(nr);
  std::vector<int32_t> offset(nr, -1);
  int32_t total = 0;
  for (int32_t r : order) {
    if (!productive[r]) continue;
    RuleDfa& d = dfas[r];
    const size_t n = d.final.size();
    std::vector<std::vector<int32_t>> rev(n);
    for (size_t s = 0; s < n; ++s) {
      for (int32_t t : d.next[s])
        if (t >= 0) rev[t].push_back(static_cast<int32_t>(s));
      for (const auto& [callee, t] : d.calls[s])
        if (productive[callee]) rev[t].push_back(static_cast<int32_t>(s));
    }
    std::vector<bool> co(n, false);
    std::vector<int32_t> stack;
    for (size_t s = 0; s < n; ++s)
      if (d.final[s]) {
        co[s] = true;
        stack.push_back(static_cast<int32_t>(s));
      }
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      for (int32_t p : rev[s])
        if (!co[p]) {
          co[p] = true;
          stack.push_back(p);
        }
    }
    std::vector<bool> acc(n, false);
    stack = {0};
    acc[0] = true;
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      auto push = [&](int32_t t) {
        if (t >= 0 && co[t] && !acc[t]) {
          acc[t] = true;
          stack.push_back(t);
        }
      };
      for (int32_t t : d.next[s]) push(t);
      for (const auto& [callee, t] : d.calls[s])
        if (productive[callee]) push(t);
    }
    keep_id[r].assign(n, -1);
    offset[r] = total;
    int32_t k = 0;
    for (size_t s = 0; s < n; ++s)
      if (acc[s] && co[s]) keep_id[r][s] = k++;
    total += k;
  }
  if (static_cast<int64_t>(total) * f.num_classes > lim.max_table_entries)
    throw GrammarError("grammar too large: transition table of " + std::to_string(total) +
                       " states x " + std::to_string(f.num_classes) + " byte classes exceeds " +
                       std::to_string(lim.max_table_entries) + " entries (limit)");

  f.next.assign(static_cast<size_t>(total) * f.num_classes, -1);
  f.flags.assign(total, 0);
  f.state_rule.assign(total, -1);
  f.call_begin.assign(total + 1, 0);
  // Every kept state s of rule r, as global state gs, in state order.
  auto each_state = [&](auto&& fn) {
    for (int32_t r : order) {
      if (!productive[r]) continue;
      const RuleDfa& d = dfas[r];
      for (size_t s = 0; s < d.final.size(); ++s)
        if (const int32_t id = keep_id[r][s]; id >= 0) fn(r, d, s, offset[r] + id);
    }
  };
  each_state([&](int32_t r, const RuleDfa& d, size_t s, int32_t gs) {
    f.state_rule[gs] = r;
    if (d.final[s]) f.flags[gs] |= Fsm::kFinal;
    for (int32_t c = 0; c < f.num_classes; ++c) {
      const int32_t t = d.next[s][c];
      if (t >= 0 && keep_id[r][t] >= 0) {
        f.next[static_cast<size_t>(gs) * f.num_classes + c] = offset[r] + keep_id[r][t];
        f.flags[gs] |= Fsm::kHasBytes;
      }
    }
  });
  // Calls, in state order (call_begin is a prefix sum): counted, then filled, by one walk.
  auto each_call = [&](auto&& fn) {
    each_state([&](int32_t r, const RuleDfa& d, size_t s, int32_t gs) {
      for (const auto& [callee, t] : d.calls[s])
        if (productive[callee] && keep_id[r][t] >= 0) fn(r, gs, callee, t);
    });
  };
  each_call([&](int32_t, int32_t gs, int32_t, int32_t) { f.call_begin[gs + 1]++; });
  for (int32_t s = 0; s < total; ++s) f.call_begin[s + 1] += f.call_begin[s];
  f.calls.resize(f.call_begin[total]);
  std::vector<int32_t> fill(f.call_begin.begin(), f.call_begin.end() - 1);
  each_call([&](int32_t r, int32_t gs, int32_t callee, int32_t t) {
    f.calls[fill[gs]++] = {offset[callee] + keep_id[callee][0], offset[r] + keep_id[r][t]};
    f.flags[gs] |= Fsm::kHasCalls;
  });
  // Tail calls: a return state that can only finish needs no stack entry.
  for (auto& c : f.calls) {
    const int32_t t = c.ret;
    if (f.flags[t] == Fsm::kFinal) c.ret = -1;
  }
  f.root_start = offset[g.root] + keep_id[g.root][0];

  // Left recursion: a rule that can call itself before consuming a byte would make the
  // matcher's closure grow the stack forever.
  std::vector<bool> nullable(nr, false);
  auto reach_nullable = [&](int32_t r, std::vector<int32_t>* callees) {
    const int32_t base = offset[r];
    std::vector<int32_t> stack{base};
    std::vector<int32_t> vis{base};
    bool fin = false;
    while (!stack.empty()) {
      const int32_t s = stack.back();
      stack.pop_back();
      if (f.flags[s] & Fsm::kFinal) fin = true;
      for (int32_t i = f.call_begin[s]; i < f.call_begin[s + 1]; ++i) {
        const int32_t callee = f.state_rule[f.calls[i].target];
        if (callees) callees->push_back(callee);
        if (!nullable[callee]) continue;
        // A tail call to a nullable rule may finish this rule too.
        const int32_t t = f.calls[i].ret;
        if (t < 0) {
          fin = true;
          continue;
        }
        if (std::find(vis.begin(), vis.end(), t) == vis.end()) {
          vis.push_back(t);
          stack.push_back(t);
        }
      }
    }
    return fin;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (int32_t r : order)
      if (productive[r] && !nullable[r] && reach_nullable(r, nullptr)) nullable[r] = changed = true;
  }
  std::vector<std::vector<int32_t>> left(nr);
  for (int32_t r : order)
    if (productive[r]) reach_nullable(r, &left[r]);
  std::vector<int8_t> color(nr, 0);
  std::vector<int32_t> path;
  std::function<void(int32_t)> dfs = [&](int32_t r) {
    color[r] = 1;
    path.push_back(r);
    for (int32_t c : left[r]) {
      if (color[c] == 1) {
        std::string cyc;
        auto it = std::find(path.begin(), path.end(), c);
        for (; it != path.end(); ++it) cyc += g.rules[*it].name + " -> ";
        throw GrammarError("left recursion: rule '" + g.rules[c].name +
                           "' can reach itself without consuming input (" + cyc + g.rules[c].name +
                           "); rewrite it right-recursively");
      }
      if (color[c] == 0) dfs(c);
    }
    path.pop_back();
    color[r] = 2;
  };
  for (int32_t r : order)
    if (productive[r] && color[r] == 0) dfs(r);
  return f;
}

}  // namespace vllm::engine::so
