// AVX-512 (VNNI) instantiation of the matmul kernels in matmul_simd.h: 32 vector registers
// allow 16-row x 8-token tiles for the packed Q8_0 family.
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

namespace vt::cpu {

void matmul_rows_avx512(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                        int64_t ldy) {
  avx512::matmul_rows(w, a, r0, r1, y, ldy);
}

void quantize_act_q8_0_avx512(const float* x, int64_t n, int8_t* qs, float* d, float* s,
                              int32_t* xsum) {
  avx512::quant_act_q8_0(x, n, qs, d, s, xsum);
}

void quantize_act_q8_k_avx512(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums) {
  avx512::quant_act_q8_k(x, n, qs, d, bsums);
}

}  // namespace vt::cpu
