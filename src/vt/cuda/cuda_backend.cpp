// CudaBackend: buffers, stream capture, graph replay, counted transfers.
#include "vt/cuda/cuda_backend.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "vt/cuda/cuda_check.h"
#include "vt/cuda/device_checks.h"
#include "vt/cuda/host_write_diff.h"

namespace vt::cuda {

struct CudaBackend::Buffer : DeviceBuffer {
  void* device = nullptr;  // cudaMalloc
  void* host = nullptr;    // cudaMallocHost; DeviceBuffer::data points here
};

struct CudaBackend::StorageRec : DeviceBuffer {
  StorageKind kind = StorageKind::Scratch;
};

struct CudaBackend::Graph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
};

namespace {
constexpr size_t kStagingBytes = size_t{64} << 20;
}

CudaBackend::CudaBackend(int device) : device_(device) {
  require_device(device);
  check(cudaSetDevice(device), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreateWithFlags(&staging_done_, cudaEventDisableTiming), "cudaEventCreate");
  check(cudaMallocHost(reinterpret_cast<void**>(&staging_), kStagingBytes),
        "cudaMallocHost (upload staging)");
  staging_size_ = kStagingBytes;
}

CudaBackend::~CudaBackend() {
  if (capturing_) {
    cudaGraph_t g = nullptr;
    cudaStreamEndCapture(stream_, &g);
    if (g) cudaGraphDestroy(g);
  }
  if (stream_) cudaStreamSynchronize(stream_);
  for (auto& [id, g] : graphs_) {
    if (g->exec) cudaGraphExecDestroy(g->exec);
    if (g->graph) cudaGraphDestroy(g->graph);
  }
  graphs_.clear();
  for (auto& [id, b] : buffers_) {
    if (b->device) cudaFree(b->device);
    if (b->host) cudaFreeHost(b->host);
  }
  for (auto& [id, b] : storage_) cudaFree(b->data);  // outlived the backend: still released
  if (staging_) cudaFreeHost(staging_);
  if (staging_done_) cudaEventDestroy(staging_done_);
  if (stream_) cudaStreamDestroy(stream_);
}

void CudaBackend::require_not_capturing(const char* what) const {
  if (capturing_)
    throw std::logic_error(std::string(what) +
                           " during a graph capture: it would be recorded into the graph (or is "
                           "not capturable); do it before begin_capture");
}

DeviceBuffer* CudaBackend::alloc(size_t bytes) {
  require_not_capturing("a state buffer allocation");
  auto b = std::make_unique<Buffer>();
  const size_t size = (std::max<size_t>(bytes, 1) + 255) / 256 * 256;
  check(cudaMalloc(&b->device, size), "cudaMalloc (graph state)");
  const cudaError_t e = cudaMallocHost(&b->host, size);
  if (e != cudaSuccess) {
    cudaFree(b->device);
    check(e, "cudaMallocHost (graph state host view)");
  }
  std::memset(b->host, 0, size);
  check(cudaMemsetAsync(b->device, 0, size, stream_), "cudaMemsetAsync");
  b->data = b->host;
  b->bytes = size;
  b->id = ++next_buffer_;
  registry_.track(b.get());
  Buffer* raw = b.get();
  by_host_[reinterpret_cast<uintptr_t>(raw->host)] = raw;
  buffers_[raw->id] = std::move(b);
  return raw;
}

void CudaBackend::release(DeviceBuffer* db) {
  auto* b = static_cast<Buffer*>(db);
  if (!b->device && !b->host) return;
  // cudaFree waits for the device, so no queued kernel still reads the memory.
  if (b->device) cudaFree(b->device);
  if (b->host) {
    by_host_.erase(reinterpret_cast<uintptr_t>(b->host));
    cudaFreeHost(b->host);
  }
  b->device = b->host = nullptr;
  b->data = nullptr;
}

void CudaBackend::free(DeviceBuffer* b) {
  require_not_capturing("freeing a state buffer");
  registry_.mark_freed(b);
  release(b);
}

void CudaBackend::retire(DeviceBuffer* b) {
  require_not_capturing("retiring a state buffer");
  for (DeviceBuffer* r : registry_.retire(b)) release(r);
}

