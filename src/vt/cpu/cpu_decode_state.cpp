// CPU DecodeState: one state buffer (ids, positions, seq_of_token, logits rows, seq lens,
// slots), one block table ([padded + 1][width]: a spare row keeps reads in bounds) and one
// logits buffer, all from the backend's arena. Writes go through host_write so strict mode
// catches any other host write; reads are views.
#include "vt/cpu/cpu_decode_state.h"

#include <algorithm>
#include <cstring>

#include "vt/cpu/ops_extra.h"

namespace vt::cpu {

namespace {

class CpuDecodeState : public DecodeState {
 public:
  CpuDecodeState(Backend& be, int32_t padded, int32_t vocab, int block_size)
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
  // Retired, not freed: the owner destroys its graphs first, but a retire is safe either way.
  // The backend outlives the state (the executor owns it; runners come and go).
  ~CpuDecodeState() override {
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
        slots_[i] = -1;
        if (real) {
          const int32_t p = rows[i].position;
          slots_[i] = static_cast<int64_t>(rows[i].blocks[p / bs_]) * bs_ + p % bs_;
        }
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
    be_.host_write(state_, [&] {
      slots_[row] = static_cast<int64_t>(r[position / bs_]) * bs_ + position % bs_;
    });
  }

  void set_token(int32_t row, int32_t token) override {
    be_.host_write(state_, [&] { ids_[row] = token; });
  }

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

 private:
  int32_t* table() const { return bt_ ? static_cast<int32_t*>(bt_->data) : nullptr; }

  Backend& be_;
  int32_t padded_, vocab_;
  int bs_;
  int32_t width_ = 0;
  DeviceBuffer *state_ = nullptr, *bt_ = nullptr, *logits_ = nullptr;
  int32_t *ids_ = nullptr, *pos_ = nullptr, *seq_ = nullptr, *rows_ = nullptr, *seq_lens_ = nullptr;
  int64_t* slots_ = nullptr;
};

}  // namespace

std::unique_ptr<DecodeState> make_decode_state(Backend& backend, int32_t padded, int32_t vocab,
                                               int block_size) {
  return std::make_unique<CpuDecodeState>(backend, padded, vocab, block_size);
}

}  // namespace vt::cpu
