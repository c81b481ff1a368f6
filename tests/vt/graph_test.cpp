// CPU backend: capture records without running, replay runs, strict mode faults on stray
// host writes, retired buffers outlive the graphs bound to them.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <vector>

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

// Storage (weights, KV pages, scratch) is accounted by kind, stays writable in strict mode
// (graphs write the KV cache and scratch on every replay), is committed lazily, and an adopted
// range is only forgotten on free, never unmapped.
TEST(CpuBackendStorage, KindsStrictModeResidencyAndAdoption) {
  auto be = vt::make_cpu_backend();
  const long page = ::sysconf(_SC_PAGESIZE);
  vt::DeviceBuffer* kv = be->alloc_storage(16 * page, vt::StorageKind::KvCache, "test KV");
  vt::DeviceBuffer* w = be->alloc_storage(3 << 20, vt::StorageKind::Weights, "test weights");
  EXPECT_EQ(reinterpret_cast<uintptr_t>(w->data) % (2 << 20), 0u);  // huge-page aligned
  std::vector<float> host(1000, 2.0f);
  vt::DeviceBuffer* adopted = be->adopt_storage(host.data(), host.size() * sizeof(float),
                                                vt::StorageKind::Weights, "host vector");
  EXPECT_EQ(adopted->data, host.data());
  auto s = be->stats();
  EXPECT_EQ(s.storage_buffers, 3);
  EXPECT_EQ(s.storage_bytes[static_cast<int>(vt::StorageKind::KvCache)], 16 * page);
  EXPECT_EQ(s.storage_bytes[static_cast<int>(vt::StorageKind::Weights)],
            (3 << 20) + static_cast<int64_t>(host.size() * sizeof(float)));
  EXPECT_EQ(s.live_buffers, 0);  // not graph state

  EXPECT_EQ(be->resident_bytes(kv), 0);  // lazily committed
  be->set_strict(true);
  static_cast<char*>(kv->data)[3 * page] = 1;  // strict mode does not protect storage
  EXPECT_EQ(be->resident_bytes(kv), page);
  be->set_strict(false);

  be->free_storage(adopted);
  EXPECT_EQ(host[999], 2.0f);  // the caller's memory is untouched
  be->free_storage(kv);
  be->free_storage(w);
  s = be->stats();
  EXPECT_EQ(s.storage_buffers, 0);
  for (int k = 0; k < vt::kStorageKinds; ++k) EXPECT_EQ(s.storage_bytes[k], 0);
}
