// Internals of the matrix-product kernels shared by matmul*.cpp, quant.cpp and the tests:
// activation quantization formats, per-ISA entry points, and a way to force an ISA.
//
// Numerics contract (what makes results batch-invariant and identical across ISAs):
// every (weight row, activation row) dot product is computed in a fixed set of lanes whose
// assignment and reduction tree depend only on the row length:
//   * F32 weights: 16 fp32 lanes; element i goes to lane i % 16, each lane accumulates with
//     fma in index order, then lanes reduce as 16->8->4->2->1 (v[l] + v[l + half]).
//   * BF16 / F16 weights: one fp32 chain per (row, token) over the columns, BF16 with
//     activations rounded to bf16 and vdpbf16ps's arithmetic; see matmul_half.h.
//   * Q8_0 / Q4_0 / Q4_1 weights: per 32-element block b, the exact integer dot I_b of the
//     weight integers (Q8_0: w, Q4_0: q - 8, Q4_1: q) with the activation's int8 values,
//     then one fp32 chain per (row, token) in block order:
//     acc = fma(d_w[b] * d_x[b], float(I_b), acc). Q4_1 adds a second chain
//     macc = fma(m_w[b], s_x[b], macc) and returns acc + macc. (I_b is exact however it is
//     summed, so the packed 16-row kernels, the row-major reference and every ISA agree.)
//   * Q4_K / Q5_K / Q6_K weights (x Q8_K activations: one fp32 scale d_x and 16-element
//     sums bs per 256 elements): per super-block b, the exact integer dot I_j of each
//     sub-block j (Q4_K / Q5_K: 8 of 32 elements, unsigned 4 / 5-bit q; Q6_K: 16 groups g
//     of 16, q - 32 via I_g = dot(q, x) - 32 * bs[g]) is folded in sub-block order into
//       F_b = fma(float(sc_j), float(I_j), F_b)   (F_b from 0; |I_j| < 2^17, float exact)
//     and then, one fp32 chain per (row, token) in super-block order,
//       acc = fma(d_w[b] * d_x[b], F_b, acc), and for Q4_K / Q5_K
//       acc = fma(-(dmin_w[b] * d_x[b]), float(M_b), acc), M_b = sum_j m_j * (bs[2j] +
//       bs[2j + 1]) exact.
//     The scale goes through an fma rather than an integer multiply because the int8 dot
//     products own the vector multiply port: the kernels read I_j off a dot accumulator
//     that started at the bits of 1.5 * 2^23 (one float subtraction, exact for |I_j| <
//     2^22), so applying 16 rows' sub-block scales costs two float operations on the
//     other port instead of a vpmulld (two multiply-port uops). Relative to the exact
//     product of the quantized operands the error is at most
//     (n_sub + 2 nb + 3) * 2^-24 * sum(|d sc q x| + |dmin m x|) (Q6_K: |d sc (q - 32) x|),
//     n_sub = 8 or 16: one rounding per fma of F_b, and for d_w * d_x and each acc fma.
//     The activations stay GGML's Q8_K (one scale per 256) rather than Q8_0 (one per 32):
//     it is what llama.cpp multiplies K-quants with, so our logits track the reference's
//     quantization noise instead of adding a different one, and the 16-element sums it
//     carries are exactly what the mins and the Q6_K offset need.
//   * Q5_0 / Q5_1 / IQ4_NL / MXFP4 weights: the Q8_0-family chain, with weight integers
//     Q5_0: q - 16, Q5_1: q (plus Q4_1's second chain for the mins), IQ4_NL: kIQ4Values[q],
//     MXFP4: kMXFP4Values[q] (the e2m1 values doubled) with d_w[b] = 2^(e_b - 128), the
//     block's E8M0 exponent as an exact fp32 (a denormal for e_b = 0 / 1):
//     acc = fma(d_w[b] * d_x[b], float(I_b), acc), which is llama.cpp's
//     ggml_vec_dot_mxfp4_q8_0 arithmetic (d = fp16(y.d) * e8m0_half(x.e); sumf += d * sumi).
//   * Q2_K / Q3_K / IQ4_XS weights: per super-block one exact integer I_b = sum over its
//     groups of scale_g x (exact integer dot of the group's weights with the activation's
//     int8 values) (Q2_K: 16-element groups of 0..3 with 4-bit scales; Q3_K: 16-element
//     groups of -4..3 with signed 6-bit scales; IQ4_XS: 32-element sub-blocks of
//     kIQ4Values[q] with signed 6-bit scales), then one fp32 chain per (row, token) in block
//     order: acc = fma(d_w[b] * d_x[b], float(I_b), acc); Q2_K then adds its mins,
//     acc = fma(-(dmin_w[b] * d_x[b]), float(sum_g min_g * bsum_g), acc), as the K-quants
//     with mins do. (The packed 16-row kernels hold one row per int32 lane.)
// The scalar, AVX2 and AVX-512 paths all follow this, so their results are bit-identical.
#pragma once

#include <cstdint>

#include "vt/cpu/isa.h"
#include "vt/cpu/kernels.h"

