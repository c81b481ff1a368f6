// SIMD matmul kernels for float weights (the packed Q8_0 family is in matmul_packed_simd.h,
// the packed K-quants in matmul_kquant_simd.h), written once with 256-bit intrinsics and compiled
// twice: by matmul_avx512.cpp (VNNI dot products, more registers, bigger tiles) and by
// matmul_avx2.cpp. Each includer defines VT_MM_NS (a namespace, so the two copies never
// meet at link time), VT_MM_VNNI (0/1) and the tile sizes below.
//
// Every kernel computes a tile of R weight rows x TT tokens. Per (row, token) pair it runs
// exactly the lane arithmetic of matmul_internal.h, whatever R and TT are, so tiles of any
// shape, the scalar path and the other ISA give bit-identical results.
//
// No include guard on purpose: one inclusion per ISA translation unit.

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "vt/cpu/matmul_internal.h"

#ifndef VT_MM_NS
#error "define VT_MM_NS before including matmul_simd.h"
#endif

// GCC 12's AVX-512 headers build results on self-initialized "undefined" vectors, which
// -Wuninitialized reports wherever the intrinsics are inlined; the values are never read.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// Tile loops must be fully unrolled so accumulators live in registers, not on the stack.
#ifndef VT_UNROLL
#define VT_UNROLL _Pragma("GCC unroll 16")
#endif

namespace vt::cpu::VT_MM_NS {
namespace {

// acc + per-lane sum of 4 unsigned x signed byte products (exact: operands are bounded so
// the AVX2 16-bit intermediate never saturates).
inline __m256i dot_u8s8(__m256i acc, __m256i u, __m256i s) {
#if VT_MM_VNNI
  return _mm256_dpbusd_epi32(acc, u, s);
#else
  __m256i r =
      _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
  asm("" : "+x"(r));  // a register chain, not a re-associated, spilled tree
  return r;
#endif
}

// acc + pairwise int16 products summed into int32 lanes.
inline __m256i madd_acc(__m256i acc, __m256i a, __m256i b) {
#if VT_MM_VNNI
  return _mm256_dpwssd_epi32(acc, a, b);
#else
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
#endif
}

// The packed kernels' weight prefetch: the group `ahead` of the one being multiplied,
// fetched a slice per block step of the current group (a tile's passes x its blocks) rather
// than all at once before it, so the misses arrive at the pace of the compute and the
// hardware keeps a steady number in flight. Empty: no prefetch.
//
// The prefetch is an asm statement, not _mm_prefetch: GCC 12 deems a function whose only
// effect is __builtin_prefetch pure and deletes every call of it. Until 2026-12-03 this one
// was compiled out of every packed kernel (71bc290's binary holds no prefetch in them), so
// the earlier A/B figures of this comment measured noise. On a 2-core Zen 4 VM that shows
// only AVX2 (bench_matmul .../tok:1/cold, 2 threads, none or T0 -> T1 into L2): Q6_K
// 1024x3072 12-13 -> 21 GB/s, the 151936 x 1024 Q6_K head 11-12 -> 25, Q8_0 17-18 -> 26,
// Q4_K 16 -> 22-24; many-token tiles unchanged. A working T0 (into L1) read the same as
// none, presumably because its misses hold the few L1 fill buffers the tile's own loads
// need. Four groups ahead read the same as two (one token: two; a token tile: one).
struct GroupPrefetch {
  const uint8_t* next = nullptr;
  int64_t slice = 0;
  GroupPrefetch() = default;
  GroupPrefetch(const uint8_t* next_group, int64_t group_bytes, int64_t steps)
      : next(next_group), slice((group_bytes + steps * 64 - 1) / (steps * 64) * 64) {}
  // The same prefetch `steps` block steps further on (empty stays empty).
  GroupPrefetch shifted(int64_t steps) const {
    GroupPrefetch p = *this;
    p.next += steps * slice;
    return p;
  }
  void at(int64_t step) const {
    if (next == nullptr) return;
    const char* p = reinterpret_cast<const char*>(next + step * slice);
    for (int64_t o = 0; o < slice; o += 64) asm volatile("prefetcht1 %0" : : "m"(p[o]));
  }
};

inline float hsum8(__m256 v) {
  const __m128 a = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 b = _mm_add_ps(a, _mm_movehl_ps(a, a));
  return _mm_cvtss_f32(_mm_add_ss(b, _mm_movehdup_ps(b)));
}

inline int hsum_i32(__m256i v) {
  __m128i a = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0x4e));
  a = _mm_add_epi32(a, _mm_shuffle_epi32(a, 0xb1));
  return _mm_cvtsi128_si32(a);
}

