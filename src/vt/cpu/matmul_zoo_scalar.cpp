// Portable reference dot products of the less common weight types (dtype_zoo.h), one lane
// at a time as the numerics contract in matmul_internal.h describes them; the SIMD kernels
// are checked against these bit for bit. matmul_scalar.cpp's row loop calls dot_zoo_scalar.
#include <cmath>
#include <cstring>
#include <type_traits>

#include "vt/cpu/matmul_internal.h"
#include "vt/cpu/matmul_scalar_chain.h"
#include "vt/cpu/quant_zoo.h"

namespace vt::cpu {

namespace {

// IQ4 code-book values of a 32-element sub-block in the Q4_0 nibble layout.
inline void iq4_values(const uint8_t* qs, int* w) {
  for (int j = 0; j < 16; ++j) {
    w[j] = kIQ4Values[qs[j] & 0xF];
    w[j + 16] = kIQ4Values[qs[j] >> 4];
  }
}

// Q5_0 / Q5_1 / IQ4_NL / MXFP4: the Q8_0-family chain (exact block dot I_b, one fma per
// block; Q5_1 adds the mins chain). MXFP4's d_w is its exact power of two 2^(e - 128).
template <DType T>
float dot_q8_0_like(const void* row, const ActView& a, int64_t t) {
  return q8_0_chain<T == DType::Q5_1>(a, t, [&](int64_t b, int* w) -> Block32Scales {
    if constexpr (T == DType::Q5_0 || T == DType::Q5_1) {
      using Block = std::conditional_t<T == DType::Q5_0, BlockQ5_0, BlockQ5_1>;
      const auto& blk = static_cast<const Block*>(row)[b];
      uint32_t qh;
      std::memcpy(&qh, blk.qh, 4);
      const int offset = T == DType::Q5_0 ? 16 : 0;
      for (int j = 0; j < 32; ++j) {
        const int nib = j < 16 ? blk.qs[j] & 0xF : blk.qs[j - 16] >> 4;
        w[j] = (nib | static_cast<int>(((qh >> j) & 1) << 4)) - offset;
      }
      if constexpr (T == DType::Q5_1) return {fp16_to_fp32(blk.d), fp16_to_fp32(blk.m)};
      return {fp16_to_fp32(blk.d), 0};
    } else if constexpr (T == DType::MXFP4) {
      const auto& blk = static_cast<const BlockMXFP4*>(row)[b];
      for (int j = 0; j < 16; ++j) {
        w[j] = kMXFP4Values[blk.qs[j] & 0xF];
        w[j + 16] = kMXFP4Values[blk.qs[j] >> 4];
      }
      return {e8m0_half(blk.e), 0};
    } else {
      const auto& blk = static_cast<const BlockIQ4_NL*>(row)[b];
      iq4_values(blk.qs, w);
      return {fp16_to_fp32(blk.d), 0};
    }
  });
}

// Q2_K / Q3_K / IQ4_XS: one exact integer per super-block (sum over its groups of the
// group scale times the group's integer dot), then one fma per super-block.
float dot_q2_k(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const int16_t* bs = a.bsums + t * nb * 16;
  float acc = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockQ2_K*>(row)[b];
    int isum = 0, msum = 0;
    for (int g = 0; g < 16; ++g) {
      int dot = 0;
      for (int l = 0; l < 16; ++l) dot += q2k_value(blk, 16 * g + l) * xq[b * kQK_K + 16 * g + l];
      isum += (blk.scales[g] & 0xF) * dot;
      msum += (blk.scales[g] >> 4) * bs[b * 16 + g];
    }
    acc = std::fma(fp16_to_fp32(blk.d) * xd[b], static_cast<float>(isum), acc);
    acc = std::fma(-(fp16_to_fp32(blk.dmin) * xd[b]), static_cast<float>(msum), acc);
  }
  return acc;
}

float dot_q3_k(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  float acc = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockQ3_K*>(row)[b];
    int isum = 0;
    for (int g = 0; g < 16; ++g) {
      int dot = 0;
      for (int l = 0; l < 16; ++l) dot += q3k_value(blk, 16 * g + l) * xq[b * kQK_K + 16 * g + l];
      isum += q3k_scale(blk.scales, g) * dot;
    }
    acc = std::fma(fp16_to_fp32(blk.d) * xd[b], static_cast<float>(isum), acc);
  }
  return acc;
}

float dot_iq4_xs(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  float acc = 0;
  int w[32];
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockIQ4_XS*>(row)[b];
    int isum = 0;
    for (int ib = 0; ib < 8; ++ib) {
      iq4_values(blk.qs + 16 * ib, w);
      int dot = 0;
      for (int l = 0; l < 32; ++l) dot += w[l] * xq[b * kQK_K + 32 * ib + l];
      isum += iq4xs_scale(blk, ib) * dot;
    }
    acc = std::fma(fp16_to_fp32(blk.d) * xd[b], static_cast<float>(isum), acc);
  }
  return acc;
}

}  // namespace

float dot_zoo_scalar(DType type, const void* row, const ActView& a, int64_t t) {
  switch (type) {
    case DType::Q5_0:
      return dot_q8_0_like<DType::Q5_0>(row, a, t);
    case DType::Q5_1:
      return dot_q8_0_like<DType::Q5_1>(row, a, t);
    case DType::IQ4_NL:
      return dot_q8_0_like<DType::IQ4_NL>(row, a, t);
    case DType::MXFP4:
      return dot_q8_0_like<DType::MXFP4>(row, a, t);
    case DType::Q2_K:
      return dot_q2_k(row, a, t);
    case DType::Q3_K:
      return dot_q3_k(row, a, t);
    case DType::IQ4_XS:
      return dot_iq4_xs(row, a, t);
    default:
      return 0;
  }
}

}  // namespace vt::cpu
