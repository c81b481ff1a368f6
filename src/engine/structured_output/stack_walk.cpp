// Closure and byte steps of the pushdown automaton (see stack_walk.h).
#include "engine/structured_output/stack_walk.h"

#include <algorithm>

namespace vllm::engine::so {

int32_t NodePool::intern(int32_t ret, int32_t parent) {
  if (slots_.size() < 2 * (nodes_.size() + 1)) rehash(std::max<size_t>(16, slots_.size() * 2));
  for (size_t i = slot_of(ret, parent);; i = (i + 1) & (slots_.size() - 1)) {
    const int32_t id = slots_[i];
    if (id < 0) {
      slots_[i] = static_cast<int32_t>(nodes_.size());
      nodes_.push_back({ret, parent});
      return slots_[i];
    }
    if (nodes_[id].ret == ret && nodes_[id].parent == parent) return id;
  }
}

void NodePool::rehash(size_t n) {
  slots_.assign(n, -1);
  for (size_t id = 0; id < nodes_.size(); ++id)
    for (size_t i = slot_of(nodes_[id].ret, nodes_[id].parent);; i = (i + 1) & (n - 1))
      if (slots_[i] < 0) {
        slots_[i] = static_cast<int32_t>(id);
        break;
      }
}

void NodePool::truncate(size_t n) {
  if (n >= nodes_.size()) return;
  nodes_.resize(n);
  rehash(slots_.size());
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
  const int32_t cls = f.byte_class[b];
  if (in.size() == 1) {
    // Fast path (inside strings, literals): one configuration stepping to a state that
    // neither calls nor finishes needs no closure.
    const int32_t t = f.next[static_cast<size_t>(in[0].state) * f.num_classes + cls];
    if (t < 0) return false;
    if ((f.flags[t] & (Fsm::kFinal | Fsm::kHasCalls | Fsm::kHasBytes)) == Fsm::kHasBytes) {
      const int32_t node = in[0].node;
      out.clear();
      out.push_back({t, node});
      bottom_final = false;
      return true;
    }
  }
  scratch.clear();
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
