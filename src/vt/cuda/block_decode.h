// Weight decoding for the CUDA kernels, __host__ __device__ so the CPU tests check it
// against vt::cpu's dequantization bit for bit.
//
// Every weight type is read in units of 32 consecutive elements of a row: a Q8_0 / Q4_0 /
// Q4_1 block, one 32-element sub-block of a Q4_K or Q6_K super-block, or 32 plain values.
// A matmul lane decodes one unit into registers and dots it with 32 activations; each
// output's reduction order (unit sums in a fixed lane-strided order, then a fixed warp
// butterfly) depends on the row length alone, which is what makes the kernels
// batch-invariant. Decoded values equal vt::cpu::dequantize_row's exactly: products and
// sums are rounded the way the CPU rounds them (see hd.h).
#pragma once

#include <cstdint>

#include "vt/cuda/hd.h"
#include "vt/dtype.h"

namespace vt::cuda {

constexpr int kUnit = 32;  // elements per decode unit (kQK)

// ---- 16-bit floats (IEEE round to nearest even, GGML / vt::cpu semantics) ----

VT_HD float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    const float v = mul_rn(static_cast<float>(mant), 5.9604644775390625e-8f);  // exact
    return sign ? -v : v;
  }
  return bits_to_float(sign | ((exp + 112) << 23) | (mant << 13));
}

VT_HD uint16_t fp32_to_fp16(float f) {
  uint32_t x = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u)
    return static_cast<uint16_t>(sign | 0x7e00 | static_cast<uint16_t>((ax >> 13) & 0x3ff));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);
  if (ax < 0x38800000u) {
    // Subnormal result: the float add rounds |f| to a multiple of 2^-24 (ties to even).
    const float t = add_rn(bits_to_float(ax), 0.5f);
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(float_to_bits(t) - 0x3f000000u));
  }
  ax += 0xc8000fffu + ((ax >> 13) & 1);
  return static_cast<uint16_t>(sign | static_cast<uint16_t>(ax >> 13));
}

VT_HD float bf16_to_fp32(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

VT_HD uint16_t fp32_to_bf16(float f) {
  const uint32_t x = float_to_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

// ---- units ----

// Units in a row of `cols` elements (cols is a multiple of kUnit, checked at upload).
VT_HD int64_t units_per_row(int64_t cols) { return cols / kUnit; }

VT_HD uint16_t load_u16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (static_cast<uint16_t>(p[1]) << 8));
}