// Activation bytes one token chunk may occupy (half of a 1 MiB L2, the rest for weights).
constexpr int64_t kL2Budget = 384 << 10;

inline float h2f(uint16_t h) { return _cvtsh_ss(h); }

inline const uint8_t* row_ptr(const WeightView& w, int64_t r) {
  return static_cast<const uint8_t*>(w.data) + r * w.row_stride;
}

// ---- F32 weights: 16 lanes as two 8-lane halves (BF16 / F16: matmul_half_simd.h) ----

template <DType T>
inline void load16(const void* p, __m256& lo, __m256& hi) {
  static_assert(T == DType::F32);
  lo = _mm256_loadu_ps(static_cast<const float*>(p));
  hi = _mm256_loadu_ps(static_cast<const float*>(p) + 8);
}

template <DType T>
struct FloatKernel {
  static constexpr int kElem = T == DType::F32 ? 4 : 2;

  template <int R, int TT>
  static void run(const WeightView& w, const ActView& a, int64_t r0, int64_t t0, float* y,
                  int64_t ldy) {
    const int64_t n = w.cols, nfull = n & ~int64_t{15};
    const uint8_t* rows[R];
    VT_UNROLL
    for (int r = 0; r < R; ++r) rows[r] = row_ptr(w, r0 + r);
    const float* xs[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) xs[t] = a.x + (t0 + t) * a.ldx;
    __m256 acc[R][TT][2];
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t) acc[r][t][0] = acc[r][t][1] = _mm256_setzero_ps();
    auto step = [&](const __m256* wl, const __m256* wh, const float* const* xp) {
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const __m256 xl = _mm256_loadu_ps(xp[t]), xh = _mm256_loadu_ps(xp[t] + 8);
        VT_UNROLL
        for (int r = 0; r < R; ++r) {
          acc[r][t][0] = _mm256_fmadd_ps(wl[r], xl, acc[r][t][0]);
          acc[r][t][1] = _mm256_fmadd_ps(wh[r], xh, acc[r][t][1]);
        }
      }
    };
    for (int64_t i = 0; i < nfull; i += 16) {
      __m256 wl[R], wh[R];
      VT_UNROLL
      for (int r = 0; r < R; ++r) load16<T>(rows[r] + i * kElem, wl[r], wh[r]);
      const float* xp[TT];
      VT_UNROLL
      for (int t = 0; t < TT; ++t) xp[t] = xs[t] + i;
      step(wl, wh, xp);
    }
    if (nfull < n) {
      // Zero-padded copies: padded lanes compute fma(0, 0, acc), as the scalar path does.
      const int64_t rem = n - nfull;
      alignas(32) uint8_t wbuf[R][16 * 4];
      alignas(32) float xbuf[TT][16];
      __m256 wl[R], wh[R];
      VT_UNROLL
      for (int r = 0; r < R; ++r) {
        std::memset(wbuf[r], 0, sizeof(wbuf[r]));
        std::memcpy(wbuf[r], rows[r] + nfull * kElem, static_cast<size_t>(rem * kElem));
        load16<T>(wbuf[r], wl[r], wh[r]);
      }
      const float* xp[TT];
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        std::memset(xbuf[t], 0, sizeof(xbuf[t]));
        std::memcpy(xbuf[t], xs[t] + nfull, static_cast<size_t>(rem) * sizeof(float));
        xp[t] = xbuf[t];
      }
      step(wl, wh, xp);
    }
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t)
      y[(t0 + t) * ldy + r0 + r] = hsum8(_mm256_add_ps(acc[r][t][0], acc[r][t][1]));
  }
};

