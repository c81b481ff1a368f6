// The backend's DecodeState (vt/decode_state.h) on the CPU backend: seeding, block patches,
// the recorded argmax + advance tail, token fix-ups and read-back, checked against values
// computed here from the paged-KV slot formula (DESIGN.md: slot = table[pos / bs] * bs +
// pos % bs) and a plain argmax.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "vt/decode_state.h"
#include "vt/graph.h"

namespace {

constexpr int kBs = 4, kVocab = 5;

int64_t slot(const std::vector<int32_t>& blocks, int32_t pos) {
  return static_cast<int64_t>(blocks[pos / kBs]) * kBs + pos % kBs;
}

TEST(DecodeState, SeedArgmaxAdvanceAndReadBack) {
  auto be = vt::make_cpu_backend();
  be->set_strict(true);  // every write below must go through the state
  auto st = be->make_decode_state(4, kVocab, kBs);
  ASSERT_EQ(st->padded(), 4);
  EXPECT_FALSE(st->set_width(2));
  const std::vector<int32_t> b0 = {7, 3}, b1 = {9};
  st->seed({{11, 6, b0.data(), 2}, {12, 2, b1.data(), 1}});
  const vt::DecodeInputs in = st->inputs();
  EXPECT_EQ(in.bt_stride, 2);
  EXPECT_EQ(in.slot_mapping[0], slot(b0, 6));
  EXPECT_EQ(in.slot_mapping[1], slot(b1, 2));
  EXPECT_EQ(in.slot_mapping[2], -1) << "padding row";
  EXPECT_EQ(st->read_token_ids(2)[1], 12);

  // One step: logits written as the forward would, then the recorded tail.
  const float rows[4][kVocab] = {
      {0, 1, 5, 5, 2}, {9, 0, 0, 0, 0}, {0, 0, 0, 0, 1}, {0, 0, 0, 0, 0}};
  vt::StepGraph g;
  vt::Exec ex;
  ex.begin_capture(&g);
  st->record_argmax_advance(ex);
  ex.end_capture();
  st->run_eager([&] {
    std::copy(&rows[0][0], &rows[0][0] + 4 * kVocab, in.logits);
    g.replay();
  });
  const int32_t* ids = st->read_token_ids(4);
  EXPECT_EQ(ids[0], 2) << "ties go to the lowest index";
  EXPECT_EQ(ids[1], 0);
  const int32_t* pos = st->read_positions(4);
  EXPECT_EQ(pos[0], 7);
  EXPECT_EQ(pos[1], 3);
  EXPECT_EQ(pos[2], 0) << "padding rows do not advance";
  EXPECT_EQ(in.slot_mapping[0], slot(b0, 7));
  EXPECT_EQ(in.slot_mapping[1], slot(b1, 3));
  EXPECT_EQ(st->read_logits(1)[2], 5.0f);

  // Row 1 crosses into a block it did not have: patched, slot recomputed.
  const std::vector<int32_t> b1b = {9, 4};
  st->run_eager([&] { g.replay(); });  // positions 8 and 4
  st->patch_blocks(1, 1, b1b.data() + 1, 1, 4);
  EXPECT_EQ(in.slot_mapping[1], slot(b1b, 4));
  st->set_token(0, 3);
  EXPECT_EQ(st->read_token_ids(1)[0], 3);

  // A wider table replaces the old one (retired: a graph may still hold it).
  EXPECT_TRUE(st->set_width(4));
  EXPECT_EQ(st->width(), 4);
}

}  // namespace
