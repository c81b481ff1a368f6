// CUDA DecodeState: the CPU state's layout (cpu_decode_state.cpp) in CudaBackend buffers.
// Host code writes through host_write (refresh the host view, write it, upload the bytes that
// changed), the graph's tail is two kernels (argmax_rows, decode_advance) on the backend's
// stream, and reads are downloads into staging owned by the state. The forward pass binds
// the device side of the same buffers (CudaModelExecutor maps host-view pointers to device
// addresses), so a replay needs no host work at all.
#include <algorithm>
#include <cstring>
#include <vector>

#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/cuda_check.h"
#include "vt/cuda/index_math.h"
#include "vt/cuda/kernels.h"
#include "vt/decode_state.h"

namespace vt::cuda {

namespace {

class CudaDecodeState : public DecodeState {
 public:
  CudaDecodeState(CudaBackend& be, int32_t padded, int32_t vocab, int block_size)
      : be_(be), padded_(padded), vocab_(vocab), bs_(block_size) {
    const size_t p = static_cast<size_t>(padded);
    state_ = be_.alloc(p * (5 * sizeof(int32_t) + sizeof(int64_t)) + 8);
    logits_ = be_.alloc(p * static_cast<size_t>(vocab) * sizeof(float));
    auto* base = static_cast<int32_t*>(state_->data);
    ids_ = base;
    pos_ = base + p;
    seq_ = base + 2 * p;
    rows_ = base + 3 * p;
    seq_lens_ = base + 4 * p;
    slots_ = reinterpret_cast<int64_t*>((reinterpret_cast<uintptr_t>(base + 5 * p) + 7) &
                                        ~static_cast<uintptr_t>(7));
    be_.host_write(state_, [&] {
      for (size_t i = 0; i < p; ++i) seq_[i] = rows_[i] = static_cast<int32_t>(i);
    });
  }
  ~CudaDecodeState() override {
    for (DeviceBuffer* b : {state_, bt_, logits_})
      if (b) be_.retire(b);
  }

  int32_t padded() const override { return padded_; }
  int32_t width() const override { return width_; }
  DecodeInputs inputs() const override {
    DecodeInputs in;
    in.token_ids = ids_;
    in.positions = pos_;
    in.seq_of_token = seq_;
    in.logits_indices = rows_;
    in.slot_mapping = slots_;
    in.block_table = table();
    in.bt_stride = width_;
    in.logits = static_cast<float*>(logits_->data);
    return in;
  }
  std::vector<DeviceBuffer*> bound() const override { return {state_, bt_, logits_}; }

  bool set_width(int32_t width, bool free_old_at_once) override {
    DeviceBuffer* old = bt_;
    bt_ = be_.alloc(static_cast<size_t>(padded_ + 1) * width * sizeof(int32_t));
    width_ = width;
    // A fresh device allocation holds garbage: zero it (block 0 is a valid index to read).
    be_.host_write(bt_, [&] {
      std::memset(table(), 0, static_cast<size_t>(padded_ + 1) * width * sizeof(int32_t));
    });
    if (!old) return false;
    if (free_old_at_once)
      be_.free(old);
    else
      be_.retire(old);
    return true;
  }

  void seed(const std::vector<DecodeSeedRow>& rows) override {
    const int32_t n = static_cast<int32_t>(rows.size()), W = width_;
    be_.host_write(state_, [&] {
      for (int32_t i = 0; i < padded_; ++i) {
        const bool real = i < n;
        ids_[i] = real ? rows[i].token : 0;
        pos_[i] = real ? rows[i].position : 0;
        seq_lens_[i] = real ? rows[i].position + 1 : 0;
        slots_[i] = real ? slot_of(rows[i].blocks, rows[i].position, bs_) : -1;
      }
    });
    be_.host_write(bt_, [&] {
      int32_t* t = table();
      std::memset(t, 0, static_cast<size_t>(padded_ + 1) * W * sizeof(int32_t));
      for (int32_t i = 0; i < n; ++i)
        std::copy_n(rows[i].blocks, std::min(rows[i].num_blocks, W),
                    t + static_cast<size_t>(i) * W);
    });
  }

  void patch_blocks(int32_t row, int32_t from, const int32_t* blocks, int32_t count,
                    int32_t position) override {
    int32_t* r = table() + static_cast<size_t>(row) * width_;
    be_.host_write(bt_, [&] { std::copy_n(blocks, count, r + from); });
    // The table's host view now holds the row as the device does (host_write refreshed it).
    be_.host_write(state_, [&] { slots_[row] = slot_of(r, position, bs_); });
  }

  void set_token(int32_t row, int32_t token) override {
    be_.host_write(state_, [&] { ids_[row] = token; });
  }

  void record_argmax_advance(Exec& ex) override {
    // The executor's launches are already on the stream (eager, or recorded by stream
    // capture: the Exec passes through), so these two follow them in order.
    auto dev = [this](const void* p) { return be_.device_address(p); };
    const cudaStream_t s = be_.stream();
    auto* ids = static_cast<int32_t*>(dev(ids_));
    auto* pos = static_cast<int32_t*>(dev(pos_));
    auto* seq_lens = static_cast<int32_t*>(dev(seq_lens_));
    auto* slots = static_cast<int64_t*>(dev(slots_));
    const auto* logits = static_cast<const float*>(be_.device_ptr(logits_));
    const auto* bt = static_cast<const int32_t*>(be_.device_ptr(bt_));
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
    be_.download(logits_host_.data(), be_.device_ptr(logits_), logits_host_.size() * sizeof(float));
    return logits_host_.data();
  }

 private:
  int32_t* table() const { return bt_ ? static_cast<int32_t*>(bt_->data) : nullptr; }
  const int32_t* read(const int32_t* host_view, int32_t n, std::vector<int32_t>& out) {
    out.resize(static_cast<size_t>(n));
    be_.download(out.data(), be_.device_address(host_view), out.size() * sizeof(int32_t));
    return out.data();
  }

  CudaBackend& be_;
  int32_t padded_, vocab_;
  int bs_;
  int32_t width_ = 0;
  DeviceBuffer *state_ = nullptr, *bt_ = nullptr, *logits_ = nullptr;
  int32_t *ids_ = nullptr, *pos_ = nullptr, *seq_ = nullptr, *rows_ = nullptr, *seq_lens_ = nullptr;
  int64_t* slots_ = nullptr;
  std::vector<int32_t> ids_host_, pos_host_;
  std::vector<float> logits_host_;
};

}  // namespace

std::unique_ptr<DecodeState> CudaBackend::make_decode_state(int32_t padded, int32_t vocab,
                                                            int block_size) {
  return std::make_unique<CudaDecodeState>(*this, padded, vocab, block_size);
}

}  // namespace vt::cuda