// The loop every packed kernel family shares: token chunks sized to stay in L2 (each group's
// weights are read from memory once per chunk and stay in cache while the chunk's tokens
// stream past in tiles of at most TMAX), groups of kPackRows rows, and the group after next
// (few tokens) or the next one prefetched by the group's first tile. tile(grp, r, n_rows,
// t0, n, pf) multiplies group `grp` (rows r.., n_rows of them) by tokens [t0, t0 + n);
// PASSES is how many passes over a group a tile makes (pf.at steps = passes x blocks).
// With a `group` callback, group(grp) runs once per group and token chunk before its
// tiles, and the next group's prefetch is spread over all the chunk's tiles
// (a slice per block step of each), the compute-bound part. Burst into the short group step
// instead, it left the group step waiting on DRAM: 2-core Zen 5 VM, Qwen3-0.6B-shape Q5_K_M,
// `vllm bench latency --input-len 128 --output-len 1 --num-iters 10` 1191-1262 -> 1274-1312
// tok/s (four alternations), the group step's share of the 32-request decode phase 17% ->
// 8%, bench_matmul '.../tok:32/cold' mostly faster.
struct NoGroupStep {
  void operator()(const uint8_t*) const {}
};
template <int TMAX, int PASSES, class Tile, class Group = NoGroupStep>
inline void packed_groups(const WeightView& w, const ActView& a, int64_t r0, int64_t r1,
                          Tile&& tile, Group&& group = {}) {
  constexpr bool kGroupStep = !std::is_same_v<std::decay_t<Group>, NoGroupStep>;
  const int64_t nb = a.n_blocks;
  const int64_t gbytes = kPackRows * static_cast<int64_t>(w.row_stride);
  const uint8_t* base = static_cast<const uint8_t*>(w.data);
  const int64_t chunk = std::max<int64_t>(TMAX, (kL2Budget / a.cols) / TMAX * TMAX);
  for (int64_t c0 = 0; c0 < a.n_tok; c0 += chunk) {
    const int64_t c1 = std::min(a.n_tok, c0 + chunk);
    const int64_t ahead = c1 - c0 < TMAX ? 2 : 1;
    for (int64_t r = r0; r < r1; r += kPackRows) {
      const uint8_t* grp = base + (r / kPackRows) * gbytes;
      // The next prefetch target (none past the rows this call covers), a slice per block
      // step of each pass of its tiles.
      const bool pf_ok = r + (ahead + 1) * kPackRows <= r1;
      auto prefetch = [&](int64_t steps) {
        return pf_ok ? GroupPrefetch(grp + ahead * gbytes, gbytes, steps) : GroupPrefetch();
      };
      const int n_rows = static_cast<int>(std::min<int64_t>(kPackRows, r1 - r));
      if constexpr (kGroupStep) {
        group(grp);
        const GroupPrefetch pf = prefetch((c1 - c0 + TMAX - 1) / TMAX * PASSES * nb);
        for (int64_t t = c0, i = 0; t < c1; t += TMAX, ++i)
          tile(grp, r, n_rows, t, static_cast<int>(std::min<int64_t>(TMAX, c1 - t)),
               pf.shifted(i * PASSES * nb));
      } else {
        const GroupPrefetch pf = prefetch(PASSES * nb);
        for (int64_t t = c0; t < c1; t += TMAX)
          tile(grp, r, n_rows, t, static_cast<int>(std::min<int64_t>(TMAX, c1 - t)),
               t == c0 ? pf : GroupPrefetch());
      }
    }
  }
}