namespace vt::cpu {

// Activations as the kernels read them. For F32 / F16 weights `x` is used as is; for BF16
// weights the rows are rounded to bf16 once per call (fmt BF16, matmul_half.h); for
// quantized weights they are quantized once per call into Q8_0 (32-element blocks, for
// Q8_0/Q4_0/Q4_1/Q5_0/Q5_1/IQ4_NL/MXFP4 weights) or Q8_K (256-element blocks, for
// Q4_K/Q5_K/Q6_K/Q2_K/Q3_K/IQ4_XS weights).
struct ActView {
  int64_t n_tok = 0;
  int64_t cols = 0;
  const float* x = nullptr;  // float activations, row t at x + t * ldx
  int64_t ldx = 0;
  DType fmt = DType::F32;          // F32, BF16, Q8_0 or Q8_K
  const int8_t* qs = nullptr;      // token t: qs + t * cols
  const float* d = nullptr;        // token t: d + t * n_blocks (block scales)
  const float* s = nullptr;        // Q8_0 only: fp16-rounded d * sum(qs) per block (for Q4_1)
  const int32_t* xsum = nullptr;   // Q8_0 only: exact sum(qs) per block (for Q8_0 / Q4_0)
  const int16_t* bsums = nullptr;  // Q8_K only: token t: bsums + t * n_blocks * 16
  // Q8_K only: the 32-element sub-block sums (bsums pairwise) of token t, super-block b at
  // bsum_pairs + (t * n_blocks + b) * 8, sub-blocks 2k and 2k + 1 side by side (one int32 of
  // two int16 for the K-quant tiles' min sums; |sum| <= 32 * 127). Made once per activation.
  const int16_t* bsum_pairs = nullptr;
  int64_t n_blocks = 0;
  // BF16 (layout in matmul_half.h): fp32 values (xr; rounded to bf16 when `rounded`, the
  // vdpbf16ps contract) or bf16 pairs for vdpbf16ps (xp), cols padded to ldr (even), in
  // tiles of `tile` tokens.
  bool rounded = false;
  const float* xr = nullptr;
  const uint32_t* xp = nullptr;
  int64_t ldr = 0;
  int64_t tile = 1;
};

// Packed Q8_0 / Q4_0 / Q4_1 (and Q5_0 / Q5_1 / IQ4_NL / MXFP4) blocks (layout described in
// pack.cpp): per block index, the kPackRows rows' fp16 scales (and mins; MXFP4: E8M0
// exponent bytes), Q5's fifth-bit plane, then their quant bytes in 64-byte chunks.
struct PackedLayout {
  int qbytes;      // quant bytes per row block (Q5: the nibbles only)
  int hdr;         // scale (and min) bytes per packed block
  int src_block;   // GGUF block bytes
  uint8_t flip;    // XOR applied to quant bytes (Q8_0: stored as w + 128)
  int qh = 0;      // Q5_0 / Q5_1: fifth-bit plane bytes per packed block, right after hdr
  int dbytes = 2;  // bytes of one row's scale (fp16; MXFP4: the 1-byte exponent)
  constexpr int block() const { return hdr + qh + static_cast<int>(kPackRows) * qbytes; }
  constexpr int chunks() const { return hdr + qh; }  // offset of the first quant chunk
};
constexpr PackedLayout packed_layout(DType t) {
  return t == DType::Q8_0     ? PackedLayout{32, 32, 34, 0x80}
         : t == DType::Q4_0   ? PackedLayout{16, 32, 18, 0}
         : t == DType::Q5_0   ? PackedLayout{16, 32, 22, 0, 64}
         : t == DType::Q5_1   ? PackedLayout{16, 64, 24, 0, 64}
         : t == DType::IQ4_NL ? PackedLayout{16, 32, 18, 0}
         : t == DType::MXFP4  ? PackedLayout{16, 16, 17, 0, 0, 1}
                              : PackedLayout{16, 64, 20, 0};  // Q4_1
}

// Q2_K / Q3_K / IQ4_XS are packed field by field (pack_zoo.cpp); pack_groups / unpack_row
// hand them to these.
bool zoo_k_packed(DType t);
void pack_groups_zoo(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst);
void unpack_row_zoo(const WeightView& w, int64_t r, void* out);

// Activation format a weight type is multiplied with.
DType act_format(DType weight);

// GGML's x86 activation quantizers: Q8_0 (d = amax / 127 stored as fp16, values
// rint(x * 127 / amax)) with s = fp16(d * sum) as Q8_1 carries it, and Q8_K
// (d = max / -127 in fp32, values rint(x * -127 / max) capped at 127, 16-element sums).
// xsum gets the exact integer sum of each Q8_0 block.
void quantize_act_q8_0(const float* x, int64_t n, int8_t* qs, float* d, float* s, int32_t* xsum);
void quantize_act_q8_k(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums);

// The same quantizers vectorized (bit-identical results); the dispatcher picks by ISA.
void quantize_act_q8_0_avx2(const float* x, int64_t n, int8_t* qs, float* d, float* s,
                            int32_t* xsum);
void quantize_act_q8_k_avx2(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums);
void quantize_act_q8_0_avx512(const float* x, int64_t n, int8_t* qs, float* d, float* s,
                              int32_t* xsum);
void quantize_act_q8_k_avx512(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums);

// y rows [r0, r1) for every token of `a`. One per ISA; results are bit-identical. For a
// packed weight r0 is a multiple of kPackRows. The SIMD paths hand row-major Q8_0-family
// weights to the scalar one (the model packs them at load).
void matmul_rows_scalar(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                        int64_t ldy);
void matmul_rows_avx2(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                      int64_t ldy);
void matmul_rows_avx512(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                        int64_t ldy);
// The scalar reference dot of one row (GGUF block bytes) with token t, for the types of
// dtype_zoo.h (matmul_zoo_scalar.cpp).
float dot_zoo_scalar(DType type, const void* row, const ActView& a, int64_t t);

// The public matmul / matmul_multi with the ISA given instead of detected (tests, benches).
// `isa` must not exceed what the CPU supports.
void matmul_isa(Isa isa, const WeightView& w, const float* x, int64_t ldx, int64_t n_tok, float* y,
                int64_t ldy, ThreadPool& pool);
void matmul_multi_isa(Isa isa, const MatmulOut* outs, int n_outs, const float* x, int64_t ldx,
                      int64_t n_tok, ThreadPool& pool);

}  // namespace vt::cpu
