// Packed Q4_K / Q5_K / Q6_K kernels (layout in kquant.h), compiled per ISA like
// matmul_simd.h. A tile is one 16-row group x TT tokens; the group's weight bytes are
// decoded once per tile and reused by all TT tokens (16 tokens or more: once per token chunk,
// kquant_rows_decoded).
//
// Per super-block and (row, token) the kernels follow matmul_internal.h's contract: each
// sub-block's exact integer dot I_j, folded into an fp32 sum F = fma(sc_j, I_j, F) in
// sub-block order, then acc = fma(d * d_x, F, acc) (and acc = fma(-(dmin * d_x), M, acc)
// with M the exact integer min sum of Q4_K / Q5_K); one lane per row.
//   AVX-512 VNNI: one dpbusd per 64-byte chunk and token gives every row's 4-element
//   partial sum. The dpbusd accumulator starts at the bits of 1.5 * 2^23 (Q6_K: minus
//   32 * the group's activation sum), so the integer I_j arrives as the float 1.5 * 2^23 + I_j
//   and one subtraction reads it exactly: the scale is then applied by an fma. Nothing but
//   dpbusd (and the min sums' vpdpwssd) needs the integer multiply port, which is what
//   bounds these kernels, while vpmulld by the sub-block scales would take it twice each.
//   AVX2: the group as two 8-row halves, maddubs + madd for the integer dots (no
//   saturation: pairs of at most 63 * 127), then the same float steps.
// Every integer is exact and every float step is the reference's, so both ISAs and the
// scalar reference agree bit for bit. The tiles of each ISA are in matmul_kquant_vnni_simd.h
// and matmul_kquant_avx2_simd.h; this file holds what they share and the row loop.
//
// No include guard on purpose: one inclusion per ISA translation unit.

#ifndef VT_MM_NS
#error "include matmul_simd.h first"
#endif

#include "vt/cpu/kquant.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace vt::cpu::VT_MM_NS {
namespace {

// Token pointers of a K-quant tile.
template <int TT>
struct KTileActs {
  const int8_t* q[TT];
  const float* d[TT];
  const int16_t* bs[TT];
  const int16_t* bp[TT];  // sub-block sum pairs (ActView::bsum_pairs)
  KTileActs(const ActView& a, int64_t t0) {
    VT_UNROLL
    for (int t = 0; t < TT; ++t) {
      q[t] = a.qs + (t0 + t) * a.cols;
      d[t] = a.d + (t0 + t) * a.n_blocks;
      bs[t] = a.bsums + (t0 + t) * a.n_blocks * 16;
      bp[t] = a.bsum_pairs + (t0 + t) * a.n_blocks * 8;
    }
  }
  // Token t's sums of sub-blocks 2k and 2k + 1 of super-block b as one int32 of two int16.
  int32_t pair(int t, int64_t b, int k) const {
    return load_i32(reinterpret_cast<const int8_t*>(bp[t] + 8 * b + 2 * k));
  }
};

// The float 1.5 * 2^23 and its bits: an int32 I with |I| < 2^22 added to the bits reads as
// the float 1.5 * 2^23 + I, exactly (the exponent does not move).
constexpr int32_t kMagicBits = 0x4B400000;
constexpr float kMagic = 12582912.0f;

// Per token, the Q6_K dot accumulators' start values kMagicBits - 32 * bs[g] for the 16
// groups of super-block b: the -32 of the weight folded into where the integer sum begins.
template <int TT>
inline void kq6_starts(const KTileActs<TT>& x, int64_t b, int32_t (&out)[TT][16]) {
  const __m256i magic = _mm256_set1_epi32(kMagicBits);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) {
    VT_UNROLL
    for (int h = 0; h < 2; ++h) {
      const __m256i s = _mm256_cvtepi16_epi32(
          _mm_loadu_si128(reinterpret_cast<const __m128i*>(x.bs[t] + 16 * b + 8 * h)));
      _mm256_store_si256(reinterpret_cast<__m256i*>(out[t] + 8 * h),
                         _mm256_sub_epi32(magic, _mm256_slli_epi32(s, 5)));
    }
  }
}

