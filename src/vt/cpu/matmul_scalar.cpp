// Portable reference kernels for matmul: they spell out the lane structure described in
// matmul_internal.h one lane at a time, so the SIMD paths can be checked against them bit
// for bit, and they are the fallback on CPUs without AVX2.
#include <cmath>
#include <cstring>
#include <vector>

#include "vt/cpu/matmul_half.h"

namespace vt::cpu {

namespace {

// 8 -> 4 -> 2 -> 1, pairing lane l with lane l + half at each step.
inline float reduce8(const float* v) {
  const float a0 = v[0] + v[4], a1 = v[1] + v[5], a2 = v[2] + v[6], a3 = v[3] + v[7];
  const float b0 = a0 + a2, b1 = a1 + a3;
  return b0 + b1;
}

inline float reduce16(const float* v) {
  float h[8];
  for (int l = 0; l < 8; ++l) h[l] = v[l] + v[l + 8];
  return reduce8(h);
}

float dot_f32(const void* row, const float* x, int64_t n) {
  float acc[16] = {};
  for (int64_t i0 = 0; i0 < n; i0 += 16) {
    for (int l = 0; l < 16; ++l) {
      const int64_t i = i0 + l;
      const float w = i < n ? static_cast<const float*>(row)[i] : 0.0f;
      const float v = i < n ? x[i] : 0.0f;
      acc[l] = std::fma(w, v, acc[l]);
    }
  }
  return reduce16(acc);
}

// Lane l of a 32-byte block: exact integer dot of bytes 4l..4l+3.
inline void lanes32(const int* w, const int8_t* x, int* lane) {
  for (int l = 0; l < 8; ++l)
    lane[l] = w[4 * l] * x[4 * l] + w[4 * l + 1] * x[4 * l + 1] + w[4 * l + 2] * x[4 * l + 2] +
              w[4 * l + 3] * x[4 * l + 3];
}

// Exact integer dot of one weight block (as integers) with 32 activation bytes.
inline int idot32(const int* w, const int8_t* x) {
  int acc = 0;
  for (int j = 0; j < 32; ++j) acc += w[j] * x[j];
  return acc;
}

// One fp32 chain over blocks (and Q4_1's second chain for the mins), see matmul_internal.h.
template <DType T>
float dot_q8_0_family(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const float* xs = a.s + t * nb;
  float acc = 0, macc = 0;
  int w[32];
  for (int64_t b = 0; b < nb; ++b) {
    float dw;
    if constexpr (T == DType::Q8_0) {
      const auto& blk = static_cast<const BlockQ8_0*>(row)[b];
      for (int j = 0; j < 32; ++j) w[j] = blk.qs[j];
      dw = fp16_to_fp32(blk.d);
    } else if constexpr (T == DType::Q4_0) {
      const auto& blk = static_cast<const BlockQ4_0*>(row)[b];
      for (int j = 0; j < 16; ++j) {
        w[j] = (blk.qs[j] & 0xF) - 8;
        w[j + 16] = (blk.qs[j] >> 4) - 8;
      }
      dw = fp16_to_fp32(blk.d);
    } else {
      const auto& blk = static_cast<const BlockQ4_1*>(row)[b];
      for (int j = 0; j < 16; ++j) {
        w[j] = blk.qs[j] & 0xF;
        w[j + 16] = blk.qs[j] >> 4;
      }
      dw = fp16_to_fp32(blk.d);
      macc = std::fma(fp16_to_fp32(blk.m), xs[b], macc);
    }
    const float dd = dw * xd[b];
    acc = std::fma(dd, static_cast<float>(idot32(w, xq + b * kQK)), acc);
  }
  return T == DType::Q4_1 ? acc + macc : acc;
}

float dot_q4_k(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const int16_t* bs = a.bsums + t * nb * 16;
  float acc[8] = {}, macc = 0;
  int w[32], lane[8];
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockQ4_K*>(row)[b];
    int isum[8] = {}, summ = 0;
    for (int j = 0; j < 8; ++j) {
      int sc, m;
      if (j < 4) {
        sc = blk.scales[j] & 63;
        m = blk.scales[j + 4] & 63;
      } else {
        sc = (blk.scales[j + 4] & 0xF) | ((blk.scales[j - 4] >> 6) << 4);
        m = (blk.scales[j + 4] >> 4) | ((blk.scales[j] >> 6) << 4);
      }
      const uint8_t* q = blk.qs + 32 * (j / 2);
      for (int l = 0; l < 32; ++l) w[l] = (j & 1) ? q[l] >> 4 : q[l] & 0xF;
      lanes32(w, xq + b * kQK_K + 32 * j, lane);
      for (int l = 0; l < 8; ++l) isum[l] += sc * lane[l];
      summ += m * (bs[b * 16 + 2 * j] + bs[b * 16 + 2 * j + 1]);
    }
    const float d = fp16_to_fp32(blk.d) * xd[b];
    const float dm = fp16_to_fp32(blk.dmin) * xd[b];
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(isum[l]), acc[l]);
    macc = std::fma(dm, static_cast<float>(summ), macc);
  }
  return reduce8(acc) - macc;
}

