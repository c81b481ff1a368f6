// Step graphs and the Backend interface they live behind.
//
// A StepGraph is a recorded op sequence with every buffer bound at a fixed address; a
// replay runs it with no host logic. Model code emits every data-touching step through
// an Exec: eagerly it runs the op at once, while capturing it only records it (like a
// CUDA stream under capture), so host code between ops must never branch on data.
//
// The Backend owns graph-state memory and graph lifetimes: capture begin/end, replay,
// destroy, and retirement of buffers a graph may still reference. It also makes the
// DecodeState objects (vt/decode_state.h) that own a decode graph's inputs, and reads
// device buffers back to the host (read_back). The CPU backend keeps
// op lists and page-aligned buffers (so strict mode can write-protect them); a CUDA
// backend maps the same calls onto cudaMalloc and CUDA graphs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace vt {

class StepGraph {
 public:
  void add(std::function<void()> op) { ops_.push_back(std::move(op)); }
  void replay() const {
    for (const auto& op : ops_) op();
  }
  size_t size() const { return ops_.size(); }

 private:
  std::vector<std::function<void()>> ops_;
};

class Exec {
 public:
  template <class F>
  void op(F&& f) {
    if (capture_)
      capture_->add(std::function<void()>(std::forward<F>(f)));
    else
      f();
  }
  bool capturing() const { return capture_ != nullptr || stream_capture_; }
  void begin_capture(StepGraph* g) { capture_ = g; }
  // Pass-through capture (CUDA): ops run at once and their kernel launches are what the
  // backend's stream capture records. capturing() is true, so model code still treats the
  // step as recorded: no host reads of data, no syncs, no allocations.
  void begin_stream_capture() { stream_capture_ = true; }
  bool passes_through() const { return stream_capture_; }
  void end_capture() {
    capture_ = nullptr;
    stream_capture_ = false;
  }

  static Exec& eager();  // a shared Exec that never captures

 private:
  StepGraph* capture_ = nullptr;
  bool stream_capture_ = false;
};

// Graph-state memory handed out by a Backend.
struct DeviceBuffer {
  void* data = nullptr;
  size_t bytes = 0;
  uint64_t id = 0;
  bool live = true;
};

using GraphId = uint64_t;

class DecodeState;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  virtual DeviceBuffer* alloc(size_t bytes) = 0;
  // Frees at once. Only for buffers no graph references (see retire).
  virtual void free(DeviceBuffer* b) = 0;
  // Frees once no live graph is bound to it.
  virtual void retire(DeviceBuffer* b) = 0;

  // Records the ops `ex` emits until end_capture; `bound` are the state buffers the graph
  // reads or writes (kept alive for it).
  virtual GraphId begin_capture(Exec& ex, const std::vector<DeviceBuffer*>& bound) = 0;
  virtual void end_capture(Exec& ex, GraphId g) = 0;
  virtual void replay(GraphId g) = 0;
  virtual void destroy(GraphId g) = 0;

  // Strict mode: state buffers are read-only to the host except inside replay and
  // inside host_write(); a stray host write faults.
  virtual void set_strict(bool on) = 0;
  // Runs `write` with `b` writable (the only sanctioned host writes to graph state).
  virtual void host_write(DeviceBuffer* b, const std::function<void()>& write) = 0;

  // Host view of bytes [offset, offset + bytes) of `b`. The CPU returns a pointer into the
  // buffer (no copy); a device backend copies into `staging` (>= bytes) and returns it.
  virtual const void* read_back(const DeviceBuffer* b, size_t offset, size_t bytes, void* staging);
  // The inputs of a captured decode step over `padded` rows with `vocab` logits columns and
  // paged KV of block_size slots per block. A backend without decode graphs throws.
  virtual std::unique_ptr<DecodeState> make_decode_state(int32_t padded, int32_t vocab,
                                                         int block_size);

  struct Stats {
    int64_t captures = 0, replays = 0, destroys = 0, host_writes = 0;
    int64_t live_buffers = 0, retired_buffers = 0;
  };
  virtual Stats stats() const = 0;
};

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace vt