// A 16-row group decoded once for many tokens (kquant_rows_decoded): super-block b takes
// kKqDecStride bytes (kKqDecBlock, then per ISA what the tile tails share), its 64 pieces of 64
// bytes in the order the tiles read them (Q4_K / Q5_K: piece 2k + nh is chunk k's low or high
// nibbles; Q6_K: piece 4g + cc is chunk cc of group g), each piece 16 rows x 4 elements as the
// packed chunks, one unsigned byte per weight (Q6_K without its -32, which kq6_starts folds in).
// The tiles then skip the shifts, masks and fifth / high bits they otherwise redo for every token
// tile.
constexpr int64_t kKqDecBlock = 4096;

#if VT_MM_VNNI
#include "vt/cpu/matmul_kquant_vnni_simd.h"
#else
#include "vt/cpu/matmul_kquant_avx2_simd.h"
#endif

template <DType T, int TT = kKqTMax<T>>
void kq_tile_dec_n(int n, const uint8_t* grp, const uint8_t* dec, int64_t nb, const ActView& a,
                   int64_t t0, float* y, int64_t ldy, int n_rows, const GroupPrefetch& pf) {
  if constexpr (TT > 0) {
    if (n == TT) return kq_tile<T, TT, true>(grp, nb, a, t0, y, ldy, n_rows, pf, dec);
    kq_tile_dec_n<T, TT - 1>(n, grp, dec, nb, a, t0, y, ldy, n_rows, pf);
  }
}

// Many tokens: each 16-row group is decoded into a per-thread buffer once per token chunk
// (packed_groups' group step: one pass over the packed bytes) and every token tile reads the
// decoded bytes (and prefetches the next group). Each (row, token) still takes the
// same integer dots and float steps in the same order, so the result is the tiles' own, bit
// for bit. Every type on both ISAs takes this path. VNNI, 2-core Zen 5, no decoded path vs
// each type decoded: Qwen3-0.6B-shape prefill 128 Q5_K_M 787 -> 857 tok/s, Q4_K_M +1-6%,
// bench_matmul 'q4_k/.../tok:32/cold' +7-30%, batch-32 decode +0-3%. AVX2 Q4_K (decode: one
// mask or shift) measured -16% to +11% with one-half tiles; its two-half tiles (kq_tile)
// need the decoded bytes.
constexpr int64_t kKqDecMinTokens = 16;
template <DType T>
void kquant_rows_decoded(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                         int64_t ldy) {
  const int64_t nb = a.n_blocks;
  thread_local std::vector<uint8_t> buf;
  if (buf.size() < static_cast<size_t>(nb * kKqDecStride + 64))
    buf.resize(static_cast<size_t>(nb * kKqDecStride + 64));
  uint8_t* dec = buf.data() + (-reinterpret_cast<uintptr_t>(buf.data()) & 63);
  packed_groups<kKqTMax<T>, kKqPasses>(
      w, a, r0, r1,
      [&](const uint8_t* grp, int64_t r, int n_rows, int64_t t0, int n, const GroupPrefetch& pf) {
        kq_tile_dec_n<T>(n, grp, dec, nb, a, t0, y + r, ldy, n_rows, pf);
      },
      [&](const uint8_t* grp) { kq_decode_group<T>(grp, nb, dec); });
}

// The tile for n tokens, 1 <= n <= the maximum (packed_groups' token tiles).
template <DType T, int TT = kKqTMax<T>>
void kq_tile_n(int n, const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y,
               int64_t ldy, int n_rows, const GroupPrefetch& pf) {
  if constexpr (TT > 0) {
    if (n == TT) return kq_tile<T, TT>(grp, nb, a, t0, y, ldy, n_rows, pf);
    kq_tile_n<T, TT - 1>(n, grp, nb, a, t0, y, ldy, n_rows, pf);
  }
}

template <DType T>
void kquant_rows(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                 int64_t ldy) {
  if (a.n_tok >= kKqDecMinTokens) return kquant_rows_decoded<T>(w, a, r0, r1, y, ldy);
  packed_groups<kKqTMax<T>, kKqPasses>(
      w, a, r0, r1,
      [&](const uint8_t* grp, int64_t r, int n_rows, int64_t t0, int n, const GroupPrefetch& pf) {
        kq_tile_n<T>(n, grp, a.n_blocks, a, t0, y + r, ldy, n_rows, pf);
      });
}

}  // namespace
}  // namespace vt::cpu::VT_MM_NS

#pragma GCC diagnostic pop
