// GPU kernel checks against vt::cpu and double references: every weight type's matmul (and
// its batch invariance), embedding rows, norms, RoPE, SwiGLU, paged KV writes (byte for
// byte), paged attention (both modes, bit-identical to each other), argmax, the advance, and
// the cuBLASLt bf16 GEMM.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "dev_buffer.h"
#include "vt/cpu/kernels.h"
#include "vt/cpu/ops.h"
#include "vt/cpu/ops_extra.h"
#include "vt/cuda/cublaslt_gemm.h"
#include "vt/cuda/kernels.h"

namespace {

using vllm::cuda_testing::Dev;
using vt::DType;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::vector<float> gaussian(size_t n, uint32_t seed, float sd = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, sd);
  std::vector<float> v(n);
  for (auto& x : v) x = nd(rng);
  return v;
}

struct HostWeight {
  DType t;
  int64_t rows, cols;
  std::vector<uint8_t> bytes;
  std::vector<float> deq;  // what the kernels must see
  HostWeight(DType type, int64_t r, int64_t c, uint32_t seed) : t(type), rows(r), cols(c) {
    const auto x = gaussian(r * c, seed, 0.5f);
    bytes.resize(vt::row_bytes(t, c) * r);
    deq.resize(r * c);
    for (int64_t i = 0; i < r; ++i) {
      uint8_t* row = bytes.data() + i * vt::row_bytes(t, c);
      vt::cpu::quantize_row(t, x.data() + i * c, row, c);
      vt::cpu::dequantize_row(t, row, deq.data() + i * c, c);
    }
  }
  vt::cpu::WeightView view() const {
    return {t, rows, cols, bytes.data(), vt::row_bytes(t, cols), false};
  }
};

vt::cuda::DevWeight upload(const HostWeight& w, Dev<uint8_t>& mem) {
  return {w.t, w.rows, w.cols, mem.get(), vt::row_bytes(w.t, w.cols)};
}

class CudaMatmul : public ::testing::TestWithParam<DType> {};

TEST_P(CudaMatmul, MatchesDoubleReferenceAndIsBatchInvariant) {
  const DType t = GetParam();
  const int64_t rows = 45, cols = 512, n_tok = 17;
  const HostWeight w(t, rows, cols, 1 + static_cast<uint32_t>(t));
  Dev<uint8_t> wmem(w.bytes);
  const auto x = gaussian(n_tok * cols, 99);
  Dev<float> dx(x), dy(n_tok * rows);
  vt::cuda::MatmulOut o{upload(w, wmem), dy.get(), rows, nullptr, false};
  vt::cuda::matmul(nullptr, &o, 1, dx.get(), cols, n_tok);
  const auto y = dy.host();
  for (int64_t tk = 0; tk < n_tok; ++tk)
    for (int64_t r = 0; r < rows; ++r) {
      double ref = 0, mag = 0;
      for (int64_t c = 0; c < cols; ++c) {
        ref += static_cast<double>(w.deq[r * cols + c]) * x[tk * cols + c];
        mag += std::fabs(static_cast<double>(w.deq[r * cols + c]) * x[tk * cols + c]);
      }
      ASSERT_NEAR(y[tk * rows + r], ref, 2e-6 * mag + 1e-30)
          << vt::dtype_name(t) << " token " << tk << " row " << r;
    }
  // Token 5 alone gives the bits it got among 17 tokens.
  std::vector<float> x5(x.begin() + 5 * cols, x.begin() + 6 * cols);
  Dev<float> dx5(x5), dy5(rows);
  vt::cuda::MatmulOut o5{upload(w, wmem), dy5.get(), rows, nullptr, false};
  vt::cuda::matmul(nullptr, &o5, 1, dx5.get(), cols, 1);
  const auto y5 = dy5.host();
  for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(bits(y5[r]), bits(y[5 * rows + r])) << "row " << r;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CudaMatmul,
                         ::testing::Values(DType::F32, DType::F16, DType::BF16, DType::Q8_0,
                                           DType::Q4_0, DType::Q4_1, DType::Q4_K, DType::Q6_K));

