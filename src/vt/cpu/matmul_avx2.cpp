// AVX2 instantiation of the matmul kernels in matmul_simd.h (maddubs/madd instead of VNNI,
// 16 vector registers, so smaller tiles).
#define VT_MM_NS avx2
#define VT_MM_VNNI 0
#define VT_MM_RF 2
#define VT_MM_TF 2
#define VT_MM_RK 1
#define VT_MM_TK 4
#include "vt/cpu/matmul_simd.h"
// clang-format off
#include "vt/cpu/matmul_act_simd.h"
// clang-format on

namespace vt::cpu {

void matmul_rows_avx2(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                      int64_t ldy) {
  avx2::matmul_rows(w, a, r0, r1, y, ldy);
}

void quantize_act_q8_0_avx2(const float* x, int64_t n, int8_t* qs, float* d, float* s,
                            int32_t* xsum) {
  avx2::quant_act_q8_0(x, n, qs, d, s, xsum);
}

void bf16_round_row_avx2(const float* x, int64_t n, int64_t ldr, uint16_t* out) {
  avx2::bf16_round_row(x, n, ldr, out);
}

void quantize_act_q8_k_avx2(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums) {
  avx2::quant_act_q8_k(x, n, qs, d, bsums);
}

}  // namespace vt::cpu
