// CudaBackend on a GPU: capture records without running, replay runs, retired buffers
// outlive their graphs, a freed bound buffer is refused, host_write uploads only what changed,
// and no host-to-device copy can enter a graph.
#include <gtest/gtest.h>

#include <cstring>

#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/kernels.h"

namespace {

using vt::cuda::CudaBackend;

// A state buffer holding one decode row: pos, seq_len, slot, and a 2-entry block table.
struct Row {
  int32_t pos, seq_len;
  int64_t slot;
  int32_t bt[2];
};

void advance(CudaBackend& be, vt::DeviceBuffer* b) {
  auto* r = static_cast<Row*>(b->data);
  auto dev = [&](void* p) { return be.device_address(p); };
  vt::cuda::decode_advance(
      be.stream(), 1, static_cast<int32_t*>(dev(&r->pos)), static_cast<int32_t*>(dev(&r->seq_len)),
      static_cast<int64_t*>(dev(&r->slot)), static_cast<const int32_t*>(dev(r->bt)), 2, 4);
}

TEST(CudaBackendGpu, CaptureRecordsAndReplayRuns) {
  CudaBackend be;
  vt::DeviceBuffer* b = be.alloc(sizeof(Row));
  auto* r = static_cast<Row*>(b->data);
  be.host_write(b, [r] { *r = Row{1, 2, 0, {10, 20}}; });
  vt::Exec ex;
  const vt::GraphId g = be.begin_capture(ex, {b});
  EXPECT_TRUE(ex.capturing());
  EXPECT_TRUE(ex.passes_through());
  int ran = 0;
  ex.op([&] { ++ran; });  // pass-through: runs now; its launches are what gets recorded
  advance(be, b);
  be.end_capture(ex, g);
  EXPECT_EQ(ran, 1);
  be.download_buffer(b);
  EXPECT_EQ(r->pos, 1);  // captured, not run
  be.replay(g);
  be.replay(g);
  be.download_buffer(b);
  EXPECT_EQ(r->pos, 3);
  EXPECT_EQ(r->seq_len, 4);
  EXPECT_EQ(r->slot, 10 * 4 + 3);  // position 3: block_table[3 / 4] * 4 + 3 % 4
  be.destroy(g);
}

TEST(CudaBackendGpu, HostWriteUploadsOnlyWhatChanged) {
  CudaBackend be;
  vt::DeviceBuffer* b = be.alloc(sizeof(Row));
  auto* r = static_cast<Row*>(b->data);
  const auto before = be.transfer_stats().h2d_copies;
  be.host_write(b, [] {});
  EXPECT_EQ(be.transfer_stats().h2d_copies, before);
  be.host_write(b, [r] { r->pos = 7; });
  EXPECT_EQ(be.transfer_stats().h2d_copies, before + 1);
  EXPECT_EQ(be.transfer_stats().h2d_bytes, static_cast<int64_t>(sizeof(int32_t)));
  be.host_write(b, [r] { r->seq_len = 8; });
  // The device advances the row; a later host write of another field must not undo it.
  advance(be, b);
  be.host_write(b, [r] { r->bt[0] = 5; });
  be.download_buffer(b);
  EXPECT_EQ(r->pos, 8);
  EXPECT_EQ(r->seq_len, 9);
  EXPECT_EQ(r->bt[0], 5);
}

TEST(CudaBackendGpu, RetiredBufferLivesUntilItsGraphIsDestroyed) {
  CudaBackend be;
  vt::DeviceBuffer* b = be.alloc(sizeof(Row));
  vt::Exec ex;
  const vt::GraphId g = be.begin_capture(ex, {b});
  advance(be, b);
  be.end_capture(ex, g);
  const void* host = b->data;
  be.retire(b);
  EXPECT_TRUE(b->live);
  EXPECT_NE(be.device_address(host), nullptr);
  EXPECT_EQ(be.stats().retired_buffers, 1);
  be.replay(g);
  be.synchronize();
  be.destroy(g);
  EXPECT_FALSE(b->live);
  EXPECT_EQ(be.device_address(host), nullptr);
  EXPECT_EQ(be.stats().retired_buffers, 0);
}

TEST(CudaBackendGpu, FreeingABoundBufferIsRefused) {
  CudaBackend be;
  vt::DeviceBuffer* b = be.alloc(sizeof(Row));
  vt::Exec ex;
  const vt::GraphId g = be.begin_capture(ex, {b});
  advance(be, b);
  be.end_capture(ex, g);
  be.free(b);
  EXPECT_THROW(be.replay(g), std::logic_error);
  EXPECT_THROW(be.destroy(g), std::logic_error);
}

TEST(CudaBackendGpu, NoCopyCanEnterAGraph) {
  CudaBackend be;
  vt::DeviceBuffer* b = be.alloc(sizeof(Row));
  vt::Exec ex;
  be.begin_capture(ex, {b});
  int x = 1;
  EXPECT_THROW(be.upload(be.device_ptr(b), &x, sizeof x), std::logic_error);
  EXPECT_THROW(be.host_write(b, [] {}), std::logic_error);
  EXPECT_THROW(be.alloc(16), std::logic_error);
  be.abort_capture(ex);
  EXPECT_FALSE(ex.capturing());
  EXPECT_FALSE(be.capturing());
  be.upload(be.device_ptr(b), &x, sizeof x);  // fine again
  be.synchronize();
}

TEST(CudaBackendGpu, StrictModeCountsCopiesBeforeReplays) {
  CudaBackend be;
  be.set_strict(true);
  vt::DeviceBuffer* b = be.alloc(sizeof(Row));
  auto* r = static_cast<Row*>(b->data);
  be.host_write(b, [r] { *r = Row{0, 1, 0, {3, 4}}; });
  vt::Exec ex;
  const vt::GraphId g = be.begin_capture(ex, {b});
  advance(be, b);
  be.end_capture(ex, g);
  be.replay(g);  // after the seed: not steady
  for (int i = 0; i < 5; ++i) be.replay(g);
  const auto t = be.transfer_stats();
  EXPECT_EQ(t.replays_after_h2d, 1);
  EXPECT_EQ(t.steady_replays, 5);
  EXPECT_EQ(t.strict_h2d_before_replays, 1);
  be.destroy(g);
}

}  // namespace
