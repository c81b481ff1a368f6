// DecodeState: the inputs of a captured decode step, owned by a Backend.
//
// One state per padded batch size holds token ids, positions, seq lens, slots, block-table
// rows and logits at fixed device addresses (a graph binds them). Every host-side change goes
// through a call here (seed, block patch, token fix-up), and every host-side read through a
// read-back call, so a device backend can implement it with uploads and copies while the CPU
// backend writes and reads its own arena in place. The graph's tail (argmax over the logits
// rows, then the position/slot advance) is recorded by the state too: it is a backend op.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vt/graph.h"

namespace vt {

// Device addresses a captured forward reads and writes (stable for the state's life, except
// block_table, which moves when set_width reallocates it).
struct DecodeInputs {
  int32_t* token_ids = nullptr;
  int32_t* positions = nullptr;
  int32_t* seq_of_token = nullptr;    // identity: row i is sequence i
  int32_t* logits_indices = nullptr;  // identity: logits row i is token i
  int32_t* lora_ids = nullptr;        // each row's LoRA adapter (0: none; padding 0)
  int64_t* slot_mapping = nullptr;
  int32_t* block_table = nullptr;  // [padded][bt_stride]
  int32_t bt_stride = 0;
  float* logits = nullptr;  // [padded][vocab]
};

// One real row of a seed: its last token, its position and its block ids.
struct DecodeSeedRow {
  int32_t token = 0;
  int32_t position = 0;
  const int32_t* blocks = nullptr;
  int32_t num_blocks = 0;
  int32_t lora_id = 0;  // its request's LoRA adapter (0: none)
};

class DecodeState {
 public:
  virtual ~DecodeState() = default;
  virtual int32_t padded() const = 0;
  virtual int32_t width() const = 0;
  virtual DecodeInputs inputs() const = 0;
  // The buffers a graph over this state reads or writes (it keeps them alive).
  virtual std::vector<DeviceBuffer*> bound() const = 0;

  // (Re)allocates the block table with `width` columns, empty. A table a graph may still
  // reference is retired; free_old_at_once frees it instead (a test mutation: unsafe).
  // Returns whether an old table existed (its graphs must be re-captured).
  virtual bool set_width(int32_t width, bool free_old_at_once = false) = 0;
  // Writes every row: rows.size() real ones, the rest padding (seq len 0, slot -1); copies
  // up to width() blocks per row.
  virtual void seed(const std::vector<DecodeSeedRow>& rows) = 0;
  // Appends block ids [from, from + count) to a row and recomputes its slot at `position`.
  virtual void patch_blocks(int32_t row, int32_t from, const int32_t* blocks, int32_t count,
                            int32_t position) = 0;
  // Sets the token a row feeds next (a sampled token that differs from the argmax).
  virtual void set_token(int32_t row, int32_t token) = 0;
  // Records the graph's tail into `ex`: token ids = argmax of each logits row (the lowest
  // index wins ties), then positions, seq lens and slots advance by one on real rows.
  virtual void record_argmax_advance(Exec& ex) = 0;
  // Runs `fn` with the whole state writable (an eager warm-up on the graph's own buffers).
  virtual void run_eager(const std::function<void()>& fn) = 0;

  // Read-back of the first n rows. A device backend copies into host staging owned by the
  // state; the CPU returns a view of the state itself. Valid until the next call on the state.
  virtual const int32_t* read_token_ids(int32_t n) = 0;
  virtual const int32_t* read_positions(int32_t n) = 0;
  virtual const float* read_logits(int32_t n) = 0;
};

// The state both backends use: one state buffer (ids, positions, seq_of_token, logits rows,
// seq lens, slots), one block table ([padded + 1][width]: a spare row keeps reads in bounds)
// and one logits buffer, all from the backend's alloc. Every host change goes through
// Backend::host_write on the buffers' host views (the CPU's arena itself, or a device
// backend's mirror that host_write uploads), so seeding, block patches and token fix-ups are
// written once here. A backend adds the graph's tail, eager runs and read-back.
class HostViewDecodeState : public DecodeState {
 public:
  HostViewDecodeState(Backend& be, int32_t padded, int32_t vocab, int block_size);
  // Retired, not freed: the owner destroys its graphs first, but a retire is safe either way.
  ~HostViewDecodeState() override;

  int32_t padded() const override { return padded_; }
  int32_t width() const override { return width_; }
  DecodeInputs inputs() const override;
  std::vector<DeviceBuffer*> bound() const override { return {state_, bt_, logits_}; }
  bool set_width(int32_t width, bool free_old_at_once = false) override;
  void seed(const std::vector<DecodeSeedRow>& rows) override;
  void patch_blocks(int32_t row, int32_t from, const int32_t* blocks, int32_t count,
                    int32_t position) override;
  void set_token(int32_t row, int32_t token) override;

 protected:
  int32_t* table() const { return bt_ ? static_cast<int32_t*>(bt_->data) : nullptr; }

  Backend& be_;
  int32_t padded_, vocab_;
  int bs_;
  int32_t width_ = 0;
  DeviceBuffer *state_ = nullptr, *bt_ = nullptr, *logits_ = nullptr;
  int32_t *ids_ = nullptr, *pos_ = nullptr, *seq_ = nullptr, *rows_ = nullptr, *seq_lens_ = nullptr;
  int32_t* lora_ = nullptr;
  int64_t* slots_ = nullptr;
};

}  // namespace vt