TEST(CudaMatmulMulti, MixedTypesBiasAndResidualAdd) {
  const int64_t cols = 256, n_tok = 9;
  const HostWeight a(DType::Q8_0, 30, cols, 5), b(DType::F16, 20, cols, 6);
  Dev<uint8_t> ma(a.bytes), mb(b.bytes);
  const auto x = gaussian(n_tok * cols, 7);
  const auto bias = gaussian(30, 8);
  const auto y0 = gaussian(n_tok * 20, 9);  // residual stream for b's output
  Dev<float> dx(x), dbias(bias), dya(n_tok * 30), dyb(y0);
  vt::cuda::MatmulOut outs[2] = {{upload(a, ma), dya.get(), 30, dbias.get(), false},
                                 {upload(b, mb), dyb.get(), 20, nullptr, true}};
  vt::cuda::matmul(nullptr, outs, 2, dx.get(), cols, n_tok);
  const auto ya = dya.host(), yb = dyb.host();
  for (int64_t tk = 0; tk < n_tok; ++tk) {
    for (int64_t r = 0; r < 30; ++r) {
      double ref = bias[r];
      for (int64_t c = 0; c < cols; ++c) ref += double(a.deq[r * cols + c]) * x[tk * cols + c];
      EXPECT_NEAR(ya[tk * 30 + r], ref, 1e-4);
    }
    for (int64_t r = 0; r < 20; ++r) {
      double ref = y0[tk * 20 + r];
      for (int64_t c = 0; c < cols; ++c) ref += double(b.deq[r * cols + c]) * x[tk * cols + c];
      EXPECT_NEAR(yb[tk * 20 + r], ref, 1e-4);
    }
  }
}

TEST(CudaGetRows, EqualsCpuForEveryType) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::Q8_0, DType::Q4_0, DType::Q4_1,
                  DType::Q4_K, DType::Q6_K}) {
    const HostWeight w(t, 50, 512, 11);
    Dev<uint8_t> mem(w.bytes);
    const std::vector<int32_t> ids = {3, 0, 49, 3, 17};
    Dev<int32_t> dids(ids);
    Dev<float> out(ids.size() * 512);
    vt::cuda::get_rows(nullptr, upload(w, mem), dids.get(), 5, out.get(), 512);
    std::vector<float> ref(ids.size() * 512);
    vt::cpu::get_rows(w.view(), ids.data(), 5, ref.data(), 512);
    const auto got = out.host();
    for (size_t i = 0; i < ref.size(); ++i)
      ASSERT_EQ(bits(got[i]), bits(ref[i])) << vt::dtype_name(t) << " " << i;
  }
}

