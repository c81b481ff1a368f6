// Scalar fp16 / bf16 <-> fp32 conversions with GGML's (IEEE round-to-nearest-even)
// semantics. SIMD paths convert with F16C / shifts, which agree with these bit for bit.
#include <bit>
#include <cstdint>

#include "vt/cpu/kernels.h"

namespace vt::cpu {

float fp16_to_fp32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    // Subnormal: mant * 2^-24 is exact in fp32.
    const float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t fp32_to_fp16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return sign | 0x7e00 | static_cast<uint16_t>((ax >> 13) & 0x3ff);  // qNaN
  if (ax >= 0x477ff000u) return sign | 0x7c00;  // rounds to +-inf (includes inf)
  if (ax < 0x38800000u) {
    // Result is subnormal (or the smallest normal after rounding): adding 0.5 makes the FPU
    // round |f| to a multiple of 2^-24 with ties-to-even; the low mantissa bits are the answer.
    const float t = std::bit_cast<float>(ax) + 0.5f;
    return sign | static_cast<uint16_t>(std::bit_cast<uint32_t>(t) - 0x3f000000u);
  }
  ax += 0xc8000fffu + ((ax >> 13) & 1);  // rebias exponent by -112, round to nearest even
  return sign | static_cast<uint16_t>(ax >> 13);
}

float bf16_to_fp32(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t fp32_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // qNaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1)) >> 16);
}

}  // namespace vt::cpu