void* CudaBackend::device_ptr(const DeviceBuffer* b) const {
  return static_cast<const Buffer*>(b)->device;
}

void* CudaBackend::device_address(const void* host) const {
  const auto p = reinterpret_cast<uintptr_t>(host);
  auto it = by_host_.upper_bound(p);
  if (it == by_host_.begin()) return nullptr;
  --it;
  const Buffer* b = it->second;
  if (!b->live || p >= it->first + b->bytes) return nullptr;
  return static_cast<uint8_t*>(b->device) + (p - it->first);
}

GraphId CudaBackend::begin_capture(Exec& ex, const std::vector<DeviceBuffer*>& bound) {
  require_not_capturing("begin_capture");
  for (DeviceBuffer* b : bound)
    if (!b->live) throw std::logic_error("begin_capture: a bound buffer was already freed");
  check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal),
        "cudaStreamBeginCapture");
  const GraphId id = registry_.add_graph(bound);
  graphs_[id] = std::make_unique<Graph>();
  capturing_ = id;
  ex.begin_stream_capture();
  return id;
}

void CudaBackend::end_capture(Exec& ex, GraphId id) {
  if (capturing_ != id) throw std::logic_error("end_capture of a graph not being captured");
  ex.end_capture();
  capturing_ = 0;
  Graph& g = *graphs_[id];
  const cudaError_t e = cudaStreamEndCapture(stream_, &g.graph);
  if (e != cudaSuccess) {
    graphs_.erase(id);
    for (DeviceBuffer* b : registry_.remove_graph(id).release) release(b);
    check(e, "cudaStreamEndCapture (an op in the step is not capturable)");
  }
  check(cudaGraphInstantiate(&g.exec, g.graph, 0), "cudaGraphInstantiate");
  ++stats_.captures;
}

void CudaBackend::abort_capture(Exec& ex) {
  if (!capturing_) return;
  const GraphId id = capturing_;
  ex.end_capture();
  capturing_ = 0;
  cudaGraph_t g = nullptr;
  cudaStreamEndCapture(stream_, &g);
  if (g) cudaGraphDestroy(g);
  cudaGetLastError();
  graphs_.erase(id);
  for (DeviceBuffer* b : registry_.remove_graph(id).release) release(b);
}

void CudaBackend::replay(GraphId id) {
  require_not_capturing("replay");
  registry_.check_bound(id, "replay");
  auto it = graphs_.find(id);
  if (it == graphs_.end() || !it->second->exec)
    throw std::logic_error("replay of a graph that was never instantiated");
  check(cudaGraphLaunch(it->second->exec, stream_), "cudaGraphLaunch");
  ++stats_.replays;
  if (h2d_since_replay_ == 0) {
    ++xfer_.steady_replays;
  } else {
    ++xfer_.replays_after_h2d;
    if (strict_) xfer_.strict_h2d_before_replays += h2d_since_replay_;
  }
  h2d_since_replay_ = 0;
}

void CudaBackend::destroy(GraphId id) {
  require_not_capturing("destroy");
  auto it = graphs_.find(id);
  if (it == graphs_.end()) return;
  // A replay may still be running: the graph's resources must outlive it.
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (destroy)");
  if (it->second->exec) cudaGraphExecDestroy(it->second->exec);
  if (it->second->graph) cudaGraphDestroy(it->second->graph);
  graphs_.erase(it);
  ++stats_.destroys;
  const auto r = registry_.remove_graph(id);
  for (DeviceBuffer* b : r.release) release(b);
  if (r.dangling)
    throw std::logic_error(
        "graph destroy: a buffer it was bound to was freed while the graph still referenced it "
        "(invariant: superseded buffers are retired, not freed)");
}

void CudaBackend::set_strict(bool on) {
  strict_ = on;
  if (on) {
    xfer_ = {};
    h2d_since_replay_ = 0;
  }
}

void* CudaBackend::staging(size_t bytes) {
  if (staging_used_ + bytes > staging_size_) {
    // Wrap: every copy out of the staging area has been issued before this event.
    check(cudaEventSynchronize(staging_done_), "cudaEventSynchronize (staging)");
    staging_used_ = 0;
  }
  void* p = staging_ + staging_used_;
  staging_used_ += (bytes + 255) / 256 * 256;
  return p;
}

