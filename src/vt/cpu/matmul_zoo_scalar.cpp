// Portable reference dot products of the less common weight types (dtype_zoo.h), one lane
// at a time as the numerics contract in matmul_internal.h describes them; the SIMD kernels
// are checked against these bit for bit. matmul_scalar.cpp's row loop calls dot_zoo_scalar.
#include <cmath>
#include <cstring>

#include "vt/cpu/matmul_internal.h"
#include "vt/cpu/quant_zoo.h"

namespace vt::cpu {

namespace {

// The 8 -> 4 -> 2 -> 1 tree of the K-quant contract (lane l paired with l + half).
inline float reduce8(const float* v) {
  const float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
  return (a0 + a2) + (a1 + a3);
}

// Lane l of a 32-element chunk: exact integer dot of elements 4l..4l+3.
inline void lanes32(const int* w, const int8_t* x, int* lane) {
  for (int l = 0; l < 8; ++l)
    lane[l] = w[4 * l] * x[4 * l] + w[4 * l + 1] * x[4 * l + 1] + w[4 * l + 2] * x[4 * l + 2] +
              w[4 * l + 3] * x[4 * l + 3];
}

// IQ4 code-book values of a 32-element sub-block in the Q4_0 nibble layout.
inline void iq4_values(const uint8_t* qs, int* w) {
  for (int j = 0; j < 16; ++j) {
    w[j] = kIQ4Values[qs[j] & 0xF];
    w[j + 16] = kIQ4Values[qs[j] >> 4];
  }
}

// Q5_0 / Q5_1 / IQ4_NL: the Q8_0-family chain (exact block dot I_b, one fma per block).
template <DType T>
float dot_q8_0_like(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const float* xs = a.s + t * nb;
  float acc = 0, macc = 0;
  int w[32];
  for (int64_t b = 0; b < nb; ++b) {
    float dw;
    if constexpr (T == DType::Q5_0) {
      const auto& blk = static_cast<const BlockQ5_0*>(row)[b];
      uint32_t qh;
      std::memcpy(&qh, blk.qh, 4);
      for (int j = 0; j < 32; ++j) {
        const int nib = j < 16 ? blk.qs[j] & 0xF : blk.qs[j - 16] >> 4;
        w[j] = (nib | static_cast<int>(((qh >> j) & 1) << 4)) - 16;
      }
      dw = fp16_to_fp32(blk.d);
    } else if constexpr (T == DType::Q5_1) {
      const auto& blk = static_cast<const BlockQ5_1*>(row)[b];
      uint32_t qh;
      std::memcpy(&qh, blk.qh, 4);
      for (int j = 0; j < 32; ++j) {
        const int nib = j < 16 ? blk.qs[j] & 0xF : blk.qs[j - 16] >> 4;
        w[j] = nib | static_cast<int>(((qh >> j) & 1) << 4);
      }
      dw = fp16_to_fp32(blk.d);
      macc = std::fma(fp16_to_fp32(blk.m), xs[b], macc);
    } else {
      const auto& blk = static_cast<const BlockIQ4_NL*>(row)[b];
      iq4_values(blk.qs, w);
      dw = fp16_to_fp32(blk.d);
    }
    int idot = 0;
    for (int j = 0; j < 32; ++j) idot += w[j] * xq[b * kQK + j];
    acc = std::fma(dw * xd[b], static_cast<float>(idot), acc);
  }
  return T == DType::Q5_1 ? acc + macc : acc;
}

float dot_q2_k(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const int16_t* bs = a.bsums + t * nb * 16;
  float acc[8] = {}, macc = 0;
  int w[32], lane[8];
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockQ2_K*>(row)[b];
    int isum[8] = {}, summ = 0;
    for (int c = 0; c < 8; ++c) {
      for (int l = 0; l < 32; ++l) w[l] = q2k_value(blk, 32 * c + l);
      lanes32(w, xq + b * kQK_K + 32 * c, lane);
      for (int l = 0; l < 8; ++l) isum[l] += (blk.scales[2 * c + l / 4] & 0xF) * lane[l];
    }
    for (int g = 0; g < 16; ++g) summ += (blk.scales[g] >> 4) * bs[b * 16 + g];
    const float d = fp16_to_fp32(blk.d) * xd[b];
    const float dm = fp16_to_fp32(blk.dmin) * xd[b];
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(isum[l]), acc[l]);
    macc = std::fma(dm, static_cast<float>(summ), macc);
  }
  return reduce8(acc) - macc;
}

float dot_q3_k(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const int16_t* bs = a.bsums + t * nb * 16;
  float acc[8] = {};
  int w[32], lane[8];
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockQ3_K*>(row)[b];
    int isum[8] = {}, off = 0;
    for (int c = 0; c < 8; ++c) {
      for (int l = 0; l < 32; ++l) w[l] = q3k_value(blk, 32 * c + l) + 4;
      lanes32(w, xq + b * kQK_K + 32 * c, lane);
      for (int l = 0; l < 8; ++l) isum[l] += q3k_scale(blk.scales, 2 * c + l / 4) * lane[l];
    }
    for (int g = 0; g < 16; ++g) off += q3k_scale(blk.scales, g) * bs[b * 16 + g];
    isum[0] -= 4 * off;
    const float d = fp16_to_fp32(blk.d) * xd[b];
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(isum[l]), acc[l]);
  }
  return reduce8(acc);
}

float dot_iq4_xs(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  float acc[8] = {};
  int w[32], lane[8];
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockIQ4_XS*>(row)[b];
    int isum[8] = {};
    for (int ib = 0; ib < 8; ++ib) {
      iq4_values(blk.qs + 16 * ib, w);
      lanes32(w, xq + b * kQK_K + 32 * ib, lane);
      const int ls = iq4xs_scale(blk, ib);
      for (int l = 0; l < 8; ++l) isum[l] += ls * lane[l];
    }
    const float d = fp16_to_fp32(blk.d) * xd[b];
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(isum[l]), acc[l]);
  }
  return reduce8(acc);
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
