// The CUDA kernels' index math (src/vt/cuda/index_math.h), run on the host against the CPU
// backend: KV page offsets against vt::cpu::reshape_and_cache's layouts, attention segments,
// merge and causal bounds against vt::cpu::paged_attention, RoPE against the scalar CPU
// kernel bit for bit, and the argmax order against vt::cpu::argmax.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "vt/cpu/kernels.h"
#include "vt/cpu/ops.h"
#include "vt/cpu/ops_extra.h"
#include "vt/cuda/block_decode.h"
#include "vt/cuda/index_math.h"

namespace {

using vt::cuda::KvGeom;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

struct Cache {
  KvGeom g;
  int64_t num_blocks;
  vt::DType dtype;
  std::vector<uint8_t> k, v;
  Cache(KvGeom geom, int64_t blocks, vt::DType t) : g(geom), num_blocks(blocks), dtype(t) {
    const size_t bytes = static_cast<size_t>(blocks * g.page()) * vt::dtype_info(t).block_bytes;
    k.assign(bytes, 0);
    v.assign(bytes, 0);
  }
  vt::cpu::KvLayerView view() {
    vt::cpu::KvLayerView c;
    c.k = k.data();
    c.v = v.data();
    c.block_size = g.block_size;
    c.n_kv_heads = g.n_kv_heads;
    c.head_dim = g.head_dim;
    c.dtype = dtype;
    return c;
  }
  float read(const std::vector<uint8_t>& buf, int64_t off) const {
    if (dtype == vt::DType::F32) {
      float f;
      std::memcpy(&f, buf.data() + off * 4, 4);
      return f;
    }
    uint16_t h;
    std::memcpy(&h, buf.data() + off * 2, 2);
    return dtype == vt::DType::F16 ? vt::cuda::fp16_to_fp32(h) : vt::cuda::bf16_to_fp32(h);
  }
  // What the CUDA reshape_and_cache kernel stores for value x.
  float stored(float x) const {
    if (dtype == vt::DType::F16) return vt::cuda::fp16_to_fp32(vt::cuda::fp32_to_fp16(x));
    if (dtype == vt::DType::BF16) return vt::cuda::bf16_to_fp32(vt::cuda::fp32_to_bf16(x));
    return x;
  }
};

class CudaKvLayout : public ::testing::TestWithParam<std::tuple<int, vt::DType>> {};

// The kernel writes K[h][d] of a token to k_offset(slot, h, d) and V to v_offset(...),
// converted with the block_decode.h narrowing; the CPU kernel must have written the same
// value to the same place, whatever the block size and dtype.
TEST_P(CudaKvLayout, OffsetsAndConversionsMatchCpuReshapeAndCache) {
  const auto [bs, dtype] = GetParam();
  const KvGeom g{bs, 3, 32};
  const int64_t n = 40, blocks = (n + bs - 1) / bs + 3;  // room for n distinct slots
  Cache c(g, blocks, dtype);
  std::mt19937 rng(bs);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<int64_t> slots(blocks * bs);
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = static_cast<int64_t>(i);
  std::shuffle(slots.begin(), slots.end(), rng);
  slots.resize(n);
  slots[5] = -1;  // padding: skipped
  std::vector<float> k(n * g.row()), v(n * g.row());
  for (auto& x : k) x = nd(rng);
  for (auto& x : v) x = nd(rng);
  vt::cpu::reshape_and_cache(k.data(), g.row(), v.data(), g.row(), n, slots.data(), c.view());
  for (int64_t t = 0; t < n; ++t) {
    if (slots[t] < 0) continue;
    for (int h = 0; h < g.n_kv_heads; ++h)
      for (int d = 0; d < g.head_dim; ++d) {
        const int64_t i = t * g.row() + h * g.head_dim + d;
        ASSERT_EQ(bits(c.read(c.k, vt::cuda::k_offset(g, slots[t], h, d))), bits(c.stored(k[i])))
            << "K token " << t << " head " << h << " dim " << d;
        ASSERT_EQ(bits(c.read(c.v, vt::cuda::v_offset(g, slots[t], h, d))), bits(c.stored(v[i])))
            << "V token " << t << " head " << h << " dim " << d;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CudaKvLayout,
                         ::testing::Combine(::testing::Values(1, 16, 32),
                                            ::testing::Values(vt::DType::F32, vt::DType::F16,
                                                              vt::DType::BF16)));

TEST(CudaAttentionMath, SegmentsTileEveryCausalRangeOnce) {
  for (int32_t pos : {0, 1, 254, 255, 256, 257, 511, 512, 1000, 4095, 4096}) {
    const int n = vt::cuda::attn_num_segments(pos);
    int32_t next = 0;
    for (int s = 0; s < n; ++s) {
      int32_t p0, p1;
      vt::cuda::attn_segment_bounds(s, pos, &p0, &p1);
      EXPECT_EQ(p0, next) << "pos " << pos << " seg " << s;
      EXPECT_EQ(p0 % vt::cuda::kAttnSeg, 0);  // aligned to absolute positions
      EXPECT_LE(p1 - p0 + 1, vt::cuda::kAttnSeg);
      EXPECT_LE(p0, p1);
      next = p1 + 1;
    }
    EXPECT_EQ(next, vt::cuda::attn_last_key(pos) + 1) << "pos " << pos;
    EXPECT_LE(n, vt::cuda::attn_max_segments(pos + 1));
  }
}

// The kernels' algorithm (segment partials: fused score chains over d, exact softmax per
// segment, P.V chains over keys; partials folded with attn_merge) modelled on the host with
// the header's functions and page offsets, against the CPU kernel: same results to float
// accuracy, for decode tokens and prefill chunks, GQA, and pages scattered over the cache.
std::vector<float> model_attention(const std::vector<float>& q, int n_heads, const Cache& c,
                                   const std::vector<int32_t>& pos, const std::vector<int32_t>& seq,
                                   const std::vector<int32_t>& bt, int64_t bt_stride, float scale) {
  const KvGeom g = c.g;
  const int D = g.head_dim, group = n_heads / g.n_kv_heads;
  std::vector<float> out(pos.size() * n_heads * D);
  for (size_t t = 0; t < pos.size(); ++t)
    for (int h = 0; h < n_heads; ++h) {
      const float* qh = q.data() + (t * n_heads + h) * D;
      const int32_t* row = bt.data() + seq[t] * bt_stride;
      const int kvh = h / group;
      float M = 0, L = 0;
      std::vector<float> O(D), o(D), sc(vt::cuda::kAttnSeg);
      for (int s = 0; s < vt::cuda::attn_num_segments(pos[t]); ++s) {
        int32_t p0, p1;
        vt::cuda::attn_segment_bounds(s, pos[t], &p0, &p1);
        float m = -INFINITY, l = 0;
        for (int32_t p = p0; p <= p1; ++p) {
          const int64_t slot = vt::cuda::slot_of(row, p, g.block_size);
          float acc = 0;
          for (int d = 0; d < D; ++d)
            acc = vt::cuda::fma_rn(qh[d], c.read(c.k, vt::cuda::k_offset(g, slot, kvh, d)), acc);
          sc[p - p0] = vt::cuda::mul_rn(acc, scale);
          m = std::max(m, sc[p - p0]);
        }
        for (int32_t p = p0; p <= p1; ++p) l += (sc[p - p0] = std::exp(sc[p - p0] - m));
        std::fill(o.begin(), o.end(), 0.0f);
        for (int32_t p = p0; p <= p1; ++p) {
          const int64_t slot = vt::cuda::slot_of(row, p, g.block_size);
          for (int d = 0; d < D; ++d)
            o[d] = vt::cuda::fma_rn(sc[p - p0], c.read(c.v, vt::cuda::v_offset(g, slot, kvh, d)),
                                    o[d]);
        }
        if (s == 0) {
          M = m, L = l, O = o;
        } else {
          const auto f = vt::cuda::attn_merge(&M, &L, m, l);
          for (int d = 0; d < D; ++d) O[d] = vt::cuda::attn_merge_value(O[d], o[d], f);
        }
      }
      for (int d = 0; d < D; ++d) out[(t * n_heads + h) * D + d] = vt::cuda::div_rn(O[d], L);
    }
  return out;
}

class CudaAttentionModel : public ::testing::TestWithParam<vt::DType> {};

TEST_P(CudaAttentionModel, MatchesCpuPagedAttention) {
  const vt::DType dtype = GetParam();
  const KvGeom g{16, 2, 64};
  const int n_heads = 6, max_len = 700;
  const int64_t stride = (max_len + g.block_size - 1) / g.block_size, n_seqs = 2;
  Cache c(g, n_seqs * stride + 3, dtype);
  std::mt19937 rng(static_cast<unsigned>(dtype) + 5);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  // Block tables: a shuffled permutation of the pages, so consecutive positions hop pages.
  std::vector<int32_t> bt(n_seqs * stride);
  for (size_t i = 0; i < bt.size(); ++i) bt[i] = static_cast<int32_t>(i + 3);
  std::shuffle(bt.begin(), bt.end(), rng);
  // Fill both sequences' caches up to max_len through the CPU writer.
  std::vector<float> kv(g.row());
  for (int32_t s = 0; s < n_seqs; ++s)
    for (int32_t p = 0; p < max_len; ++p) {
      for (auto& x : kv) x = nd(rng);
      std::vector<float> vv(g.row());
      for (auto& x : vv) x = nd(rng);
      const int64_t slot = vt::cuda::slot_of(bt.data() + s * stride, p, g.block_size);
      vt::cpu::reshape_and_cache(kv.data(), g.row(), vv.data(), g.row(), 1, &slot, c.view());
    }
  // Decode tokens of both sequences at segment edges, plus a prefill chunk of sequence 1.
  std::vector<int32_t> pos = {0, 255, 256, 257, 511, 699}, seq = {0, 1, 0, 1, 0, 1};
  for (int32_t p = 250; p < 262; ++p) pos.push_back(p), seq.push_back(1);
  std::vector<float> q(pos.size() * n_heads * g.head_dim);
  for (auto& x : q) x = nd(rng);
  const float scale = 1.0f / std::sqrt(static_cast<float>(g.head_dim));
  vt::cpu::AttnBatch b;
  b.n_tok = static_cast<int64_t>(pos.size());
  b.positions = pos.data();
  b.seq_of_token = seq.data();
  b.block_tables = bt.data();
  b.bt_stride = stride;
  std::vector<float> cpu(q.size());
  const int64_t ld = static_cast<int64_t>(n_heads) * g.head_dim;
  vt::cpu::paged_attention_isa(vt::cpu::Isa::kScalar, q.data(), ld, n_heads, c.view(), b, scale,
                               cpu.data(), ld, vt::ThreadPool::global());
  const auto ours = model_attention(q, n_heads, c, pos, seq, bt, stride, scale);
  for (size_t i = 0; i < cpu.size(); ++i)
    ASSERT_NEAR(ours[i], cpu[i], 2e-5f * (1.0f + std::fabs(cpu[i]))) << "element " << i;

  // Causality: keys after a token's position never matter. Poison every slot past the
  // chunk's first token (position 250) and recompute it: the same bits.
  Cache poisoned = c;
  for (int32_t p = 251; p < max_len; ++p) {
    const int64_t slot = vt::cuda::slot_of(bt.data() + stride, p, g.block_size);
    std::vector<float> nan_row(g.row(), NAN);
    vt::cpu::reshape_and_cache(nan_row.data(), g.row(), nan_row.data(), g.row(), 1, &slot,
                               poisoned.view());
  }
  const size_t t0 = 6;  // the chunk's first token (position 250, sequence 1)
  ASSERT_EQ(pos[t0], 250);
  const auto again = model_attention(q, n_heads, poisoned, pos, seq, bt, stride, scale);
  for (int i = 0; i < n_heads * g.head_dim; ++i)
    ASSERT_EQ(bits(again[t0 * n_heads * g.head_dim + i]),
              bits(ours[t0 * n_heads * g.head_dim + i]));
}

INSTANTIATE_TEST_SUITE_P(KvTypes, CudaAttentionModel,
                         ::testing::Values(vt::DType::F32, vt::DType::F16, vt::DType::BF16));

// The RoPE kernel's arithmetic with host cos/sin: bit-identical to the CPU's scalar kernel
// for both pair layouts, with a llama3-style scaled frequency table and large positions.
TEST(CudaRope, RotationMatchesCpuScalarKernelBitForBit) {
  const int head_dim = 64, half = head_dim / 2, n_heads = 3;
  std::vector<float> inv_freq(half);
  for (int i = 0; i < half; ++i)
    inv_freq[i] = std::pow(500000.0f, -2.0f * static_cast<float>(i) / head_dim) / (i > 20 ? 8 : 1);
  const std::vector<int32_t> positions = {0, 1, 17, 255, 4097, 131071};
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (bool neox : {true, false}) {
    const auto style = neox ? vt::cpu::RopeStyle::kNeox : vt::cpu::RopeStyle::kInterleaved;
    const int64_t ld = n_heads * head_dim;
    std::vector<float> x(positions.size() * ld);
    for (auto& v : x) v = nd(rng);
    std::vector<float> cpu = x, ours = x;
    vt::cpu::rope_isa(vt::cpu::Isa::kScalar, cpu.data(), ld, static_cast<int64_t>(positions.size()),
                      n_heads, head_dim, positions.data(), inv_freq.data(), style);
    for (size_t t = 0; t < positions.size(); ++t)
      for (int h = 0; h < n_heads; ++h)
        for (int i = 0; i < half; ++i) {
          const float angle = vt::cuda::rope_angle(positions[t], inv_freq[i]);
          ASSERT_EQ(bits(angle), bits(static_cast<float>(positions[t]) * inv_freq[i]));
          int a, b;
          vt::cuda::rope_pair(neox, half, i, &a, &b);
          float* xh = ours.data() + t * ld + h * head_dim;
          vt::cuda::rope_rotate(xh + a, xh + b, std::cos(angle), std::sin(angle));
        }
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(bits(ours[i]), bits(cpu[i])) << (neox ? "neox" : "interleaved") << " elem " << i;
  }
}

// The argmax kernel: 256 threads scan strided, then each warp's butterfly and the warps in
// order combine (value, index) pairs with argmax_better. Its answer must be vt::cpu's for
// ties, NaNs, signed zeros and infinities.
int32_t model_argmax(const std::vector<float>& x) {
  const int n = static_cast<int>(x.size());
  float v[256];
  int32_t idx[256];
  for (int tid = 0; tid < 256; ++tid) {
    v[tid] = NAN;
    idx[tid] = INT32_MAX;
    for (int i = tid; i < n; i += 256)
      if (vt::cuda::argmax_better(x[i], i, v[tid], idx[tid])) v[tid] = x[i], idx[tid] = i;
  }
  float wv[8];
  int32_t wi[8];
  for (int w = 0; w < 8; ++w) {
    float lv[32];
    int32_t li[32];
    for (int l = 0; l < 32; ++l) lv[l] = v[w * 32 + l], li[l] = idx[w * 32 + l];
    for (int off = 16; off >= 1; off /= 2) {
      float nv[32];
      int32_t ni[32];
      for (int l = 0; l < 32; ++l) {
        const bool take = vt::cuda::argmax_better(lv[l ^ off], li[l ^ off], lv[l], li[l]);
        nv[l] = take ? lv[l ^ off] : lv[l];
        ni[l] = take ? li[l ^ off] : li[l];
      }
      std::copy(nv, nv + 32, lv);
      std::copy(ni, ni + 32, li);
    }
    wv[w] = lv[0], wi[w] = li[0];
  }
  float bv = wv[0];
  int32_t bi = wi[0];
  for (int w = 1; w < 8; ++w)
    if (vt::cuda::argmax_better(wv[w], wi[w], bv, bi)) bv = wv[w], bi = wi[w];
  return bi;
}

TEST(CudaArgmax, OrderMatchesCpuArgmax) {
  std::mt19937 rng(9);
  for (int rep = 0; rep < 400; ++rep) {
    const int n = 1 + static_cast<int>(rng() % 3000);
    std::vector<float> x(n);
    const int kind = rep % 5;
    for (auto& v : x) {
      v = static_cast<float>(static_cast<int>(rng() % 7)) - 3.0f;  // many ties
      if (kind == 1 && rng() % 4 == 0) v = NAN;
      if (kind == 2) v = rng() % 2 ? 0.0f : -0.0f;
      if (kind == 3 && rng() % 50 == 0) v = rng() % 2 ? INFINITY : -INFINITY;
      if (kind == 4) v = NAN;
    }
    if (kind == 1 && rep % 3 == 0) x[0] = NAN;
    ASSERT_EQ(model_argmax(x), vt::cpu::argmax(x.data(), n)) << "rep " << rep << " n " << n;
  }
}

}  // namespace