void CudaBackend::h2d(void* dst, const void* pinned_src, size_t bytes) {
  require_not_capturing("a host-to-device copy");
  check(cudaMemcpyAsync(dst, pinned_src, bytes, cudaMemcpyHostToDevice, stream_),
        "cudaMemcpyAsync (host to device)");
  ++xfer_.h2d_copies;
  xfer_.h2d_bytes += static_cast<int64_t>(bytes);
  ++h2d_since_replay_;
}

void CudaBackend::upload(void* dst, const void* src, size_t bytes) {
  require_not_capturing("upload");
  const auto* s = static_cast<const uint8_t*>(src);
  auto* d = static_cast<uint8_t*>(dst);
  while (bytes > 0) {
    const size_t n = std::min(bytes, staging_size_);
    void* st = staging(n);
    std::memcpy(st, s, n);
    h2d(d, st, n);
    check(cudaEventRecord(staging_done_, stream_), "cudaEventRecord");
    s += n;
    d += n;
    bytes -= n;
  }
}

void CudaBackend::download(void* dst, const void* src, size_t bytes) {
  require_not_capturing("download");
  check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_),
        "cudaMemcpyAsync (device to host)");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (download)");
  ++xfer_.d2h_copies;
  xfer_.d2h_bytes += static_cast<int64_t>(bytes);
}

void CudaBackend::download_buffer(DeviceBuffer* db) {
  auto* b = static_cast<Buffer*>(db);
  if (!b->live) throw std::logic_error("download of a freed graph buffer");
  download(b->host, b->device, b->bytes);
}

void CudaBackend::host_write(DeviceBuffer* db, const std::function<void()>& write) {
  if (!db->live) throw std::logic_error("host write to a freed graph buffer");
  require_not_capturing("host_write");
  auto* b = static_cast<Buffer*>(db);
  download_buffer(b);  // waits for the stream: nothing in flight reads the host view either
  const auto* h = static_cast<const uint8_t*>(b->host);
  snapshot_.assign(h, h + b->bytes);
  write();
  const ByteRange r = changed_range(snapshot_.data(), h, b->bytes);
  if (!r.empty()) h2d(static_cast<uint8_t*>(b->device) + r.begin, h + r.begin, r.size());
  ++stats_.host_writes;
}

void CudaBackend::synchronize() {
  require_not_capturing("synchronize");
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
}

// Storage is plain device memory: no host view, no registry (graphs do not bind it; its
// owners destroy their graphs first).
DeviceBuffer* CudaBackend::alloc_storage(size_t bytes, StorageKind kind, const std::string& what) {
  require_not_capturing("a storage allocation");
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, std::max<size_t>(bytes, 1));
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("cannot allocate " + std::to_string(bytes) +
                             " bytes of device memory for " + what + " (" +
                             storage_kind_name(kind) + " storage): " + cudaGetErrorString(e));
  }
  auto b = std::make_unique<StorageRec>();
  b->data = p;
  b->bytes = bytes;
  b->id = ++next_buffer_;
  b->kind = kind;
  storage_bytes_[static_cast<int>(kind)] += static_cast<int64_t>(bytes);
  DeviceBuffer* raw = b.get();
  storage_[raw->id] = std::move(b);
  return raw;
}

void CudaBackend::free_storage(DeviceBuffer* b) {
  require_not_capturing("freeing storage");
  auto it = storage_.find(b->id);
  if (it == storage_.end()) throw std::logic_error("free_storage of a buffer it did not hand out");
  storage_bytes_[static_cast<int>(it->second->kind)] -= static_cast<int64_t>(b->bytes);
  cudaFree(b->data);  // waits for the device: no queued kernel still reads it
  storage_.erase(it);
}

Backend::Stats CudaBackend::stats() const {
  Stats s = stats_;
  s.live_buffers = registry_.live_buffers();
  s.retired_buffers = registry_.retired_buffers();
  s.storage_buffers = static_cast<int64_t>(storage_.size());
  for (int k = 0; k < kStorageKinds; ++k) s.storage_bytes[k] = storage_bytes_[k];
  return s;
}

std::unique_ptr<CudaBackend> make_cuda_backend(int device) {
  return std::make_unique<CudaBackend>(device);
}

}  // namespace vt::cuda
