// The reference dot products of K-quant rows (Q4_K / Q5_K / Q6_K GGUF blocks) with Q8_K
// activations: matmul_internal.h's contract one row at a time, written for clarity. The
// packed SIMD kernels must reproduce these results bit for bit.
#include <cmath>

#include "vt/cpu/kernels.h"
#include "vt/cpu/kquant.h"

namespace vt::cpu {

namespace {

void scale_min(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q4_K (qh null) or Q5_K super-block: the sub-blocks' integer dots folded into fp32 in
// sub-block order, F = fma(sc_j, I_j, F), and the exact min sum M = sum_j m_j * bsum_j.
template <class Block>
float q45_sums(const Block& blk, const uint8_t* qh, const int8_t* x, const int16_t* bs, int* msum) {
  float f = 0;
  *msum = 0;
  for (int j = 0; j < 8; ++j) {
    int sc, m;
    scale_min(j, blk.scales, &sc, &m);
    const uint8_t* q = blk.qs + 32 * (j / 2);
    int dot = 0;
    for (int l = 0; l < 32; ++l) {
      int v = (q[l] >> (4 * (j & 1))) & 0xF;
      if (qh) v |= ((qh[l] >> j) & 1) << 4;
      dot += v * x[32 * j + l];
    }
    f = std::fma(static_cast<float>(sc), static_cast<float>(dot), f);
    *msum += m * (bs[2 * j] + bs[2 * j + 1]);
  }
  return f;
}

// Q6_K super-block: F = fma(sc_g, I_g, F) over the 16-element groups in order, where
// I_g = (dot of q with x) - 32 * (sum of x) is the exact dot of the signed weights q - 32.
float q6_sum(const BlockQ6_K& blk, const int8_t* x, const int16_t* bs) {
  float f = 0;
  for (int g = 0; g < 16; ++g) {
    int dot = 0;
    for (int l = 0; l < 16; ++l) {
      const int e = 16 * g + l;
      const int h = e / 128, k = (e % 128) / 32, ll = e % 32;
      const int lo = (blk.ql[64 * h + ll + (k & 1) * 32] >> (4 * (k >> 1))) & 0xF;
      const int hi = (blk.qh[32 * h + ll] >> (2 * k)) & 3;
      dot += (lo | (hi << 4)) * x[e];
    }
    f = std::fma(static_cast<float>(blk.scales[g]), static_cast<float>(dot - 32 * bs[g]), f);
  }
  return f;
}

}  // namespace

float dot_kquant_scalar(DType t, const void* row, const ActView& a, int64_t tok) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + tok * a.cols;
  const float* xd = a.d + tok * nb;
  const int16_t* bs = a.bsums + tok * nb * 16;
  float acc = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const int8_t* x = xq + b * kQK_K;
    const int16_t* s = bs + b * 16;
    if (t == DType::Q6_K) {
      const auto& blk = static_cast<const BlockQ6_K*>(row)[b];
      const float dd = fp16_to_fp32(blk.d) * xd[b];
      acc = std::fma(dd, q6_sum(blk, x, s), acc);
      continue;
    }
    float f;
    int msum;
    uint16_t d, dmin;
    if (t == DType::Q5_K) {
      const auto& blk = static_cast<const BlockQ5_K*>(row)[b];
      f = q45_sums(blk, blk.qh, x, s, &msum);
      d = blk.d;
      dmin = blk.dmin;
    } else {
      const auto& blk = static_cast<const BlockQ4_K*>(row)[b];
      f = q45_sums(blk, nullptr, x, s, &msum);
      d = blk.d;
      dmin = blk.dmin;
    }
    const float dd = fp16_to_fp32(d) * xd[b], dm = fp16_to_fp32(dmin) * xd[b];
    acc = std::fma(dd, f, acc);
    acc = std::fma(-dm, static_cast<float>(msum), acc);
  }
  return acc;
}

}  // namespace vt::cpu