// The 6-bit scale and min of sub-block j of a Q4_K super-block.
VT_HD void q4k_scale_min(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// Q6_K value (0..63) of element e of a super-block.
VT_HD int q6k_value(const BlockQ6_K& b, int e) {
  const int h = e / 128, k = (e % 128) / 32, l = e % 32;
  const int lo = (b.ql[64 * h + l + (k & 1) * 32] >> (4 * (k >> 1))) & 0xF;
  const int hi = (b.qh[32 * h + l] >> (2 * k)) & 3;
  return lo | (hi << 4);
}

// Decodes unit u of a row stored as T into w[0..32).
template <DType T>
VT_HD void decode_unit(const void* row, int64_t u, float* w) {
  if constexpr (T == DType::F32) {
    const float* r = static_cast<const float*>(row) + u * kUnit;
    for (int i = 0; i < kUnit; ++i) w[i] = r[i];
  } else if constexpr (T == DType::F16) {
    const uint16_t* r = static_cast<const uint16_t*>(row) + u * kUnit;
    for (int i = 0; i < kUnit; ++i) w[i] = fp16_to_fp32(r[i]);
  } else if constexpr (T == DType::BF16) {
    const uint16_t* r = static_cast<const uint16_t*>(row) + u * kUnit;
    for (int i = 0; i < kUnit; ++i) w[i] = bf16_to_fp32(r[i]);
  } else if constexpr (T == DType::Q8_0) {
    const BlockQ8_0& b = static_cast<const BlockQ8_0*>(row)[u];
    const float d = fp16_to_fp32(b.d);
    for (int i = 0; i < kUnit; ++i) w[i] = mul_rn(static_cast<float>(b.qs[i]), d);
  } else if constexpr (T == DType::Q4_0) {
    const BlockQ4_0& b = static_cast<const BlockQ4_0*>(row)[u];
    const float d = fp16_to_fp32(b.d);
    for (int j = 0; j < kUnit / 2; ++j) {
      w[j] = mul_rn(static_cast<float>((b.qs[j] & 0xF) - 8), d);
      w[j + 16] = mul_rn(static_cast<float>((b.qs[j] >> 4) - 8), d);
    }
  } else if constexpr (T == DType::Q4_1) {
    const BlockQ4_1& b = static_cast<const BlockQ4_1*>(row)[u];
    const float d = fp16_to_fp32(b.d), m = fp16_to_fp32(b.m);
    for (int j = 0; j < kUnit / 2; ++j) {
      w[j] = add_rn(mul_rn(static_cast<float>(b.qs[j] & 0xF), d), m);
      w[j + 16] = add_rn(mul_rn(static_cast<float>(b.qs[j] >> 4), d), m);
    }
  } else if constexpr (T == DType::Q4_K) {
    // Sub-block j of the super-block: nibble (j & 1) of bytes [32 (j / 2), +32).
    const BlockQ4_K& b = static_cast<const BlockQ4_K*>(row)[u / 8];
    const int j = static_cast<int>(u % 8);
    int sc, mn;
    q4k_scale_min(j, b.scales, &sc, &mn);
    const float d = mul_rn(fp16_to_fp32(b.d), static_cast<float>(sc));
    const float m = mul_rn(fp16_to_fp32(b.dmin), static_cast<float>(mn));
    const uint8_t* q = b.qs + 32 * (j / 2);
    const int shift = (j & 1) * 4;
    for (int l = 0; l < kUnit; ++l)
      w[l] = sub_rn(mul_rn(d, static_cast<float>((q[l] >> shift) & 0xF)), m);
  } else if constexpr (T == DType::Q6_K) {
    const BlockQ6_K& b = static_cast<const BlockQ6_K*>(row)[u / 8];
    const int e0 = static_cast<int>(u % 8) * kUnit;
    const float d = fp16_to_fp32(b.d);
    for (int l = 0; l < kUnit; ++l) {
      const int e = e0 + l;
      const float ds = mul_rn(d, static_cast<float>(b.scales[e / 16]));
      w[l] = mul_rn(ds, static_cast<float>(q6k_value(b, e) - 32));
    }
  }
}

// The dot of a decoded unit with 32 activations: one fused chain in element order.
VT_HD float dot_unit(const float* w, const float* x) {
  float s = 0.0f;
  for (int i = 0; i < kUnit; ++i) s = fma_rn(w[i], x[i], s);
  return s;
}

// What lane `lane` of a matmul warp accumulates for one output: the unit dots of units
// lane, lane + 32, ... in that order. The kernel inlines the same loop (decoding a unit
// once for several tokens); this form is for the tests.
template <DType T>
VT_HD float lane_partial(const void* row, const float* x, int64_t cols, int lane) {
  float acc = 0.0f;
  for (int64_t u = lane; u < units_per_row(cols); u += 32) {
    float w[kUnit];
    decode_unit<T>(row, u, w);
    acc = add_rn(acc, dot_unit(w, x + u * kUnit));
  }
  return acc;
}

// Host model of the warp butterfly (v += shfl_xor(v, 16), 8, 4, 2, 1; lane 0's value is
// kept): the order in which the kernels combine 32 lane partials.
inline float butterfly_sum_host(const float* lanes) {
  float v[32];
  for (int l = 0; l < 32; ++l) v[l] = lanes[l];
  for (int off = 16; off >= 1; off /= 2) {
    float n[32];
    for (int l = 0; l < 32; ++l) n[l] = v[l] + v[l ^ off];
    for (int l = 0; l < 32; ++l) v[l] = n[l];
  }
  return v[0];
}

}  // namespace vt::cuda
