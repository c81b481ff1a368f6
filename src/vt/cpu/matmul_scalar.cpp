// Portable reference kernels for matmul: they spell out the lane structure described in
// matmul_internal.h one lane at a time, so the SIMD paths can be checked against them bit
// for bit, and they are the fallback on CPUs without AVX2.
#include <cmath>
#include <cstring>
#include <vector>

#include "vt/cpu/kquant.h"
#include "vt/cpu/matmul_half.h"
#include "vt/cpu/matmul_internal.h"
#include "vt/cpu/matmul_scalar_chain.h"

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

// Q8_0 / Q4_0 / Q4_1: one fp32 chain over blocks (and Q4_1's second chain for the mins),
// see matmul_internal.h.
template <DType T>
float dot_q8_0_family(const void* row, const ActView& a, int64_t t) {
  return q8_0_chain<T == DType::Q4_1>(a, t, [&](int64_t b, int* w) -> Block32Scales {
    if constexpr (T == DType::Q8_0) {
      const auto& blk = static_cast<const BlockQ8_0*>(row)[b];
      for (int j = 0; j < 32; ++j) w[j] = blk.qs[j];
      return {fp16_to_fp32(blk.d), 0};
    } else if constexpr (T == DType::Q4_0) {
      const auto& blk = static_cast<const BlockQ4_0*>(row)[b];
      for (int j = 0; j < 16; ++j) {
        w[j] = (blk.qs[j] & 0xF) - 8;
        w[j + 16] = (blk.qs[j] >> 4) - 8;
      }
      return {fp16_to_fp32(blk.d), 0};
    } else {
      const auto& blk = static_cast<const BlockQ4_1*>(row)[b];
      for (int j = 0; j < 16; ++j) {
        w[j] = blk.qs[j] & 0xF;
        w[j + 16] = blk.qs[j] >> 4;
      }
      return {fp16_to_fp32(blk.d), fp16_to_fp32(blk.m)};
    }
  });
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
    case DType::Q5_K:
    case DType::Q6_K:
      rows_loop(w, a, r0, r1, y, ldy,
                [&](const void* row, int64_t t) { return dot_kquant_scalar(w.dtype, row, a, t); });
      return;
    default:  // the types of dtype_zoo.h
      rows_loop(w, a, r0, r1, y, ldy,
                [&](const void* row, int64_t t) { return dot_zoo_scalar(w.dtype, row, a, t); });
      return;
  }
}

}  // namespace vt::cpu
