// AVX-512 (VNNI) instantiation of the matmul kernels in matmul_simd.h: 32 vector registers
// allow 16-row x 8-token tiles for the packed Q8_0 family and 2 x 16-row x 8-token tiles for
// BF16 / F16. Also the start-up probe of vdpbf16ps (matmul_half.h).
#define VT_MM_NS avx512
#define VT_MM_VNNI 1
#define VT_MM_RF 2
#define VT_MM_TF 4
#define VT_MM_RK 2
#define VT_MM_TK 4
#include "vt/cpu/matmul_simd.h"
// clang-format off
#include "vt/cpu/matmul_act_simd.h"
// clang-format on

#include <bit>

namespace vt::cpu {

void matmul_rows_avx512(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                        int64_t ldy) {
  avx512::matmul_rows(w, a, r0, r1, y, ldy);
}

void quantize_act_q8_0_avx512(const float* x, int64_t n, int8_t* qs, float* d, float* s,
                              int32_t* xsum) {
  avx512::quant_act_q8_0(x, n, qs, d, s, xsum);
}

void bf16_round_row_avx512(const float* x, int64_t n, int64_t ldr, uint16_t* out) {
  avx512::bf16_round_row(x, n, ldr, out);
}

void quantize_act_q8_k_avx512(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums) {
  avx512::quant_act_q8_k(x, n, qs, d, bsums);
}

}  // namespace vt::cpu

namespace vt::cpu {

int bf16_probe_avx512() {
  for (int i = 0; i < kBf16CaseCount; ++i) {
    const Bf16Case& c = kBf16Cases[i];
    __m512 acc = _mm512_setzero_ps();
    for (int p = 0; p < 4; p += 2) {
      const auto w = static_cast<int>(c.w[p] | static_cast<uint32_t>(c.w[p + 1]) << 16);
      const auto x = static_cast<int>(c.x[p] | static_cast<uint32_t>(c.x[p + 1]) << 16);
      acc = _mm512_dpbf16_ps(acc, reinterpret_cast<__m512bh>(_mm512_set1_epi32(w)),
                             reinterpret_cast<__m512bh>(_mm512_set1_epi32(x)));
    }
    float got = _mm512_cvtss_f32(acc);
    if (got != got) got = std::bit_cast<float>(kCanonicalNan);
    if (std::bit_cast<uint32_t>(got) != std::bit_cast<uint32_t>(bf16_case_result(c))) return i;
  }
  return -1;
}

}  // namespace vt::cpu
