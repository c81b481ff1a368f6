// CudaBackend: vt::Backend over one CUDA device, one stream and CUDA graphs.
//
// State buffers: device memory (cudaMalloc) plus a pinned host view of the same size.
// DeviceBuffer::data is the host view (what host code indexes); kernels and graphs bind the
// device address (device_ptr(), or device_address() for a pointer into a host view).
// The host view is a staging area, not a mirror: device work does not update it; read
// results back with download_buffer().
//
// Capture is stream capture on the backend's stream: begin_capture puts the Exec in
// pass-through mode (ops run at once, their launches are recorded), end_capture
// instantiates the graph, replay launches it. A graph references device addresses, so a
// superseded buffer is retired (freed once no graph is bound to it; GraphRegistry).
//
// Every host-to-device copy goes through one function that counts it, and none may be
// issued under capture (it would become a graph node replaying stale host memory), so
// TransferStats tells a gate exactly how many copies ran between two replays.
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vt/cuda/graph_registry.h"
#include "vt/graph.h"

namespace vt::cuda {

class CudaBackend : public Backend {
 public:
  // Checks the device (device_checks.h) and creates the stream; throws with the reason.
  explicit CudaBackend(int device = 0);
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  const char* name() const override { return "cuda"; }

  DeviceBuffer* alloc(size_t bytes) override;
  void free(DeviceBuffer* b) override;
  void retire(DeviceBuffer* b) override;

  GraphId begin_capture(Exec& ex, const std::vector<DeviceBuffer*>& bound) override;
  void end_capture(Exec& ex, GraphId g) override;
  void replay(GraphId g) override;
  void destroy(GraphId g) override;

  // Strict mode: the transfer counters restart, and every host-to-device copy is also
  // counted against the replay that follows it (TransferStats::strict_h2d_before_replays).
  void set_strict(bool on) override;
  // Refreshes b's host view from the device, runs `write` on it, and uploads the bytes the
  // write changed (one counted copy; none if nothing changed). Do not nest host_write on the
  // same buffer. Synchronizes the stream; refused under capture.
  void host_write(DeviceBuffer* b, const std::function<void()>& write) override;
  // Device memory (cudaMalloc); `data` is a device address. Refused under capture.
  DeviceBuffer* alloc_storage(size_t bytes, StorageKind kind, const std::string& what) override;
  void free_storage(DeviceBuffer* b) override;
  Stats stats() const override;
  // The inputs of a captured decode step in this backend's buffers (cuda_decode_state.cpp):
  // host writes upload, the argmax / advance tail is two kernels, reads download.
  std::unique_ptr<DecodeState> make_decode_state(int32_t padded, int32_t vocab,
                                                 int block_size) override;

  // ---- CUDA specifics ----
  cudaStream_t stream() const { return stream_; }
  int device() const { return device_; }
  bool capturing() const { return capturing_ != 0; }
  void* device_ptr(const DeviceBuffer* b) const;
  // The device address of `host` when it points into a live buffer's host view, else null.
  void* device_address(const void* host) const;

  // The one host-to-device path: stages `bytes` from `src` in pinned memory and copies them
  // to device address `dst` on the stream (asynchronously). Refused under capture.
  void upload(void* dst, const void* src, size_t bytes);
  // Device to host, synchronous (waits for the stream first).
  void download(void* dst, const void* src, size_t bytes);
  // b's host view := its device contents.
  void download_buffer(DeviceBuffer* b);
  void synchronize();
  // Ends a capture that failed half way (an exception between begin and end_capture).
  void abort_capture(Exec& ex);

  struct TransferStats {
    int64_t h2d_copies = 0, h2d_bytes = 0, d2h_copies = 0, d2h_bytes = 0;
    int64_t steady_replays = 0;     // replays with no host-to-device copy since the last one
    int64_t replays_after_h2d = 0;  // replays preceded by at least one copy
    int64_t strict_h2d_before_replays = 0;  // strict mode: copies that preceded a replay
  };
  TransferStats transfer_stats() const { return xfer_; }

 private:
  struct Buffer;
  struct StorageRec;
  struct Graph;
  void h2d(void* dst, const void* pinned_src, size_t bytes);
  void* staging(size_t bytes);
  void release(DeviceBuffer* b);
  void require_not_capturing(const char* what) const;

  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t staging_done_ = nullptr;
  uint8_t* staging_ = nullptr;
  size_t staging_size_ = 0, staging_used_ = 0;
  std::vector<uint8_t> snapshot_;
  GraphRegistry registry_;
  std::map<uint64_t, std::unique_ptr<Buffer>> buffers_;
  std::map<uintptr_t, Buffer*> by_host_;  // host view start -> buffer
  std::map<GraphId, std::unique_ptr<Graph>> graphs_;
  std::map<uint64_t, std::unique_ptr<StorageRec>> storage_;
  int64_t storage_bytes_[kStorageKinds] = {};
  uint64_t next_buffer_ = 0;
  GraphId capturing_ = 0;
  bool strict_ = false;
  int64_t h2d_since_replay_ = 0;
  Stats stats_;
  TransferStats xfer_;
};

std::unique_ptr<CudaBackend> make_cuda_backend(int device = 0);

}  // namespace vt::cuda
