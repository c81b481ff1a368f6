// 16-bit float weights (BF16, F16): their packed layouts, the numerics contract of their
// products, and the entry points of their kernels (scalar: matmul_half.cpp; AVX2 and
// AVX-512: matmul_half_simd.h, compiled into matmul_avx2.cpp / matmul_avx512.cpp).
//
// Packed layout (pack_half.cpp): rows in groups of kPackRows (16), rows past the end zero.
//   BF16: per column pair k (columns 2k and 2k + 1; an odd last column is paired with a
//         zero), 64 bytes: row j's two bf16 at bytes 4j..4j+3, column 2k in the low half.
//         One vdpbf16ps against a broadcast activation pair advances all 16 rows.
//         The packed view's row_stride is 2 * round_up(cols, 2) bytes.
//   F16:  per column k, 32 bytes: row j's fp16 at bytes 2j (one vcvtph2ps gives 16 rows).
//         The packed view's row_stride is 2 * cols bytes.
// A lane of a vector is a row, so a tile needs no horizontal sums, and each (row, token)
// pair is one fp32 chain over the columns whatever the tile shape or ISA.
//
// BF16 has two contracts, chosen per process (bf16_round_activations, VT_BF16_ACTIVATIONS):
//
// BF16, fp32 activations (the library's default; `vllm --dtype float32`): what transformers
//   computes when it runs a bf16 checkpoint in fp32, so the fp32 reference gates hold.
//   Per (row, token): acc = +0, then for k = 0, 1, ...:
//     acc = fma(w[2k+1], x[2k+1], acc);  acc = fma(w[2k], x[2k], acc)
//   (IEEE fp32 fma, default MXCSR; the same order as below, so one kernel serves both);
//   NaN results stored as 0x7fc00000. Costs the same as the emulation of the other one.
//
// BF16, bf16 activations (VT_BF16_ACTIVATIONS=bf16; `vllm`'s default, --dtype auto /
//   bfloat16, as vLLM computes a bf16 checkpoint in bf16): that of AVX512-BF16's vdpbf16ps, the
//   fast path where the CPU has it (twice the multiply-adds per instruction of fp32 fma).
//   Activations are rounded to bf16 once per call (bf16_act_round): round to nearest even,
//   fp32 denormals become zeros of their sign, NaN becomes 0x7fc0.
//   Per (row, token): acc = +0, then for k = 0, 1, ...
//       acc = F(w[2k+1], x[2k+1], acc);  acc = F(w[2k], x[2k], acc)
//   (the odd column first, as vdpbf16ps orders the two halves of a pair). F(a, b, c) is an
//   fp32 fused multiply-add with denormal inputs read as zeros of their sign (DAZ), round
//   to nearest even, and a result that is tiny after rounding (|a*b + c| rounded to 24
//   bits with unbounded exponent is below FLT_MIN, the x86 underflow rule) replaced by a
//   zero of its sign (FTZ). A product of two bf16 is exact in fp32 (8 x 8 significant bits)
//   unless it over- or underflows, so F adds the exact product and rounds once.
//   y = acc, except that every NaN is stored as 0x7fc00000.
//   Paths: vdpbf16ps (one instruction = both F steps of a pair), used only when a probe at
//   start-up (bf16_native_dot) finds it equal to bf16_fma on inputs that tell the possible
//   readings of the manual apart; AVX-512F / AVX2 without it: two vfmadd per pair with
//   MXCSR.FTZ|DAZ set for the kernel's duration; scalar: bf16_fma, DAZ and FTZ spelled out.
//
// F16 contract: activations stay fp32. fp16 weights carry 11 significant bits: rounding x
//   to bf16 (8 bits) would make every product coarser than the stored weights, rounding it
//   to fp16 would overflow past 65504, and x86 before AVX512-FP16 has no fp16 dot product
//   anyway. An fp16 x fp32 product is not exact in fp32, so each step is a fused
//   multiply-add, which rounds once and therefore gives the same bits everywhere.
//   Per (row, token): acc = +0, then for k = 0, 1, ...: acc = fma(float(w[k]), x[k], acc)
//   (IEEE: round to nearest even, gradual underflow, i.e. the default MXCSR). fp16 -> fp32
//   is exact (F16C or fp16_to_fp32). NaN results are stored as 0x7fc00000.
#pragma once

#include <cstdint>

#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {

