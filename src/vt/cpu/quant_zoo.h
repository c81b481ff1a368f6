// Element decoders of the less common weight types (dtype_zoo.h), shared by their
// dequantizers (quant_zoo.cpp) and their scalar reference dot products
// (matmul_zoo_scalar.cpp), and the row (de)quantizer entry points quant.cpp dispatches to.
#pragma once

#include <cstdint>
#include <cstring>

#include "vt/cpu/kernels.h"

namespace vt::cpu {

// Handle the types of dtype_zoo.h; false for any other type.
bool dequantize_row_zoo(DType t, const void* src, float* dst, int64_t n);
bool quantize_row_zoo(DType t, const float* src, void* dst, int64_t n);

// Q2_K element e (0..255) of a super-block: 0..3.
inline int q2k_value(const BlockQ2_K& b, int e) {
  return (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
}

// Q3_K element e: -4..3 (the 2 low bits, minus 4 when the hmask bit is clear).
inline int q3k_value(const BlockQ3_K& b, int e) {
  const int lo = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
  return lo - (((b.hmask[e % 32] >> (e / 32)) & 1) ? 0 : 4);
}

// Q3_K scale of 16-element group g: -32..31. Low 4 bits: nibble g / 8 of byte g % 8;
// high 2 bits: bits 2 * (g / 4) of byte 8 + g % 4.
inline int q3k_scale(const uint8_t* scales, int g) {
  const int lo = (scales[g % 8] >> (4 * (g / 8))) & 0xF;
  const int hi = (scales[8 + g % 4] >> (2 * (g / 4))) & 3;
  return (lo | (hi << 4)) - 32;
}

// IQ4_XS scale of 32-element sub-block ib: -32..31.
inline int iq4xs_scale(const BlockIQ4_XS& b, int ib) {
  const int lo = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
  const int hi = (b.scales_h >> (2 * ib)) & 3;
  return (lo | (hi << 4)) - 32;
}

// MXFP4's block scale 2^(e - 128) as an exact fp32: a normal number (exponent field e - 1)
// for e >= 2, the denormals 2^-127 / 2^-128 for e = 1 / 0 (GGML's ggml_e8m0_to_fp32_half).
// The SIMD kernels build the same bits with integer ops.
inline float e8m0_half(uint8_t e) {
  const uint32_t bits = e < 2 ? uint32_t{0x00200000} << e : static_cast<uint32_t>(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace vt::cpu