float dot_q6_k(const void* row, const ActView& a, int64_t t) {
  const int64_t nb = a.cols / kQK_K;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const int16_t* bs = a.bsums + t * nb * 16;
  float acc[8] = {};
  int w[32], lane[8];
  for (int64_t b = 0; b < nb; ++b) {
    const auto& blk = static_cast<const BlockQ6_K*>(row)[b];
    int isum[8] = {}, off = 0;
    for (int c = 0; c < 8; ++c) {
      for (int l = 0; l < 32; ++l) {
        const int e = 32 * c + l;
        const int h = e / 128, k = (e % 128) / 32, ll = e % 32;
        const int lo = (blk.ql[64 * h + ll + (k & 1) * 32] >> (4 * (k >> 1))) & 0xF;
        const int hi = (blk.qh[32 * h + ll] >> (2 * k)) & 3;
        w[l] = lo | (hi << 4);
      }
      lanes32(w, xq + b * kQK_K + 32 * c, lane);
      for (int l = 0; l < 8; ++l) isum[l] += blk.scales[2 * c + l / 4] * lane[l];
    }
    for (int g = 0; g < 16; ++g) off += blk.scales[g] * bs[b * 16 + g];
    isum[0] -= 32 * off;
    const float d = fp16_to_fp32(blk.d) * xd[b];
    for (int l = 0; l < 8; ++l) acc[l] = std::fma(d, static_cast<float>(isum[l]), acc[l]);
  }
  return reduce8(acc);
}

// Packed rows are unpacked one at a time into GGUF block bytes.
template <class Dot>
void rows_loop(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y, int64_t ldy,
               Dot dot) {
  thread_local std::vector<uint8_t> unpacked;
  if (w.packed && unpacked.size() < w.row_stride) unpacked.resize(w.row_stride);
  for (int64_t r = r0; r < r1; ++r) {
    const void* row = static_cast<const uint8_t*>(w.data) + r * w.row_stride;
    if (w.packed) {
      unpack_row(w, r, unpacked.data());
      row = unpacked.data();
    }
    for (int64_t t = 0; t < a.n_tok; ++t) y[t * ldy + r] = dot(row, t);
  }
}

}  // namespace

void matmul_rows_scalar(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                        int64_t ldy) {
  const int64_t n = w.cols;
  switch (w.dtype) {
    case DType::F32:
      rows_loop(w, a, r0, r1, y, ldy,
                [&](const void* row, int64_t t) { return dot_f32(row, a.x + t * a.ldx, n); });
      return;
    case DType::F16:
    case DType::BF16:
      return matmul_rows_half_scalar(w, a, r0, r1, y, ldy);
    case DType::Q8_0:
      rows_loop(w, a, r0, r1, y, ldy, [&](const void* row, int64_t t) {
        return dot_q8_0_family<DType::Q8_0>(row, a, t);
      });
      return;
    case DType::Q4_0:
      rows_loop(w, a, r0, r1, y, ldy, [&](const void* row, int64_t t) {
        return dot_q8_0_family<DType::Q4_0>(row, a, t);
      });
      return;
    case DType::Q4_1:
      rows_loop(w, a, r0, r1, y, ldy, [&](const void* row, int64_t t) {
        return dot_q8_0_family<DType::Q4_1>(row, a, t);
      });
      return;
    case DType::Q4_K:
      rows_loop(w, a, r0, r1, y, ldy,
                [&](const void* row, int64_t t) { return dot_q4_k(row, a, t); });
      return;
    case DType::Q6_K:
      rows_loop(w, a, r0, r1, y, ldy,
                [&](const void* row, int64_t t) { return dot_q6_k(row, a, t); });
      return;
    default:  // the types of dtype_zoo.h
      rows_loop(w, a, r0, r1, y, ldy,
                [&](const void* row, int64_t t) { return dot_zoo_scalar(w.dtype, row, a, t); });
      return;
  }
}

}  // namespace vt::cpu
