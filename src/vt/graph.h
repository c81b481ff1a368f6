// Step graphs and the Backend interface they live behind.
//
// A StepGraph is a recorded op sequence with every buffer bound at a fixed address; a
// replay runs it with no host logic. Model code emits every data-touching step through
// an Exec: eagerly it runs the op at once, while capturing it only records it (like a
// CUDA stream under capture), so host code between ops must never branch on data.
//
// The Backend owns graph-state memory and graph lifetimes: capture begin/end, replay,
// destroy, and retirement of buffers a graph may still reference. It also makes the
// DecodeState objects (vt/decode_state.h) that own a decode graph's inputs, reads
// device buffers back to the host (read_back), and hands out the storage the forward pass
// runs over: weights, KV pages and activation scratch (alloc_storage; vt/storage.h holds
// it). The CPU backend keeps op lists, page-aligned state buffers (so strict mode can
// write-protect them) and lazily committed host mappings for storage; a CUDA backend maps
// the same calls onto cudaMalloc and CUDA graphs.
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

// What a storage buffer holds. Backends may place the kinds differently (the CPU asks for
// huge pages for weights); stats count bytes per kind.
enum class StorageKind : int { Weights = 0, KvCache = 1, Scratch = 2 };
inline constexpr int kStorageKinds = 3;
const char* storage_kind_name(StorageKind k);

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

  // Storage: the long-lived memory a forward pass reads and writes (weights, KV pages,
  // activation scratch), as opposed to graph state (alloc). Strict mode never protects it and
  // captures do not bind it, so its owner must destroy the graphs that point into it before
  // freeing it (executors do: graphs die with the runner, storage with the model). The CPU
  // hands out lazily committed anonymous mappings (pages are backed when first written);
  // a device backend hands out device memory, whose `data` the host must not dereference.
  // Throws std::runtime_error "cannot allocate N bytes of <what> ..." when it cannot.
  virtual DeviceBuffer* alloc_storage(size_t bytes, StorageKind kind, const std::string& what) = 0;
  // Host memory the caller keeps owning and freeing (a mapped model file, a cached packed
  // copy), entered as storage of `kind` so the backend accounts for it and its kernels may
  // read it in place. A backend whose kernels cannot read host memory refuses (it copies
  // weights into alloc_storage buffers instead).
  virtual DeviceBuffer* adopt_storage(const void* host, size_t bytes, StorageKind kind,
                                      const std::string& what);
  // Frees alloc_storage memory, or forgets an adopted range. Never under capture.
  virtual void free_storage(DeviceBuffer* b) = 0;
  // Bytes of b backed by memory now (a lazily committed host mapping grows as it is
  // written; device memory is all backed). -1 when the backend cannot tell.
  virtual int64_t resident_bytes(const DeviceBuffer* b) const {
    return static_cast<int64_t>(b->bytes);
  }
  // Backs bytes [offset, offset + bytes) of b with memory now, keeping their contents, so
  // that later first writes take no page faults (a lazily committed host mapping; device
  // memory is all backed already). Returns false when the backend cannot (the range then
  // stays lazy).
  virtual bool commit(const DeviceBuffer* b, size_t offset, size_t bytes) { return true; }

  struct Stats {
    int64_t captures = 0, replays = 0, destroys = 0, host_writes = 0;
    int64_t live_buffers = 0, retired_buffers = 0;
    int64_t storage_buffers = 0;                // alloc_storage + adopt_storage, live
    int64_t storage_bytes[kStorageKinds] = {};  // their sizes by StorageKind
  };
  virtual Stats stats() const = 0;
};

std::unique_ptr<Backend> make_cpu_backend();

}  // namespace vt
