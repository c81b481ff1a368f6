// Internal, ISA-explicit entry points of the elementwise/normalization/RoPE kernels and of
// paged attention. The public functions in kernels.h call these with isa(); tests and
// benchmarks call them with every ISA the machine supports to check each code path.
#pragma once

#include <cstdint>

#include "vt/cpu/isa.h"
#include "vt/cpu/kernels.h"

namespace vt::cpu {

// The ISAs this machine can run, lowest first (always includes kScalar), whatever VT_ISA
// selected for the process.
int available_isas(Isa* out);  // returns count (<= 3)

void layer_norm_isa(Isa isa, const float* x, int64_t ldx, const float* w, int64_t n_rows,
                    int64_t dim, float eps, float* y, int64_t ldy);
void rms_norm_isa(Isa isa, const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim,
                  float eps, float* y, int64_t ldy);
void silu_mul_isa(Isa isa, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                  int64_t n_tok, int64_t dim, float* out, int64_t ld_out);
void gelu_tanh_mul_isa(Isa isa, const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                       int64_t n_tok, int64_t dim, float* out, int64_t ld_out);
void softcap_isa(Isa isa, float* x, int64_t n, float cap);
void add_inplace_isa(Isa isa, float* y, const float* x, int64_t n);
void softmax_isa(Isa isa, float* x, int64_t n);
int64_t argmax_isa(Isa isa, const float* x, int64_t n);  // ops_extra.h's argmax
void rope_isa(Isa isa, float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim,
              const int32_t* positions, const float* inv_freq, RopeStyle style, int rot_dim = 0,
              float mscale = 1.0f);
void paged_attention_isa(Isa isa, const float* q, int64_t ldq, int n_heads,
                         const KvLayerView& cache, const AttnBatch& batch, float scale, float* out,
                         int64_t ldo, ThreadPool& pool);

// Per-ISA instantiations (defined in ops_avx2.cpp / ops_avx512.cpp / attention_*.cpp).
#define VT_OPS_DECLARE_ISA(ns)                                                                     \
  namespace ns {                                                                                   \
  void layer_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim,        \
                  float eps, float* y, int64_t ldy);                                               \
  void rms_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim,          \
                float eps, float* y, int64_t ldy);                                                 \
  void silu_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n_tok, \
                int64_t dim, float* out, int64_t ld_out);                                          \
  void gelu_tanh_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,           \
                     int64_t n_tok, int64_t dim, float* out, int64_t ld_out);                      \
  void softcap(float* x, int64_t n, float cap);                                                    \
  void add_inplace(float* y, const float* x, int64_t n);                                           \
  void softmax(float* x, int64_t n);                                                               \
  int64_t argmax(const float* x, int64_t n);                                                       \
  void rope(float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim,                        \
            const int32_t* positions, const float* inv_freq, RopeStyle style, int rot_dim,         \
            float mscale);                                                                         \
  void paged_attention(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,         \
                       const AttnBatch& batch, float scale, float* out, int64_t ldo,               \
                       ThreadPool& pool);                                                          \
  }
VT_OPS_DECLARE_ISA(scalar_impl)
VT_OPS_DECLARE_ISA(avx2_impl)
VT_OPS_DECLARE_ISA(avx512_impl)
#undef VT_OPS_DECLARE_ISA

}  // namespace vt::cpu