TEST(CudaElementwise, NormsRopeAndSwigluMatchCpu) {
  const int64_t n = 6, E = 576, D = 64, nh = 9;
  const auto x = gaussian(n * E, 21), w = gaussian(E, 22);
  // RMSNorm, plain and gathered.
  Dev<float> dx(x), dw(w), dy(n * E);
  vt::cuda::rms_norm(nullptr, dx.get(), E, nullptr, dw.get(), n, E, 1e-5f, dy.get(), E);
  std::vector<float> ref(n * E);
  vt::cpu::rms_norm_isa(vt::cpu::Isa::kScalar, x.data(), E, w.data(), n, E, 1e-5f, ref.data(), E);
  auto y = dy.host();
  for (size_t i = 0; i < ref.size(); ++i)
    ASSERT_NEAR(y[i], ref[i], 1e-5f * (1 + std::fabs(ref[i])));
  const std::vector<int32_t> rows = {4, 1};
  Dev<int32_t> drows(rows);
  Dev<float> dg(2 * E);
  vt::cuda::rms_norm(nullptr, dx.get(), E, drows.get(), dw.get(), 2, E, 1e-5f, dg.get(), E);
  const auto g = dg.host();
  for (int i = 0; i < 2; ++i)
    for (int64_t c = 0; c < E; ++c) ASSERT_EQ(bits(g[i * E + c]), bits(y[rows[i] * E + c]));
  // RoPE, both layouts, q and k at once.
  std::vector<float> inv(D / 2);
  for (int i = 0; i < D / 2; ++i) inv[i] = std::pow(100000.0f, -2.0f * i / D);
  const std::vector<int32_t> pos = {0, 7, 300, 4095, 8191, 12};
  Dev<float> dinv(inv);
  Dev<int32_t> dpos(pos);
  for (bool neox : {true, false}) {
    const auto q = gaussian(n * nh * D, 23), k = gaussian(n * 3 * D, 24);
    Dev<float> dq(q), dk(k);
    vt::cuda::rope(nullptr, dq.get(), nh * D, static_cast<int>(nh), dk.get(), 3 * D, 3,
                   static_cast<int>(D), n, dpos.get(), dinv.get(), neox);
    auto rq = q, rk = k;
    const auto style = neox ? vt::cpu::RopeStyle::kNeox : vt::cpu::RopeStyle::kInterleaved;
    vt::cpu::rope_isa(vt::cpu::Isa::kScalar, rq.data(), nh * D, n, static_cast<int>(nh),
                      static_cast<int>(D), pos.data(), inv.data(), style);
    vt::cpu::rope_isa(vt::cpu::Isa::kScalar, rk.data(), 3 * D, n, 3, static_cast<int>(D),
                      pos.data(), inv.data(), style);
    const auto gq = dq.host(), gk = dk.host();
    // cos/sin of the device library differ from glibc's by an ulp or two.
    for (size_t i = 0; i < rq.size(); ++i)
      ASSERT_NEAR(gq[i], rq[i], 2e-6f * (1 + std::fabs(rq[i])));
    for (size_t i = 0; i < rk.size(); ++i)
      ASSERT_NEAR(gk[i], rk[i], 2e-6f * (1 + std::fabs(rk[i])));
  }
  // SwiGLU.
  const auto ga = gaussian(n * 1536, 25, 3.0f), up = gaussian(n * 1536, 26);
  Dev<float> dga(ga), dup(up), dact(n * 1536);
  vt::cuda::silu_mul(nullptr, dga.get(), dup.get(), n * 1536, dact.get());
  std::vector<float> act(n * 1536);
  vt::cpu::silu_mul_isa(vt::cpu::Isa::kScalar, ga.data(), 1536, up.data(), 1536, n, 1536,
                        act.data(), 1536);
  const auto gact = dact.host();
  for (size_t i = 0; i < act.size(); ++i)
    ASSERT_NEAR(gact[i], act[i], 1e-6f * (1 + std::fabs(act[i])));
}

struct CacheCase {
  vt::cuda::KvGeom g{16, 3, 64};
  int64_t blocks = 40;
  DType t;
  std::vector<uint8_t> k, v;
  explicit CacheCase(DType type) : t(type) {
    const size_t bytes = blocks * g.page() * vt::dtype_info(t).block_bytes;
    k.assign(bytes, 0);
    v.assign(bytes, 0);
  }
  vt::cpu::KvLayerView view() {
    return {k.data(), v.data(), g.block_size, g.n_kv_heads, g.head_dim, t};
  }
};

class CudaKv : public ::testing::TestWithParam<DType> {};

