// The host-only halves of the CUDA backend: graph/buffer bookkeeping (GraphRegistry, the
// retire-until-unreferenced rule of the CPU backend), what a host_write uploads, and the
// start-up and weight-type checks with their messages.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "vt/cuda/device_checks.h"
#include "vt/cuda/graph_registry.h"
#include "vt/cuda/host_write_diff.h"

namespace {

using vt::cuda::GraphRegistry;

struct Pool {
  std::vector<std::unique_ptr<vt::DeviceBuffer>> owned;
  GraphRegistry reg;
  vt::DeviceBuffer* alloc() {
    owned.push_back(std::make_unique<vt::DeviceBuffer>());
    owned.back()->id = owned.size();
    reg.track(owned.back().get());
    return owned.back().get();
  }
};

bool contains(const std::vector<vt::DeviceBuffer*>& v, const vt::DeviceBuffer* b) {
  return std::find(v.begin(), v.end(), b) != v.end();
}

TEST(CudaGraphRegistry, RetiredBufferIsReleasedWhenItsLastGraphGoes) {
  Pool p;
  vt::DeviceBuffer *a = p.alloc(), *b = p.alloc();
  const vt::GraphId g1 = p.reg.add_graph({a, b});
  const vt::GraphId g2 = p.reg.add_graph({a});
  EXPECT_TRUE(p.reg.retire(a).empty());  // two graphs hold it
  EXPECT_TRUE(a->live);
  EXPECT_EQ(p.reg.retired_buffers(), 1);
  EXPECT_NO_THROW(p.reg.check_bound(g1, "replay"));
  auto r1 = p.reg.remove_graph(g1);
  EXPECT_TRUE(r1.release.empty());  // g2 still holds it
  EXPECT_FALSE(r1.dangling);
  auto r2 = p.reg.remove_graph(g2);
  ASSERT_EQ(r2.release.size(), 1u);
  EXPECT_EQ(r2.release[0], a);
  EXPECT_FALSE(a->live);
  EXPECT_TRUE(b->live);
  EXPECT_EQ(p.reg.retired_buffers(), 0);
  EXPECT_EQ(p.reg.live_buffers(), 1);
}

TEST(CudaGraphRegistry, UnboundBufferIsReleasedAtRetire) {
  Pool p;
  vt::DeviceBuffer* a = p.alloc();
  p.reg.add_graph({p.alloc()});
  const auto rel = p.reg.retire(a);
  EXPECT_TRUE(contains(rel, a));
  EXPECT_FALSE(a->live);
}

TEST(CudaGraphRegistry, FreeingABoundBufferIsRefusedAtReplayAndReportedAtDestroy) {
  Pool p;
  vt::DeviceBuffer* a = p.alloc();
  const vt::GraphId g = p.reg.add_graph({a});
  p.reg.mark_freed(a);
  EXPECT_EQ(p.reg.live_buffers(), 0);
  EXPECT_THROW(p.reg.check_bound(g, "replay"), std::logic_error);
  const auto r = p.reg.remove_graph(g);
  EXPECT_TRUE(r.dangling);
  EXPECT_FALSE(p.reg.has_graph(g));  // forgotten even though the invariant broke
  EXPECT_THROW(p.reg.check_bound(g, "replay"), std::logic_error);
}

TEST(CudaGraphRegistry, RecaptureAfterWidthChangeKeepsOldTableUntilOldGraphDies) {
  // The decode driver's pattern: graph g0 bound to table t0; the width grows, t1 replaces
  // t0 (retired), g1 is captured on t1; t0 must outlive g0 and go when g0 is destroyed.
  Pool p;
  vt::DeviceBuffer *state = p.alloc(), *t0 = p.alloc();
  const vt::GraphId g0 = p.reg.add_graph({state, t0});
  vt::DeviceBuffer* t1 = p.alloc();
  EXPECT_TRUE(p.reg.retire(t0).empty());
  const vt::GraphId g1 = p.reg.add_graph({state, t1});
  EXPECT_NO_THROW(p.reg.check_bound(g0, "replay"));
  const auto r = p.reg.remove_graph(g0);
  EXPECT_TRUE(contains(r.release, t0));
  EXPECT_NO_THROW(p.reg.check_bound(g1, "replay"));
  EXPECT_TRUE(state->live && t1->live);
}

// Pass-through capture (what CudaBackend::begin_capture sets): ops run at once while the
// Exec reports capturing, and end_capture restores the plain eager mode.
TEST(CudaExecPassThrough, RunsOpsAtOnceWhileCapturing) {
  vt::Exec ex;
  ex.begin_stream_capture();
  EXPECT_TRUE(ex.capturing());
  EXPECT_TRUE(ex.passes_through());
  int ran = 0;
  ex.op([&] { ++ran; });
  EXPECT_EQ(ran, 1);
  ex.end_capture();
  EXPECT_FALSE(ex.capturing());
  EXPECT_FALSE(ex.passes_through());
  // The CPU's recording mode is unchanged: ops are kept, not run.
  vt::StepGraph g;
  ex.begin_capture(&g);
  ex.op([&] { ++ran; });
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(g.size(), 1u);
  EXPECT_FALSE(ex.passes_through());
  ex.end_capture();
  g.replay();
  EXPECT_EQ(ran, 2);
}

TEST(CudaHostWrite, UploadsExactlyTheChangedBytes) {
  std::vector<uint8_t> a(64, 7), b = a;
  EXPECT_TRUE(vt::cuda::changed_range(a.data(), b.data(), a.size()).empty());
  b[10] = 1;
  b[20] = 2;
  auto r = vt::cuda::changed_range(a.data(), b.data(), a.size());
  EXPECT_EQ(r.begin, 10u);
  EXPECT_EQ(r.end, 21u);
  b[0] = 0;
  b[63] = 0;
  r = vt::cuda::changed_range(a.data(), b.data(), a.size());
  EXPECT_EQ(r.begin, 0u);
  EXPECT_EQ(r.end, 64u);
}

TEST(CudaDeviceChecks, NamesTheProblem) {
  vt::cuda::DeviceFacts f;
  EXPECT_NE(vt::cuda::device_problem(f).find("no CUDA device"), std::string::npos);
  f.runtime_error = "CUDA driver version is insufficient";
  EXPECT_NE(vt::cuda::device_problem(f).find("insufficient"), std::string::npos);
  f.runtime_error.clear();
  f.device_count = 2;
  f.ordinal = 2;
  EXPECT_NE(vt::cuda::device_problem(f).find("0..1"), std::string::npos);
  f.ordinal = 1;
  f.name = "NVIDIA A100";
  f.cc_major = 8;
  f.cc_minor = 0;
  const std::string old = vt::cuda::device_problem(f);
  EXPECT_NE(old.find("8.0"), std::string::npos) << old;
  EXPECT_NE(old.find("9.0"), std::string::npos) << old;
  EXPECT_NE(old.find("A100"), std::string::npos) << old;
  f.cc_major = 9;
  EXPECT_EQ(vt::cuda::device_problem(f), "");
  f.cc_major = 12;
  EXPECT_EQ(vt::cuda::device_problem(f), "");

  const size_t G = size_t{1} << 30;
  EXPECT_EQ(vt::cuda::weights_memory_problem("m", 10 * G, 20 * G, G), "");
  const std::string w = vt::cuda::weights_memory_problem("model.gguf", 30 * G, 20 * G, G);
  EXPECT_NE(w.find("model.gguf"), std::string::npos);
  EXPECT_NE(w.find("30.00 GiB"), std::string::npos) << w;
  EXPECT_EQ(vt::cuda::kv_memory_problem(100, 1 << 20, 20 * G, G), "");
  const std::string kv = vt::cuda::kv_memory_problem(100000, 1 << 20, 20 * G, G);
  EXPECT_NE(kv.find("at most 19456 blocks"), std::string::npos) << kv;
  EXPECT_NE(kv.find("--kv-cache-memory"), std::string::npos);
}

TEST(CudaDeviceChecks, WeightTypesAndShapes) {
  using vt::DType;
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                  DType::Q4_K, DType::Q6_K})
    EXPECT_EQ(vt::cuda::weight_problem("w", t, 8, 512), "") << vt::dtype_name(t);
  const std::string e =
      vt::cuda::weight_problem("model.layers.0.mlp.up_proj.weight", DType::Q8_K, 8, 512);
  EXPECT_NE(e.find("model.layers.0.mlp.up_proj.weight"), std::string::npos);
  EXPECT_NE(e.find(std::string(vt::dtype_name(DType::Q8_K))), std::string::npos);
  // MXFP4 (GPT-OSS's experts) runs on the CPU only: refused by name, naming the tensor.
  const std::string mx =
      vt::cuda::weight_problem("blk.0.ffn_up_exps.weight", DType::MXFP4, 8, 2880);
  EXPECT_NE(mx.find("blk.0.ffn_up_exps.weight"), std::string::npos) << mx;
  EXPECT_NE(mx.find("mxfp4"), std::string::npos) << mx;
  EXPECT_NE(vt::cuda::weight_problem("w", DType::Q4_K, 8, 288).find("256"), std::string::npos);
  EXPECT_NE(vt::cuda::weight_problem("w", DType::F32, 8, 100).find("32"), std::string::npos);
}

}  // namespace