// Token chunks sized to stay in L2; within a chunk, row tiles of RMAX (then single rows),
// and for each, token tiles of TMAX (then single tokens): the weight tile stays in L1
// while every token of the chunk streams past it.
template <class K, int RMAX, int TMAX>
void rows_loop(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
               int64_t ldy) {
  const int64_t tok_bytes = a.fmt == DType::F32 ? a.cols * 4 : a.cols;
  const int64_t chunk = std::max<int64_t>(TMAX, (kL2Budget / tok_bytes) / TMAX * TMAX);
  for (int64_t c0 = 0; c0 < a.n_tok; c0 += chunk) {
    const int64_t c1 = std::min(a.n_tok, c0 + chunk);
    auto tokens = [&]<int R>(int64_t r) {
      int64_t t = c0;
      for (; t + TMAX <= c1; t += TMAX) K::template run<R, TMAX>(w, a, r, t, y, ldy);
      for (; t < c1; ++t) K::template run<R, 1>(w, a, r, t, y, ldy);
    };
    int64_t r = r0;
    // Few tokens: the product streams weights from DRAM. Prefetch the row group two groups
    // ahead so each core keeps enough misses in flight (numerics are untouched).
    const bool stream = c1 - c0 < TMAX;
    const int64_t row_bytes = static_cast<int64_t>(w.row_stride);
    for (; r + RMAX <= r1; r += RMAX) {
      if (stream && r + 5 * RMAX <= r1) {
        const char* p = reinterpret_cast<const char*>(row_ptr(w, r + 4 * RMAX));
        for (int64_t off = 0; off < RMAX * row_bytes; off += 64) _mm_prefetch(p + off, _MM_HINT_T0);
      }
      tokens.template operator()<RMAX>(r);
    }
    for (; r < r1; ++r) tokens.template operator()<1>(r);
  }
}

}  // namespace
}  // namespace vt::cpu::VT_MM_NS

#include "vt/cpu/matmul_packed_simd.h"
// clang-format off
#include "vt/cpu/matmul_half_simd.h"
#include "vt/cpu/matmul_zoo_simd.h"
#include "vt/cpu/matmul_kquant_simd.h"
// clang-format on

namespace vt::cpu::VT_MM_NS {

void matmul_rows(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                 int64_t ldy) {
  if (packable(w.dtype) && !w.packed && !is_half(w.dtype))
    return matmul_rows_scalar(w, a, r0, r1, y, ldy);
  switch (w.dtype) {
    case DType::F32:
      return rows_loop<FloatKernel<DType::F32>, VT_MM_RF, VT_MM_TF>(w, a, r0, r1, y, ldy);
    case DType::F16:
    case DType::BF16:
      return half_rows_any(w, a, r0, r1, y, ldy);
    case DType::Q8_0:
      return packed_rows<DType::Q8_0>(w, a, r0, r1, y, ldy);
    case DType::Q4_0:
      return packed_rows<DType::Q4_0>(w, a, r0, r1, y, ldy);
    case DType::Q4_1:
      return packed_rows<DType::Q4_1>(w, a, r0, r1, y, ldy);
    case DType::Q4_K:
      return kquant_rows<DType::Q4_K>(w, a, r0, r1, y, ldy);
    case DType::Q5_K:
      return kquant_rows<DType::Q5_K>(w, a, r0, r1, y, ldy);
    case DType::Q6_K:
      return kquant_rows<DType::Q6_K>(w, a, r0, r1, y, ldy);
    case DType::Q5_0:
      return packed_rows<DType::Q5_0>(w, a, r0, r1, y, ldy);
    case DType::Q5_1:
      return packed_rows<DType::Q5_1>(w, a, r0, r1, y, ldy);
    case DType::IQ4_NL:
      return packed_rows<DType::IQ4_NL>(w, a, r0, r1, y, ldy);
    case DType::MXFP4:
      return packed_rows<DType::MXFP4>(w, a, r0, r1, y, ldy);
    case DType::Q2_K:
      return zoo::rows<DType::Q2_K>(w, a, r0, r1, y, ldy);
    case DType::Q3_K:
      return zoo::rows<DType::Q3_K>(w, a, r0, r1, y, ldy);
    case DType::IQ4_XS:
      return zoo::rows<DType::IQ4_XS>(w, a, r0, r1, y, ldy);
    default:
      return;
  }
}

}  // namespace vt::cpu::VT_MM_NS

#pragma GCC diagnostic pop
