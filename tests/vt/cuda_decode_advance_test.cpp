// The CUDA decode-state advance (index_math.h advance_row, run by the advance kernel as a
// captured graph's last op) against the CPU decode graph driver: the driver replays its own
// captured advance on the CPU backend while a recording executor notes the positions, slots
// and block table every forward sees; advance_row applied to step k's state must give
// step k + 1's exactly, across block boundaries and with a padding row.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/model_executor.h"
#include "engine/runner/decode_graph.h"
#include "vt/cuda/index_math.h"

namespace {

struct Seen {
  std::vector<int32_t> pos;
  std::vector<int64_t> slots;
  std::vector<int32_t> bt;
  int64_t stride = 0;
};

class RecordingExecutor : public vllm::engine::ModelExecutor {
 public:
  int32_t vocab_size() const override { return 8; }
  int32_t max_model_len() const override { return 1024; }
  void init_kv_cache(int64_t, int, vt::DType) override {}
  int64_t kv_bytes_per_block(int, vt::DType) const override { return 1; }
  bool supports_graphs() const override { return true; }
  void execute(const vllm::model::ForwardBatch& b, float* logits) override {
    execute(b, logits, vt::Exec::eager());
  }
  void execute(const vllm::model::ForwardBatch& b, float* logits, vt::Exec& ex) override {
    std::vector<Seen>* seen = &seen_;
    ex.op([b, logits, seen] {
      Seen s;
      s.pos.assign(b.positions, b.positions + b.n_tok);
      s.slots.assign(b.slot_mapping, b.slot_mapping + b.n_tok);
      s.bt.assign(b.block_tables, b.block_tables + b.n_seqs * b.bt_stride);
      s.stride = b.bt_stride;
      seen->push_back(std::move(s));
      // Greedy token 0 for every row: the driver's in-graph argmax agrees with the host.
      for (int64_t r = 0; r < b.n_logits; ++r)
        for (int v = 0; v < 8; ++v) logits[r * 8 + v] = v == 0 ? 1.0f : 0.0f;
    });
  }
  std::vector<Seen> seen_;
};

TEST(CudaDecodeAdvance, MatchesTheCpuDriversCapturedAdvance) {
  const int bs = 4;
  const std::vector<int32_t> start = {5, 9, 2};  // 3 requests: padded to 4 rows
  const int steps = 30;
  std::mt19937 rng(1);
  std::vector<int32_t> pages(256);
  for (int i = 0; i < 256; ++i) pages[i] = i;
  std::shuffle(pages.begin(), pages.end(), rng);
  // Every request holds the blocks for all its steps from the start, so the slots of every
  // replay come from the in-graph advance alone (no host block writes).
  std::vector<std::vector<int32_t>> blocks(start.size());
  size_t next = 0;
  for (size_t i = 0; i < start.size(); ++i)
    for (int b = 0; b <= (start[i] + steps) / bs; ++b) blocks[i].push_back(pages[next++]);
  const std::vector<std::string> ids = {"a", "b", "c"};

  RecordingExecutor ex;
  auto backend = vt::make_cpu_backend();
  vllm::engine::DecodeGraphDriver driver(ex, *backend, {}, bs, 4, 64, 16);
  for (int k = 0; k < steps; ++k) {
    std::vector<vllm::engine::DecodeRow> rows(start.size());
    for (size_t i = 0; i < start.size(); ++i) {
      rows[i].request_id = &ids[i];
      rows[i].token = 0;
      rows[i].position = start[i] + k;
      rows[i].blocks = blocks[i].data();
      rows[i].num_blocks = static_cast<int32_t>(blocks[i].size());
    }
    driver.step(rows);
  }
  ASSERT_EQ(ex.seen_.size(), static_cast<size_t>(steps));  // warm-up + replays ran a forward
  EXPECT_GT(driver.stats().steady_replays, steps - 4);

  const int P = 4;
  for (int k = 0; k < steps; ++k) {
    const Seen& s = ex.seen_[k];
    ASSERT_EQ(s.pos.size(), static_cast<size_t>(P));
    for (size_t i = 0; i < start.size(); ++i) {
      ASSERT_EQ(s.pos[i], start[i] + k);
      ASSERT_EQ(s.slots[i], vt::cuda::slot_of(s.bt.data() + i * s.stride, s.pos[i], bs));
    }
    EXPECT_EQ(s.slots[3], -1) << "padding row";
    if (k == 0) continue;
    // advance_row over the previous step's state.
    const Seen& prev = ex.seen_[k - 1];
    ASSERT_EQ(prev.stride, s.stride);
    std::vector<int32_t> pos = prev.pos, seq_lens(P);
    std::vector<int64_t> slots = prev.slots;
    for (int i = 0; i < P; ++i) seq_lens[i] = prev.slots[i] < 0 ? 0 : prev.pos[i] + 1;
    for (int i = 0; i < P; ++i)
      vt::cuda::advance_row(i, pos.data(), seq_lens.data(), slots.data(), prev.bt.data(),
                            static_cast<int32_t>(prev.stride), bs);
    EXPECT_EQ(pos, s.pos) << "step " << k;
    EXPECT_EQ(slots, s.slots) << "step " << k;
  }
}

}  // namespace