TEST_P(CudaKv, ReshapeAndCacheWritesTheCpuBytes) {
  CacheCase c(GetParam());
  const int64_t n = 50;
  std::vector<int64_t> slots;
  for (int64_t i = 0; i < n; ++i) slots.push_back((i * 37 + 5) % (c.blocks * c.g.block_size));
  slots[7] = -1;
  const auto k = gaussian(n * c.g.row(), 31), v = gaussian(n * c.g.row(), 32);
  vt::cpu::reshape_and_cache(k.data(), c.g.row(), v.data(), c.g.row(), n, slots.data(), c.view());
  Dev<uint8_t> dk(std::vector<uint8_t>(c.k.size(), 0)), dv(std::vector<uint8_t>(c.v.size(), 0));
  Dev<float> dkx(k), dvx(v);
  Dev<int64_t> ds(slots);
  vt::cuda::KvLayer kv{dk.get(), dv.get(), c.g, c.t};
  vt::cuda::reshape_and_cache(nullptr, dkx.get(), c.g.row(), dvx.get(), c.g.row(), n, ds.get(), kv);
  EXPECT_EQ(dk.host(), c.k);
  EXPECT_EQ(dv.host(), c.v);
}

TEST_P(CudaKv, PagedAttentionMatchesCpuAndBothModesAgreeBitForBit) {
  CacheCase c(GetParam());
  const int n_heads = 9, D = c.g.head_dim;
  const int64_t stride = 20, max_len = stride * c.g.block_size;  // 320 positions per sequence
  std::vector<int32_t> bt(2 * stride);
  for (int i = 0; i < 2 * stride; ++i) bt[i] = (i * 7 + 3) % 40;  // scattered, distinct
  for (int s = 0; s < 2; ++s)
    for (int32_t p = 0; p < max_len; ++p) {
      const auto k = gaussian(c.g.row(), 1000 + s * 1000 + p), v = gaussian(c.g.row(), 5000 + p);
      const int64_t slot = vt::cuda::slot_of(bt.data() + s * stride, p, c.g.block_size);
      vt::cpu::reshape_and_cache(k.data(), c.g.row(), v.data(), c.g.row(), 1, &slot, c.view());
    }
  std::vector<int32_t> pos = {0, 255, 256, 319, 100}, seq = {0, 1, 0, 1, 1};
  for (int32_t p = 250; p < 270; ++p) pos.push_back(p), seq.push_back(0);  // a prefill chunk
  const int64_t n = static_cast<int64_t>(pos.size()), ld = n_heads * D;
  const auto q = gaussian(n * ld, 41);
  const float scale = 1.0f / std::sqrt(float(D));
  vt::cpu::AttnBatch b{n, pos.data(), seq.data(), bt.data(), stride};
  std::vector<float> ref(n * ld);
  vt::cpu::paged_attention_isa(vt::cpu::Isa::kScalar, q.data(), ld, n_heads, c.view(), b, scale,
                               ref.data(), ld, vt::ThreadPool::global());

  Dev<uint8_t> dk(c.k), dv(c.v);
  Dev<float> dq(q), whole(n * ld), split(n * ld);
  Dev<int32_t> dpos(pos), dseq(seq), dbt(bt);
  const int max_seg = vt::cuda::attn_max_segments(max_len);
  Dev<float> parts(vt::cuda::attention_partials_floats(n, n_heads, D, max_seg));
  vt::cuda::KvLayer kv{dk.get(), dv.get(), c.g, c.t};
  vt::cuda::AttnArgs a{dq.get(),   ld,         n_heads,   whole.get(), ld,   n,
                       dpos.get(), dseq.get(), dbt.get(), stride,      scale};
  vt::cuda::paged_attention(nullptr, a, kv, nullptr, max_seg);
  a.out = split.get();
  vt::cuda::paged_attention(nullptr, a, kv, parts.get(), max_seg);
  const auto w = whole.host(), s = split.host();
  for (size_t i = 0; i < ref.size(); ++i) {
    ASSERT_EQ(bits(w[i]), bits(s[i])) << "whole vs split, element " << i;
    ASSERT_NEAR(w[i], ref[i], 3e-5f * (1 + std::fabs(ref[i]))) << "element " << i;
  }
  // Batch invariance: token 2 (position 256) alone gives the same bits.
  Dev<float> q2(std::vector<float>(q.begin() + 2 * ld, q.begin() + 3 * ld)), o2(ld);
  Dev<int32_t> p2(std::vector<int32_t>{pos[2]}), s2(std::vector<int32_t>{seq[2]});
  vt::cuda::AttnArgs a2{q2.get(), ld,       n_heads,   o2.get(), ld,   1,
                        p2.get(), s2.get(), dbt.get(), stride,   scale};
  vt::cuda::paged_attention(nullptr, a2, kv, parts.get(), max_seg);
  const auto g2 = o2.host();
  for (int64_t i = 0; i < ld; ++i) ASSERT_EQ(bits(g2[i]), bits(w[2 * ld + i]));
}

