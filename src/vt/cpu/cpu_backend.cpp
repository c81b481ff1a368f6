// CPU Backend: op-list graphs, page-aligned state buffers, mprotect in strict mode, and
// the CPU DecodeState (cpu_decode_state.cpp).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "vt/cpu/cpu_decode_state.h"
#include "vt/graph.h"

namespace vt {

Exec& Exec::eager() {
  static thread_local Exec e;
  return e;
}

namespace {

class CpuBackend : public Backend {
 public:
  ~CpuBackend() override {
    graphs_.clear();
    for (auto& [id, b] : buffers_) unmap(*b);
    // Storage outliving its backend is an ownership bug upstream; still, release the memory.
    for (auto& [id, s] : storage_)
      if (s->owned) ::munmap(s->base, s->mapped);
  }
  const char* name() const override { return "cpu"; }

  DeviceBuffer* alloc(size_t bytes) override {
    const size_t size = page_round(bytes);
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("graph state allocation failed");
    auto b = std::make_unique<DeviceBuffer>();
    b->data = p;
    b->bytes = size;
    b->id = ++next_id_;
    if (strict_) ::mprotect(p, size, PROT_READ);
    DeviceBuffer* raw = b.get();
    buffers_[raw->id] = std::move(b);
    ++live_;
    return raw;
  }

  void free(DeviceBuffer* b) override {
    // A graph still bound to b would read freed memory at its next replay; the buffer is
    // marked dead so that replay refuses loudly (see check_bound) instead.
    if (b->live) --live_;
    b->live = false;
    unmap(*b);
    retired_.erase(b->id);
  }

  void retire(DeviceBuffer* b) override {
    retired_[b->id] = b;
    collect();
  }

  GraphId begin_capture(Exec& ex, const std::vector<DeviceBuffer*>& bound) override {
    GraphId id = ++next_graph_;
    Graph& g = graphs_[id];
    g.bound = bound;
    ex.begin_capture(&g.graph);
    capturing_ = id;
    return id;
  }
  void end_capture(Exec& ex, GraphId id) override {
    if (capturing_ != id) throw std::logic_error("end_capture of a graph not being captured");
    ex.end_capture();
    capturing_ = 0;
    ++stats_.captures;
  }

  void replay(GraphId id) override {
    auto it = graphs_.find(id);
    if (it == graphs_.end()) throw std::logic_error("replay of a destroyed graph");
    check_bound(it->second, "replay");
    set_writable(it->second.bound, true);
    it->second.graph.replay();
    set_writable(it->second.bound, false);
    ++stats_.replays;
  }

  void destroy(GraphId id) override {
    auto it = graphs_.find(id);
    if (it == graphs_.end()) return;
    Graph g = std::move(it->second);
    graphs_.erase(it);
    ++stats_.destroys;
    // Checked before retired buffers are collected, and after erasing, so a refused destroy
    // still leaves no graph behind.
    bool dangling = false;
    for (DeviceBuffer* b : g.bound) dangling |= !b->live;
    collect();
    if (dangling) check_bound(g, "destroy");
  }

  void set_strict(bool on) override {
    strict_ = on;
    for (auto& [id, b] : buffers_)
      if (b->live) ::mprotect(b->data, b->bytes, on ? PROT_READ : PROT_READ | PROT_WRITE);
  }

  void host_write(DeviceBuffer* b, const std::function<void()>& write) override {
    if (!b->live) throw std::logic_error("host write to a freed graph buffer");
    if (strict_) ::mprotect(b->data, b->bytes, PROT_READ | PROT_WRITE);
    write();
    if (strict_) ::mprotect(b->data, b->bytes, PROT_READ);
    ++stats_.host_writes;
  }

  const void* read_back(const DeviceBuffer* b, size_t offset, size_t, void*) override {
    return static_cast<const char*>(b->data) + offset;  // host memory: a view, no copy
  }

  // Lazily committed anonymous mappings. Weights start on a 2 MiB boundary and ask for
  // transparent huge pages: decode streams every weight byte each step, and 2 MiB pages
  // spare the TLB walks and let the prefetchers run across 4 KiB boundaries.
  DeviceBuffer* alloc_storage(size_t bytes, StorageKind kind, const std::string& what) override {
    constexpr size_t kHuge = size_t{2} << 20;
    const bool huge = kind == StorageKind::Weights && bytes >= kHuge;
    const size_t size = page_round(bytes);
    const size_t mapped = huge ? (size + kHuge - 1) / kHuge * kHuge + kHuge : size;
    void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      throw std::runtime_error("cannot allocate " + std::to_string(bytes) + " bytes of " + what +
                               " (" + storage_kind_name(kind) + " storage, host memory)");
    auto s = std::make_unique<Storage>();
    s->base = p;
    s->mapped = mapped;
    s->owned = true;
    uintptr_t start = reinterpret_cast<uintptr_t>(p);
    if (huge) {
      start = (start + kHuge - 1) / kHuge * kHuge;
      ::madvise(reinterpret_cast<void*>(start), mapped - kHuge, MADV_HUGEPAGE);  // a hint
    }
    s->data = reinterpret_cast<void*>(start);
    s->bytes = bytes;
    return enter(std::move(s), kind);
  }

  DeviceBuffer* adopt_storage(const void* host, size_t bytes, StorageKind kind,
                              const std::string&) override {
    auto s = std::make_unique<Storage>();
    s->data = const_cast<void*>(host);  // NOLINT: the caller's memory, used in place
    s->bytes = bytes;
    return enter(std::move(s), kind);
  }

