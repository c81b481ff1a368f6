// CPU DecodeState: HostViewDecodeState's buffers in the backend's arena (host_write lifts
// strict mode's write protection, so any other host write faults); the graph's tail is two
// host ops, eager runs open all three buffers, and reads are views.
#include "vt/cpu/cpu_decode_state.h"

#include "vt/cpu/ops_extra.h"

namespace vt::cpu {

namespace {

class CpuDecodeState : public HostViewDecodeState {
 public:
  using HostViewDecodeState::HostViewDecodeState;

  void record_argmax_advance(Exec& ex) override {
    int32_t *ids = ids_, *pos = pos_, *seq_lens = seq_lens_, *bt = table();
    int64_t* slots = slots_;
    const float* logits = static_cast<const float*>(logits_->data);
    const int32_t P = padded_, V = vocab_, W = width_, bs = bs_;
    ex.op([=] {
      for (int32_t i = 0; i < P; ++i)
        ids[i] = static_cast<int32_t>(argmax(logits + static_cast<int64_t>(i) * V, V));
    });
    ex.op([=] {
      for (int32_t i = 0; i < P; ++i) {
        if (seq_lens[i] == 0) continue;  // padding row
        const int32_t p = ++pos[i];
        ++seq_lens[i];
        slots[i] = static_cast<int64_t>(bt[i * W + p / bs]) * bs + p % bs;
      }
    });
  }

  void run_eager(const std::function<void()>& fn) override {
    be_.host_write(state_, [&] { be_.host_write(bt_, [&] { be_.host_write(logits_, fn); }); });
  }

  const int32_t* read_token_ids(int32_t) override { return ids_; }
  const int32_t* read_positions(int32_t) override { return pos_; }
  const float* read_logits(int32_t) override { return static_cast<const float*>(logits_->data); }
};

}  // namespace

std::unique_ptr<DecodeState> make_decode_state(Backend& backend, int32_t padded, int32_t vocab,
                                               int block_size) {
  return std::make_unique<CpuDecodeState>(backend, padded, vocab, block_size);
}

}  // namespace vt::cpu