INSTANTIATE_TEST_SUITE_P(KvTypes, CudaKv, ::testing::Values(DType::F32, DType::F16, DType::BF16));

TEST(CudaDecodeOps, ArgmaxAndAdvance) {
  const int64_t rows = 40, V = 49152;
  std::mt19937 rng(3);
  std::vector<float> x(rows * V);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t i = 0; i < V; ++i) {
      float v = static_cast<float>(static_cast<int>(rng() % 1000)) / 100.0f;
      if (r % 4 == 1 && rng() % 7 == 0) v = NAN;
      if (r % 4 == 2) v = 1.0f;  // all tied: index 0
      if (r == 3) v = NAN;       // all NaN: index 0
      x[r * V + i] = v;
    }
  Dev<float> dx(x);
  Dev<int32_t> ids(rows);
  vt::cuda::argmax_rows(nullptr, dx.get(), rows, V, V, ids.get());
  const auto got = ids.host();
  for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(got[r], vt::cpu::argmax(x.data() + r * V, V)) << r;

  const int32_t P = 5, W = 4, bs = 16;
  std::vector<int32_t> pos = {15, 31, 0, 47, 0}, lens = {16, 32, 1, 48, 0}, bt((P + 1) * W);
  for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int32_t>(i * 3 + 1);
  std::vector<int64_t> slots(P, -1);
  Dev<int32_t> dp(pos), dl(lens), dbt(bt);
  Dev<int64_t> dsl(slots);
  vt::cuda::decode_advance(nullptr, P, dp.get(), dl.get(), dsl.get(), dbt.get(), W, bs);
  for (int i = 0; i < P; ++i)
    vt::cuda::advance_row(i, pos.data(), lens.data(), slots.data(), bt.data(), W, bs);
  EXPECT_EQ(dp.host(), pos);
  EXPECT_EQ(dl.host(), lens);
  EXPECT_EQ(dsl.host(), slots);
}

TEST(CudaCublasLt, Bf16GemmAgreesWithTheDecodingKernel) {
  const int64_t rows = 256, cols = 512, n_tok = 64;
  const HostWeight w(DType::BF16, rows, cols, 51);
  Dev<uint8_t> mem(w.bytes);
  const auto x = gaussian(n_tok * cols, 52), bias = gaussian(rows, 53);
  Dev<float> dx(x), dbias(bias), own(n_tok * rows), lt(n_tok * rows);
  Dev<uint16_t> xb(n_tok * cols);
  vt::cuda::MatmulOut o{upload(w, mem), own.get(), rows, dbias.get(), false};
  vt::cuda::matmul(nullptr, &o, 1, dx.get(), cols, n_tok);
  vt::cuda::to_bf16(nullptr, dx.get(), xb.get(), n_tok * cols);
  vt::cuda::CublasLtGemm gemm;
  gemm.gemm(nullptr, static_cast<const uint16_t*>(static_cast<const void*>(mem.get())), rows, cols,
            xb.get(), n_tok, lt.get(), rows, dbias.get(), false);
  const auto a = own.host(), b = lt.host();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(double(a[i]) - b[i]));
  EXPECT_LT(worst, 0.1) << "bf16 activations differ from fp32 ones by ~2^-9 relative";
  EXPECT_GT(worst, 0.0) << "cuBLASLt rounds activations to bf16: some difference is expected";
}

}  // namespace