  void free_storage(DeviceBuffer* b) override {
    std::lock_guard<std::mutex> lock(storage_mu_);
    auto it = storage_.find(b->id);
    if (it == storage_.end())
      throw std::logic_error("free_storage of a buffer it did not hand out");
    Storage& s = *it->second;
    storage_bytes_[static_cast<int>(s.kind)] -= static_cast<int64_t>(s.bytes);
    --storage_count_;
    if (s.owned) ::munmap(s.base, s.mapped);
    storage_.erase(it);
  }

  int64_t resident_bytes(const DeviceBuffer* b) const override {
    // mincore wants a page-aligned start; 64 Ki pages per call bound the vector.
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t first = reinterpret_cast<uintptr_t>(b->data) / page * page;
    const uintptr_t end = reinterpret_cast<uintptr_t>(b->data) + b->bytes;
    const size_t chunk = page << 16;
    std::vector<unsigned char> vec(chunk / page);
    int64_t resident = 0;
    for (uintptr_t off = first; off < end; off += chunk) {
      const size_t len = std::min<size_t>(chunk, end - off);
      const size_t n = (len + page - 1) / page;
      if (::mincore(reinterpret_cast<void*>(off), len, vec.data()) != 0) return -1;
      for (size_t i = 0; i < n; ++i) resident += (vec[i] & 1) ? static_cast<int64_t>(page) : 0;
    }
    return resident;
  }

  bool commit(const DeviceBuffer* b, size_t offset, size_t bytes) override {
    // MADV_POPULATE_WRITE (Linux 5.14): fault the pages in writable, contents kept.
    constexpr int kPopulateWrite = 23;
    const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
    const uintptr_t start = reinterpret_cast<uintptr_t>(b->data) + offset;
    const uintptr_t lo = start / page * page, hi = (start + bytes + page - 1) / page * page;
    return bytes == 0 || ::madvise(reinterpret_cast<void*>(lo), hi - lo, kPopulateWrite) == 0;
  }

  std::unique_ptr<DecodeState> make_decode_state(int32_t padded, int32_t vocab,
                                                 int block_size) override {
    return cpu::make_decode_state(*this, padded, vocab, block_size);
  }

  Stats stats() const override {
    Stats s = stats_;  // O(1): the decode driver reads it every step
    s.live_buffers = live_;
    s.retired_buffers = static_cast<int64_t>(retired_.size());
    s.storage_buffers = storage_count_.load(std::memory_order_relaxed);
    for (int k = 0; k < kStorageKinds; ++k)
      s.storage_bytes[k] = storage_bytes_[k].load(std::memory_order_relaxed);
    return s;
  }

 private:
  struct Graph {
    StepGraph graph;
    std::vector<DeviceBuffer*> bound;
  };
  struct Storage : DeviceBuffer {
    StorageKind kind = StorageKind::Scratch;
    void* base = nullptr;  // the mapping (owned storage only)
    size_t mapped = 0;
    bool owned = false;  // false: adopted host memory, the caller frees it
  };

  DeviceBuffer* enter(std::unique_ptr<Storage> s, StorageKind kind) {
    std::lock_guard<std::mutex> lock(storage_mu_);
    s->kind = kind;
    s->id = ++next_storage_id_;
    storage_bytes_[static_cast<int>(kind)] += static_cast<int64_t>(s->bytes);
    ++storage_count_;
    DeviceBuffer* raw = s.get();
    storage_[raw->id] = std::move(s);
    return raw;
  }

  void check_bound(const Graph& g, const char* what) {
    for (DeviceBuffer* b : g.bound)
      if (!b->live)
        throw std::logic_error(std::string("graph ") + what +
                               ": a buffer it is bound to was freed while the graph still "
                               "referenced it (invariant: superseded buffers are retired, "
                               "not freed)");
  }

  void set_writable(const std::vector<DeviceBuffer*>& bound, bool writable) {
    if (!strict_) return;
    for (DeviceBuffer* b : bound)
      ::mprotect(b->data, b->bytes, writable ? PROT_READ | PROT_WRITE : PROT_READ);
  }

  // Frees retired buffers that no graph is bound to any more.
  void collect() {
    for (auto it = retired_.begin(); it != retired_.end();) {
      bool used = false;
      for (auto& [gid, g] : graphs_)
        for (DeviceBuffer* b : g.bound) used |= (b == it->second);
      if (used) {
        ++it;
      } else {
        DeviceBuffer* b = it->second;
        it = retired_.erase(it);
        b->live = false;
        --live_;
        unmap(*b);
      }
    }
  }

  static size_t page_round(size_t bytes) {
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return (std::max<size_t>(bytes, 1) + page - 1) / page * page;
  }

  void unmap(DeviceBuffer& b) {
    if (b.data) ::munmap(b.data, b.bytes);
    b.data = nullptr;
  }

  std::map<uint64_t, std::unique_ptr<DeviceBuffer>> buffers_;
  std::map<uint64_t, DeviceBuffer*> retired_;
  // Storage records change under the mutex (models load on one thread, run on another);
  // the counts are atomics so that stats(), read every decode step, takes no lock.
  std::map<uint64_t, std::unique_ptr<Storage>> storage_;
  std::atomic<int64_t> storage_bytes_[kStorageKinds] = {};
  std::atomic<int64_t> storage_count_{0};
  uint64_t next_storage_id_ = 0;
  std::mutex storage_mu_;
  std::map<GraphId, Graph> graphs_;
  uint64_t next_id_ = 0;
  GraphId next_graph_ = 0, capturing_ = 0;
  bool strict_ = false;
  int64_t live_ = 0;
  Stats stats_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace vt
