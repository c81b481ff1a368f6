// HostViewDecodeState: the decode-state layout and host-side updates shared by the CPU and
// CUDA backends (see decode_state.h).
#include "vt/decode_state.h"

#include <algorithm>
#include <cstring>

namespace vt {

HostViewDecodeState::HostViewDecodeState(Backend& be, int32_t padded, int32_t vocab, int block_size)
    : be_(be), padded_(padded), vocab_(vocab), bs_(block_size) {
  const size_t p = static_cast<size_t>(padded);
  state_ = be_.alloc(p * (6 * sizeof(int32_t) + sizeof(int64_t)) + 8);
  logits_ = be_.alloc(p * static_cast<size_t>(vocab) * sizeof(float));
  auto* base = static_cast<int32_t*>(state_->data);
  ids_ = base;
  pos_ = base + p;
  seq_ = base + 2 * p;
  rows_ = base + 3 * p;
  seq_lens_ = base + 4 * p;
  lora_ = base + 5 * p;
  slots_ = reinterpret_cast<int64_t*>((reinterpret_cast<uintptr_t>(base + 6 * p) + 7) &
                                      ~static_cast<uintptr_t>(7));
  be_.host_write(state_, [&] {
    for (size_t i = 0; i < p; ++i) {
      seq_[i] = rows_[i] = static_cast<int32_t>(i);
      lora_[i] = 0;
    }
  });
}

HostViewDecodeState::~HostViewDecodeState() {
  for (DeviceBuffer* b : {state_, bt_, logits_})
    if (b) be_.retire(b);
}

DecodeInputs HostViewDecodeState::inputs() const {
  DecodeInputs in;
  in.token_ids = ids_;
  in.positions = pos_;
  in.seq_of_token = seq_;
  in.logits_indices = rows_;
  in.lora_ids = lora_;
  in.slot_mapping = slots_;
  in.block_table = table();
  in.bt_stride = width_;
  in.logits = static_cast<float*>(logits_->data);
  return in;
}

bool HostViewDecodeState::set_width(int32_t width, bool free_old_at_once) {
  DeviceBuffer* old = bt_;
  bt_ = be_.alloc(static_cast<size_t>(padded_ + 1) * width * sizeof(int32_t));
  width_ = width;
  // A fresh allocation may hold anything (device memory, a recycled arena range): zero it, so
  // every entry a graph can read before the next seed is block 0, a valid index.
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

namespace {
int64_t slot_at(const int32_t* blocks, int32_t position, int bs) {
  return static_cast<int64_t>(blocks[position / bs]) * bs + position % bs;
}
}  // namespace

void HostViewDecodeState::seed(const std::vector<DecodeSeedRow>& rows) {
  const int32_t n = static_cast<int32_t>(rows.size()), W = width_;
  be_.host_write(state_, [&] {
    for (int32_t i = 0; i < padded_; ++i) {
      const bool real = i < n;
      ids_[i] = real ? rows[i].token : 0;
      pos_[i] = real ? rows[i].position : 0;
      seq_lens_[i] = real ? rows[i].position + 1 : 0;
      slots_[i] = real ? slot_at(rows[i].blocks, rows[i].position, bs_) : -1;
      lora_[i] = real ? rows[i].lora_id : 0;
    }
  });
  be_.host_write(bt_, [&] {
    int32_t* t = table();
    std::memset(t, 0, static_cast<size_t>(padded_ + 1) * W * sizeof(int32_t));
    for (int32_t i = 0; i < n; ++i)
      std::copy_n(rows[i].blocks, std::min(rows[i].num_blocks, W), t + static_cast<size_t>(i) * W);
  });
}

void HostViewDecodeState::patch_blocks(int32_t row, int32_t from, const int32_t* blocks,
                                       int32_t count, int32_t position) {
  int32_t* r = table() + static_cast<size_t>(row) * width_;
  be_.host_write(bt_, [&] { std::copy_n(blocks, count, r + from); });
  // The table's host view now holds the row as the backend does (host_write refreshed it).
  be_.host_write(state_, [&] { slots_[row] = slot_at(r, position, bs_); });
}

void HostViewDecodeState::set_token(int32_t row, int32_t token) {
  be_.host_write(state_, [&] { ids_[row] = token; });
}

}  // namespace vt
