// CPU backend: capture records without running, replay runs, strict mode faults on stray
// host writes, retired buffers outlive the graphs bound to them.
#include <gtest/gtest.h>

#include "vt/graph.h"

namespace {

TEST(CpuBackend, CaptureRecordsAndReplayRuns) {
  auto be = vt::make_cpu_backend();
  vt::DeviceBuffer* b = be->alloc(sizeof(int));
  int* x = static_cast<int*>(b->data);
  *x = 1;
  vt::Exec ex;
  vt::GraphId g = be->begin_capture(ex, {b});
  ex.op([x] { *x = *x * 2 + 1; });
  be->end_capture(ex, g);
  EXPECT_EQ(*x, 1);  // captured, not run
  be->replay(g);
  be->replay(g);
  EXPECT_EQ(*x, 7);
  be->destroy(g);
}

TEST(CpuBackend, StrictModeFaultsOnStrayHostWrites) {
  auto be = vt::make_cpu_backend();
  be->set_strict(true);
  vt::DeviceBuffer* b = be->alloc(sizeof(int));
  int* x = static_cast<int*>(b->data);
  be->host_write(b, [x] { *x = 5; });  // sanctioned
  EXPECT_EQ(*x, 5);                    // reads are fine
  EXPECT_DEATH(*x = 6, "");            // a stray write faults
}

TEST(CpuBackend, RetiredBufferLivesUntilItsGraphIsDestroyed) {
  auto be = vt::make_cpu_backend();
  vt::DeviceBuffer* b = be->alloc(64);
  vt::Exec ex;
  vt::GraphId g = be->begin_capture(ex, {b});
  be->end_capture(ex, g);
  be->retire(b);
  EXPECT_TRUE(b->live);
  EXPECT_EQ(be->stats().retired_buffers, 1);
  be->replay(g);  // still valid
  be->destroy(g);
  EXPECT_FALSE(b->live);
  EXPECT_EQ(be->stats().retired_buffers, 0);
}

TEST(CpuBackend, FreeingABoundBufferIsRefusedAtReplay) {
  auto be = vt::make_cpu_backend();
  vt::DeviceBuffer* b = be->alloc(64);
  vt::Exec ex;
  vt::GraphId g = be->begin_capture(ex, {b});
  be->end_capture(ex, g);
  be->free(b);
  EXPECT_THROW(be->replay(g), std::logic_error);
}

}  // namespace
