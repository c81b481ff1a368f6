// Elementwise / normalization / RoPE: the scalar instantiation and the public entry
// points of kernels.h, which dispatch on isa() once per call.
#include "vt/cpu/ops.h"

#include <algorithm>
#include <array>

#include "vt/cpu/ops_kernels.h"

namespace vt::cpu {

namespace scalar_impl {
void layer_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
                float* y, int64_t ldy) {
  layer_norm_impl<VecScalar>(x, ldx, w, n_rows, dim, eps, y, ldy);
}
void rms_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
              float* y, int64_t ldy) {
  rms_norm_impl<VecScalar>(x, ldx, w, n_rows, dim, eps, y, ldy);
}
void silu_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n_tok,
              int64_t dim, float* out, int64_t ld_out) {
  silu_mul_impl<VecScalar>(gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out);
}
void gelu_tanh_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                   int64_t n_tok, int64_t dim, float* out, int64_t ld_out) {
  silu_mul_impl<VecScalar, true>(gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out);
}
void softcap(float* x, int64_t n, float cap) { softcap_inplace<VecScalar>(x, n, cap); }
void add_inplace(float* y, const float* x, int64_t n) { add_inplace_impl<VecScalar>(y, x, n); }
void softmax(float* x, int64_t n) { softmax_impl<VecScalar>(x, n); }
int64_t argmax(const float* x, int64_t n) { return argmax_impl<VecScalar>(x, n); }
void rope(float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim, const int32_t* positions,
          const float* inv_freq, RopeStyle style, int rot_dim, float mscale) {
  rope_impl<VecScalar>(x, ld, n_tok, n_heads, head_dim, positions, inv_freq, style, rot_dim,
                       mscale);
}
}  // namespace scalar_impl

int available_isas(Isa* out) {
  int n = 0;
  out[n++] = Isa::kScalar;
  if (hardware_isa() != Isa::kScalar) out[n++] = Isa::kAvx2;
  if (hardware_isa() == Isa::kAvx512) out[n++] = Isa::kAvx512;
  return n;
}

#define VT_DISPATCH(isa_value, call) \
  switch (isa_value) {               \
    case Isa::kAvx512:               \
      return avx512_impl::call;      \
    case Isa::kAvx2:                 \
      return avx2_impl::call;        \
    default:                         \
      return scalar_impl::call;      \
  }

void layer_norm_isa(Isa i, const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim,
                    float eps, float* y, int64_t ldy) {
  VT_DISPATCH(i, layer_norm(x, ldx, w, n_rows, dim, eps, y, ldy));
}
void rms_norm_isa(Isa i, const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim,
                  float eps, float* y, int64_t ldy) {
  VT_DISPATCH(i, rms_norm(x, ldx, w, n_rows, dim, eps, y, ldy));
}
void silu_mul_isa(Isa i, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                  int64_t n_tok, int64_t dim, float* out, int64_t ld_out) {
  VT_DISPATCH(i, silu_mul(gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out));
}
void gelu_tanh_mul_isa(Isa i, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                       int64_t n_tok, int64_t dim, float* out, int64_t ld_out) {
  VT_DISPATCH(i, gelu_tanh_mul(gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out));
}
void softcap_isa(Isa i, float* x, int64_t n, float cap) { VT_DISPATCH(i, softcap(x, n, cap)); }
void add_inplace_isa(Isa i, float* y, const float* x, int64_t n) {
  VT_DISPATCH(i, add_inplace(y, x, n));
}
void softmax_isa(Isa i, float* x, int64_t n) { VT_DISPATCH(i, softmax(x, n)); }
int64_t argmax_isa(Isa i, const float* x, int64_t n) { VT_DISPATCH(i, argmax(x, n)); }
void rope_isa(Isa i, float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim,
              const int32_t* positions, const float* inv_freq, RopeStyle style, int rot_dim,
              float mscale) {
  VT_DISPATCH(i,
              rope(x, ld, n_tok, n_heads, head_dim, positions, inv_freq, style, rot_dim, mscale));
}
void paged_attention_isa(Isa i, const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                         const AttnBatch& batch, float scale, float* out, int64_t ldo,
                         ThreadPool& pool) {
  VT_DISPATCH(i, paged_attention(q, ldq, n_heads, cache, batch, scale, out, ldo, pool));
}
#undef VT_DISPATCH

void rms_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
              float* y, int64_t ldy) {
  rms_norm_isa(isa(), x, ldx, w, n_rows, dim, eps, y, ldy);
}
void layer_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
                float* y, int64_t ldy) {
  layer_norm_isa(isa(), x, ldx, w, n_rows, dim, eps, y, ldy);
}
void silu_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n_tok,
              int64_t dim, float* out, int64_t ld_out) {
  silu_mul_isa(isa(), gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out);
}
void gelu_tanh_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                   int64_t n_tok, int64_t dim, float* out, int64_t ld_out) {
  gelu_tanh_mul_isa(isa(), gate, ld_gate, up, ld_up, n_tok, dim, out, ld_out);
}
void gelu_tanh(float* x, int64_t ld, int64_t n_tok, int64_t dim) {
  // A row of ones read by every token (ld_up 0), a chunk of the row at a time.
  static const std::array<float, 256> kOnes = [] {
    std::array<float, 256> a{};
    a.fill(1.0f);
    return a;
  }();
  const Isa i = isa();
  for (int64_t c = 0; c < dim; c += static_cast<int64_t>(kOnes.size()))
    gelu_tanh_mul_isa(i, x + c, ld, kOnes.data(), 0, n_tok,
                      std::min<int64_t>(static_cast<int64_t>(kOnes.size()), dim - c), x + c, ld);
}
void softcap(float* x, int64_t n, float cap) { softcap_isa(isa(), x, n, cap); }
void add_inplace(float* y, const float* x, int64_t n) { add_inplace_isa(isa(), y, x, n); }
void softmax(float* x, int64_t n) { softmax_isa(isa(), x, n); }
void rope(float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim, const int32_t* positions,
          const float* inv_freq, RopeStyle style, int rot_dim, float mscale) {
  rope_isa(isa(), x, ld, n_tok, n_heads, head_dim, positions, inv_freq, style, rot_dim, mscale);
}
void paged_attention(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                     const AttnBatch& batch, float scale, float* out, int64_t ldo,
                     ThreadPool& pool) {
  paged_attention_isa(isa(), q, ldq, n_heads, cache, batch, scale, out, ldo, pool);
}

}  // namespace vt::cpu
