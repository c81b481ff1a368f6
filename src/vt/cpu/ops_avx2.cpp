// AVX2+FMA instantiation of the elementwise / normalization / RoPE kernels.
#include "vt/cpu/ops.h"
#include "vt/cpu/ops_kernels.h"

namespace vt::cpu::avx2_impl {

void layer_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
                float* y, int64_t ldy) {
  layer_norm_impl<VecAvx2>(x, ldx, w, n_rows, dim, eps, y, ldy);
}
void rms_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
              float* y, int64_t ldy) {
  rms_norm_impl<VecAvx2>(x, ldx, w, n_rows, dim, eps, y, ldy);
}
void silu_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n_tok,
              int64_t dim, float* out, int64_t ld_out) {
  silu_mul_impl<VecAvx2>(gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out);
}
void gelu_tanh_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                   int64_t n_tok, int64_t dim, float* out, int64_t ld_out) {
  silu_mul_impl<VecAvx2, true>(gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out);
}
void softcap(float* x, int64_t n, float cap) { softcap_inplace<VecAvx2>(x, n, cap); }
void add_inplace(float* y, const float* x, int64_t n) { add_inplace_impl<VecAvx2>(y, x, n); }
void softmax(float* x, int64_t n) { softmax_impl<VecAvx2>(x, n); }
int64_t argmax(const float* x, int64_t n) { return argmax_impl<VecAvx2>(x, n); }
void rope(float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim, const int32_t* positions,
          const float* inv_freq, RopeStyle style, int rot_dim, float mscale) {
  rope_impl<VecAvx2>(x, ld, n_tok, n_heads, head_dim, positions, inv_freq, style, rot_dim, mscale);
}

}  // namespace vt::cpu::avx2_impl
