// GraphRegistry: the bookkeeping half of a graph backend, host-only so the CPU tests run it.
//
// It tracks which state buffers are live, retired or freed, and which buffers each recorded
// graph is bound to, with the CPU backend's semantics (DESIGN.md, "Decode step graph"):
//   * retire(b): b is released once no graph is bound to it (a recorded graph holds raw
//     device addresses; a freed address could be handed to a new allocation);
//   * free(b): released at once and marked dead; a graph still bound to it refuses to
//     replay (and its destroy reports the broken invariant) instead of reading freed memory.
// The backend owns the memory: the registry only says which buffers to release, and when.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "vt/graph.h"

namespace vt::cuda {

class GraphRegistry {
 public:
  void track(DeviceBuffer* b) {
    b->live = true;
    ++live_;
  }

  // The caller releases b's memory right after this.
  void mark_freed(DeviceBuffer* b) {
    if (b->live) --live_;
    b->live = false;
    retired_.erase(b->id);
  }

  // Returns the buffers to release now (b itself when no graph is bound to it).
  std::vector<DeviceBuffer*> retire(DeviceBuffer* b) {
    retired_[b->id] = b;
    return collect();
  }

  GraphId add_graph(const std::vector<DeviceBuffer*>& bound) {
    const GraphId id = ++next_graph_;
    graphs_[id] = bound;
    return id;
  }
  bool has_graph(GraphId id) const { return graphs_.count(id) != 0; }

  // Throws when a buffer the graph is bound to was freed while the graph referenced it.
  void check_bound(GraphId id, const char* what) const {
    auto it = graphs_.find(id);
    if (it == graphs_.end())
      throw std::logic_error(std::string("graph ") + what + " of a destroyed graph");
    for (const DeviceBuffer* b : it->second)
      if (!b->live)
        throw std::logic_error(std::string("graph ") + what +
                               ": a buffer it is bound to was freed while the graph still "
                               "referenced it (invariant: superseded buffers are retired, "
                               "not freed)");
  }

  struct Removed {
    std::vector<DeviceBuffer*> release;  // retired buffers no graph references any more
    bool dangling = false;               // the graph was bound to a freed buffer
  };
  // Forgets graph `id` (a no-op for an unknown id). The caller releases `release` and then,
  // if `dangling`, reports the broken invariant.
  Removed remove_graph(GraphId id) {
    Removed r;
    auto it = graphs_.find(id);
    if (it == graphs_.end()) return r;
    for (const DeviceBuffer* b : it->second) r.dangling |= !b->live;
    graphs_.erase(it);
    r.release = collect();
    return r;
  }

  int64_t live_buffers() const { return live_; }
  int64_t retired_buffers() const { return static_cast<int64_t>(retired_.size()); }
  int64_t graphs() const { return static_cast<int64_t>(graphs_.size()); }

 private:
  std::vector<DeviceBuffer*> collect() {
    std::vector<DeviceBuffer*> out;
    for (auto it = retired_.begin(); it != retired_.end();) {
      bool used = false;
      for (const auto& [gid, bound] : graphs_)
        for (const DeviceBuffer* b : bound) used |= (b == it->second);
      if (used) {
        ++it;
        continue;
      }
      DeviceBuffer* b = it->second;
      it = retired_.erase(it);
      if (b->live) --live_;
      b->live = false;
      out.push_back(b);
    }
    return out;
  }

  std::map<uint64_t, DeviceBuffer*> retired_;
  std::map<GraphId, std::vector<DeviceBuffer*>> graphs_;
  GraphId next_graph_ = 0;
  int64_t live_ = 0;
};

}  // namespace vt::cuda