inline bool is_half(DType t) { return t == DType::BF16 || t == DType::F16; }

// ---- packed layout (pack_half.cpp) ----
size_t half_packed_row_bytes(DType t, int64_t cols);
void pack_groups_half(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst);
void unpack_row_half(const WeightView& w, int64_t r, void* out);

// ---- the contract's scalar operations (kernels, probe, tests) ----
uint16_t bf16_act_round(float x);
// F(a, b, c) above; a and b are bf16 values widened to fp32.
float bf16_fma(float a, float b, float c);
inline constexpr uint32_t kCanonicalNan = 0x7fc00000u;

// Crafted 4-column BF16 dot products (bf16 bits; columns 0-1 set up the accumulator,
// columns 2-3 are the step under test) whose results tell apart the possible readings of
// vdpbf16ps's definition: the order of a pair's halves, a rounding per product or per pair,
// DAZ, FTZ after or before rounding, FTZ between the halves, overflow inside the fused
// multiply-add, signed zeros, NaN. `expect` is the result the contract above gives (fp32
// bits); the tests check bf16_fma and every path against it, the probe checks vdpbf16ps.
struct Bf16Case {
  uint16_t w[4], x[4];
  uint32_t expect;
  const char* what;
};
extern const Bf16Case kBf16Cases[];
extern const int kBf16CaseCount;
// The contract's result for a case, from bf16_fma, activations taken as they are.
float bf16_case_result(const Bf16Case& c);

// Whether BF16 products round their activations to bf16 (the vdpbf16ps contract) or keep
// them fp32: VT_BF16_ACTIVATIONS=bf16 | fp32 (default fp32), read once; the setter is for
// tests and benches and applies to later calls.
bool bf16_round_activations();
void set_bf16_round_activations(bool on);

// ---- activations ----
// The activations of a BF16 product on `isa`: with bf16_round_activations(), rounded to
// bf16, as bf16 pairs (a.xp) for vdpbf16ps, else as fp32 values (a.xr) the emulation
// broadcasts; otherwise the fp32 values as they are (a.xr). Rows are padded with a
// zero to an even length a.ldr and stored in tiles of a.tile tokens (the ISA's tile width),
// pair-major inside a tile so that one kernel step reads one contiguous run: element i of
// token t, in the tile of n tokens that starts at token t0, is element
//   t0 * ldr + (i / 2) * 2n + 2 (t - t0) + (i & 1)
// (xp holds the pairs, i.e. the same index / 2). Scratch is per calling thread.
// `round`: WeightView::round_act of the weights (-1: the process default).
ActView prepare_act_bf16(Isa isa, const float* x, int64_t ldx, int64_t n_tok, int64_t cols,
                         ThreadPool& pool, int round = -1);
// Tokens per tile of the BF16 / F16 kernels (and of the activation layout above).
constexpr int kHalfTileAvx512 = 6;  // 4 groups x 6 tokens: 24 of the 32 vector registers
constexpr int kHalfTileAvx2 = 4;    // 2 halves of 1 group x 4 tokens: 8 of the 16
// One row of bf16_act_round (n elements, then zeros up to ldr), per ISA.
void bf16_round_row_avx2(const float* x, int64_t n, int64_t ldr, uint16_t* out);
void bf16_round_row_avx512(const float* x, int64_t n, int64_t ldr, uint16_t* out);

// Whether BF16 products on the AVX-512 path use vdpbf16ps: the CPU has AVX512-BF16 and
// the start-up probe agreed with bf16_fma. force_bf16_emulation(true) turns it off for
// later calls (tests and benches compare the two AVX-512 paths).
bool bf16_native_dot();
void force_bf16_emulation(bool on);
// The probe itself (matmul_avx512.cpp; call only on a CPU with AVX512-BF16): the index of
// the first crafted case where vdpbf16ps and bf16_fma disagree, or -1.
int bf16_probe_avx512();

// ---- kernels: rows [r0, r1) of a BF16 or F16 weight, packed or row-major ----
void matmul_rows_half_scalar(const WeightView& w, const ActView& a, int64_t r0, int64_t r1,
                             float* y, int64_t ldy);
void matmul_rows_half_avx2(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                           int64_t ldy);
void matmul_rows_half_avx512(const WeightView& w, const ActView& a, int64_t r0, int64_t r1,
                             float* y, int64_t ldy);

}  // namespace vt::cpu
