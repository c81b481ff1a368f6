// The __host__ __device__ vocabulary of the CUDA backend's numeric headers: the VT_HD
// qualifier, bit casts, and arithmetic helpers that pin down rounding.
//
// These headers compile with nvcc (device and host passes) and with plain g++ (the CPU
// build's tests include them to check the per-block numerics against vt::cpu bit for bit).
// nvcc contracts a * b + c into one fma by default; the CPU code rounds the product
// first. Where the two must agree bit for bit (dequantization, RoPE, the final scaling of
// a norm) the code uses mul_rn / add_rn / sub_rn, which are separately rounded on both
// sides; where a fused multiply-add is intended it says fma_rn, fused on both sides.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define VT_HD __host__ __device__ __forceinline__
#else
#define VT_HD inline
#endif

namespace vt::cuda {

VT_HD float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

VT_HD uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

VT_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

VT_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

VT_HD float sub_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

VT_HD float div_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

VT_HD float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

VT_HD bool is_nan(float x) { return x != x; }

}  // namespace vt::cuda
