// Closure and byte steps of the pushdown automaton (see stack_walk.h).
#include "engine/structured_output/stack_walk.h"

#include <algorithm>

namespace vllm::engine::so {

int32_t NodePool::intern(int32_t ret, int32_t parent) {
  const uint64_t k = key(ret, parent);
  auto it = index_.find(k);
  if (it != index_.end()) return it->second;
  const int32_t id = static_cast<int32_t>(nodes_.size());
  nodes_.push_back({ret, parent});
  index_.emplace(k, id);
  return id;
}

void NodePool::truncate(size_t n) {
  while (nodes_.size() > n) {
    index_.erase(key(nodes_.back().ret, nodes_.back().parent));
    nodes_.pop_back();
  }
}

bool closure(const Fsm& f, Stacks& stacks, std::vector<Config>& raw, std::vector<Config>& out) {
  out.clear();
  bool bottom_final = false;
  // raw doubles as the work list and the visited set (it only grows; sets stay small).
  for (size_t i = 0; i < raw.size(); ++i) {
    const Config c = raw[i];
    const uint8_t fl = f.flags[c.state];
    if (fl & Fsm::kHasBytes) out.push_back(c);
    auto add = [&](Config n) {
      if (std::find(raw.begin(), raw.end(), n) == raw.end()) raw.push_back(n);
    };
    if (fl & Fsm::kHasCalls) {
      for (int32_t k = f.call_begin[c.state]; k < f.call_begin[c.state + 1]; ++k) {
        const Fsm::Call& call = f.calls[k];
        add({call.target, call.ret < 0 ? c.node : stacks.push(call.ret, c.node)});
      }
    }
    if (fl & Fsm::kFinal) {
      if (c.node < 0) {
        bottom_final = true;
      } else {
        const StackNode& n = stacks.get(c.node);
        add({n.ret, n.parent});
      }
    }
  }
  if (out.size() > 1) {
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }
  return bottom_final;
}

bool step(const Fsm& f, Stacks& stacks, const std::vector<Config>& in, uint8_t b,
          std::vector<Config>& out, bool& bottom_final, std::vector<Config>& scratch) {
  scratch.clear();
  const int32_t cls = f.byte_class[b];
  for (const Config& c : in) {
    const int32_t t = f.next[static_cast<size_t>(c.state) * f.num_classes + cls];
    if (t >= 0) scratch.push_back({t, c.node});
  }
  if (scratch.empty()) return false;
  if (scratch.size() > 1) {
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
  }
  bottom_final = closure(f, stacks, scratch, out);
  return true;
}

}  // namespace vllm::engine::so
