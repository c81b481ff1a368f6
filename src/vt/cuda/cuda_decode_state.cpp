// CUDA DecodeState: HostViewDecodeState (vt/decode_state.h) in CudaBackend buffers. Host
// code writes through host_write (refresh the host view, write it, upload the bytes that
// changed), the graph's tail is two kernels (argmax_rows, decode_advance) on the backend's
// stream, and reads are downloads into staging owned by the state. The forward pass binds
// the device side of the same buffers (CudaModelExecutor maps host-view pointers to device
// addresses), so a replay needs no host work at all.
#include <algorithm>
#include <cstring>
#include <vector>

#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/cuda_check.h"
#include "vt/cuda/kernels.h"
#include "vt/decode_state.h"

namespace vt::cuda {

namespace {

class CudaDecodeState : public HostViewDecodeState {
 public:
  CudaDecodeState(CudaBackend& be, int32_t padded, int32_t vocab, int block_size)
      : HostViewDecodeState(be, padded, vocab, block_size), cbe_(be) {}

  void record_argmax_advance(Exec& ex) override {
    // The executor's launches are already on the stream (eager, or recorded by stream
    // capture: the Exec passes through), so these two follow them in order.
    auto dev = [this](const void* p) { return cbe_.device_address(p); };
    const cudaStream_t s = cbe_.stream();
    auto* ids = static_cast<int32_t*>(dev(ids_));
    auto* pos = static_cast<int32_t*>(dev(pos_));
    auto* seq_lens = static_cast<int32_t*>(dev(seq_lens_));
    auto* slots = static_cast<int64_t*>(dev(slots_));
    const auto* logits = static_cast<const float*>(cbe_.device_ptr(logits_));
    const auto* bt = static_cast<const int32_t*>(cbe_.device_ptr(bt_));
    const int32_t P = padded_, V = vocab_, W = width_;
    const int bs = bs_;
    ex.op([=] {
      argmax_rows(s, logits, P, V, V, ids);
      decode_advance(s, P, pos, seq_lens, slots, bt, W, bs);
      check_launch("decode state: argmax / advance");
    });
  }

  // Device memory has no host protection to lift: the forward runs as it is.
  void run_eager(const std::function<void()>& fn) override { fn(); }

  const int32_t* read_token_ids(int32_t n) override { return read(ids_, n, ids_host_); }
  const int32_t* read_positions(int32_t n) override { return read(pos_, n, pos_host_); }
  const float* read_logits(int32_t n) override {
    logits_host_.resize(static_cast<size_t>(n) * vocab_);
    cbe_.download(logits_host_.data(), cbe_.device_ptr(logits_),
                  logits_host_.size() * sizeof(float));
    return logits_host_.data();
  }

 private:
  const int32_t* read(const int32_t* host_view, int32_t n, std::vector<int32_t>& out) {
    out.resize(static_cast<size_t>(n));
    cbe_.download(out.data(), cbe_.device_address(host_view), out.size() * sizeof(int32_t));
    return out.data();
  }

  CudaBackend& cbe_;
  std::vector<int32_t> ids_host_, pos_host_;
  std::vector<float> logits_host_;
};

}  // namespace

std::unique_ptr<DecodeState> CudaBackend::make_decode_state(int32_t padded, int32_t vocab,
                                                            int block_size) {
  return std::make_unique<CudaDecodeState>(*this, padded, vocab, block_size);
}

}  // namespace vt::cuda
