// BF16 / F16 kernels on the packed layout of matmul_half.h, compiled per ISA like
// matmul_simd.h (which includes this file): AVX-512 (VT_MM_VNNI) holds a 16-row group in
// one vector, AVX2 in two 8-row halves. A tile is G groups x TT tokens with one
// accumulator vector per (group half, token), so every weight load feeds TT tokens and
// every activation broadcast feeds G groups. Per lane (a row) and token the arithmetic is
// the contract's single chain, so tiles of any shape, both ISAs and the scalar path agree.
//
// BF16 with vdpbf16ps (AVX-512 with AVX512-BF16, when bf16_native_dot()): one instruction
// per 64-byte chunk and token against the broadcast activation pair. Without it: the odd
// and even columns widened by a mask and a shift, two vfmadd (odd first) against
// broadcast fp32 activations, with MXCSR.FTZ|DAZ set around the kernel.
//
// No include guard on purpose: one inclusion per ISA translation unit.

#ifndef VT_MM_NS
#error "include matmul_simd.h first"
#endif

#include <vector>

#include "vt/cpu/matmul_half.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace vt::cpu::VT_MM_NS {
namespace {

#if VT_MM_VNNI

using HV = __m512;
constexpr int kHalfVecs = 1;  // vectors per 16-row group
constexpr int kHalfTMax = kHalfTileAvx512;
constexpr int kHalfGMax = 4;  // groups per tile: each activation broadcast feeds 4 (x2) fma
inline HV hv_zero() { return _mm512_setzero_ps(); }
inline HV hv_set1(float v) { return _mm512_set1_ps(v); }
inline HV hv_load(const float* p) { return _mm512_loadu_ps(p); }
inline void hv_save(float* p, HV v) { _mm512_storeu_ps(p, v); }
inline HV hv_fma(HV a, HV b, HV c) { return _mm512_fmadd_ps(a, b, c); }
// Vector h of a 64-byte BF16 chunk: its rows' odd and even columns as fp32.
inline void hv_bf16(const uint8_t* p, int, HV& odd, HV& even) {
  const __m512i v = _mm512_loadu_si512(p);
  odd = _mm512_castsi512_ps(_mm512_and_si512(v, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
  even = _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
}
// Vector h of a 32-byte F16 column as fp32.
inline HV hv_f16(const uint8_t* p, int) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
// Lanes [0, n) of v to dst, NaN canonical.
inline void hv_store(float* dst, HV v, int n) {
  const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
  v = _mm512_mask_blend_ps(nan, v, _mm512_castsi512_ps(_mm512_set1_epi32(kCanonicalNan)));
  if (n >= 16)
    _mm512_storeu_ps(dst, v);
  else
    _mm512_mask_storeu_ps(dst, static_cast<__mmask16>((1u << n) - 1), v);
}

#else

using HV = __m256;
constexpr int kHalfVecs = 2;
constexpr int kHalfTMax = kHalfTileAvx2;
constexpr int kHalfGMax = 1;
inline HV hv_zero() { return _mm256_setzero_ps(); }
inline HV hv_set1(float v) { return _mm256_set1_ps(v); }
inline HV hv_load(const float* p) { return _mm256_loadu_ps(p); }
inline void hv_save(float* p, HV v) { _mm256_storeu_ps(p, v); }
inline HV hv_fma(HV a, HV b, HV c) { return _mm256_fmadd_ps(a, b, c); }
inline void hv_bf16(const uint8_t* p, int h, HV& odd, HV& even) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32 * h));
  odd = _mm256_castsi256_ps(_mm256_and_si256(v, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
  even = _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}
inline HV hv_f16(const uint8_t* p, int h) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * h)));
}
inline void hv_store(float* dst, HV v, int n) {
  v = _mm256_blendv_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(kCanonicalNan)),
                       _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  if (n >= 8) {
    _mm256_storeu_ps(dst, v);
  } else {
    alignas(32) float tmp[8];
    _mm256_store_ps(tmp, v);
    std::memcpy(dst, tmp, static_cast<size_t>(n) * sizeof(float));
  }
}

#endif

constexpr int kHalfLanes = 16 / kHalfVecs;  // rows per vector
// Weight bytes ahead of the one being read that a streaming (few-token) tile prefetches, and
// where to: L2 for AVX-512, L1 for AVX2 (each the faster on a 2-core Zen 4, docs/QUANT_ZOO.md).
constexpr int64_t kHalfPrefetch = 1024;
constexpr auto kHalfHint = VT_MM_VNNI ? _MM_HINT_T1 : _MM_HINT_T0;

enum class HalfKind { kBf16Emul, kBf16Native, kF16 };

// Many-token products run in k-blocks of this many bytes of weights as the tiles read them
// (the emulated BF16 and the F16 paths widen theirs to fp32 once per block, so the tiles
// do nothing but fma), small enough to stay in L1 while every token tile of a chunk passes.
constexpr int64_t kHalfKBlockBytes = 16 << 10;

// Where a tile's k-range sits in its rows' chains: the accumulators start at zero (first
// block) or are reloaded from `part`, and end in y (last block) or are saved to `part`.
// Saving and reloading an fp32 accumulator is exact, so blocking never changes a result.
struct KRange {
  int64_t k0, k1;  // kernel steps: column pairs (BF16) or columns (F16)
  bool first, last;
  float* part;        // TT x (16 G) floats, token-major (null: single block)
  const float* wide;  // the block's weights widened by half_widen (null: read the packed bytes)
};

// Floats per kernel step and group in a widened block: BF16 odd and even columns, F16 one.
template <HalfKind K>
constexpr int kWideStep = K == HalfKind::kF16 ? 16 : 32;

// Steps [k0, k1) of G groups as fp32, step-major: step kk, group g, (BF16: odd then even)
// 16 rows each. Bit operations and vcvtph2ps only, so exactly the values the tiles would
// form themselves.
template <HalfKind K, int G>
void half_widen(const uint8_t* grp, int64_t gbytes, int64_t k0, int64_t k1, float* wide) {
  for (int64_t k = k0; k < k1; ++k) {
    float* dst = wide + (k - k0) * G * kWideStep<K>;
    VT_UNROLL
    for (int g = 0; g < G; ++g) {
      VT_UNROLL
      for (int h = 0; h < kHalfVecs; ++h) {
        if constexpr (K == HalfKind::kF16) {
          hv_save(dst + g * 16 + h * kHalfLanes, hv_f16(grp + g * gbytes + 32 * k, h));
        } else {
          HV odd, even;
          hv_bf16(grp + g * gbytes + 64 * k, h, odd, even);
          hv_save(dst + g * 32 + h * kHalfLanes, odd);
          hv_save(dst + g * 32 + 16 + h * kHalfLanes, even);
        }
      }
    }
  }
}

// G groups (group g at grp + g * gbytes) x TT tokens from t0, steps [k0, k1); y points at
// the first row of the first group; n_rows counts the rows from there that exist.
template <HalfKind K, int G, int TT>
void half_tile(const uint8_t* grp, int64_t gbytes, const ActView& a, int64_t t0, const KRange& kr,
               float* y, int64_t ldy, int64_t n_rows, bool stream) {
  constexpr int V = G * kHalfVecs;
  constexpr int kPartRow = 16 * G;
  HV acc[V][TT];
  VT_UNROLL
  for (int v = 0; v < V; ++v) VT_UNROLL
  for (int t = 0; t < TT; ++t)
    acc[v][t] = kr.first ? hv_zero() : hv_load(kr.part + t * kPartRow + v * kHalfLanes);
  // Vector v of a step's weights: group v / kHalfVecs, half v % kHalfVecs.
  auto wide_at = [&](int64_t k, int v, int parity) {
    return hv_load(kr.wide + (k - kr.k0) * G * kWideStep<K> + (v / kHalfVecs) * kWideStep<K> +
                   parity * 16 + (v % kHalfVecs) * kHalfLanes);
  };
  if constexpr (K == HalfKind::kBf16Emul) {
    const float* xt = a.xr + t0 * a.ldr + kr.k0 * 2 * TT;  // pair-major, TT tokens per pair
    for (int64_t k = kr.k0; k < kr.k1; ++k, xt += 2 * TT) {
      const uint8_t* p = grp + 64 * k;
      HV wo[V], we[V];
      VT_UNROLL
      for (int g = 0; g < G; ++g) {
        if (stream)
          _mm_prefetch(reinterpret_cast<const char*>(p + g * gbytes + kHalfPrefetch), kHalfHint);
        VT_UNROLL
        for (int h = 0; h < kHalfVecs; ++h) {
          const int v = g * kHalfVecs + h;
          if (kr.wide) {
            wo[v] = wide_at(k, v, 0);
            we[v] = wide_at(k, v, 1);
          } else {
            hv_bf16(p + g * gbytes, h, wo[v], we[v]);
          }
        }
      }
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const HV xo = hv_set1(xt[2 * t + 1]), xe = hv_set1(xt[2 * t]);
        VT_UNROLL
        for (int v = 0; v < V; ++v) acc[v][t] = hv_fma(wo[v], xo, acc[v][t]);
        VT_UNROLL
        for (int v = 0; v < V; ++v) acc[v][t] = hv_fma(we[v], xe, acc[v][t]);
      }
    }
  } else if constexpr (K == HalfKind::kBf16Native) {
#if VT_MM_VNNI && defined(__AVX512BF16__)
    const uint32_t* xt = a.xp + t0 * (a.ldr / 2) + kr.k0 * TT;
    for (int64_t k = kr.k0; k < kr.k1; ++k, xt += TT) {
      const uint8_t* p = grp + 64 * k;
      __m512i wv[G];
      VT_UNROLL
      for (int g = 0; g < G; ++g) {
        if (stream)
          _mm_prefetch(reinterpret_cast<const char*>(p + g * gbytes + kHalfPrefetch), kHalfHint);
        wv[g] = _mm512_loadu_si512(p + g * gbytes);
      }
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const __m512i xv = _mm512_set1_epi32(static_cast<int>(xt[t]));
        VT_UNROLL
        for (int g = 0; g < G; ++g)
          acc[g][t] = _mm512_dpbf16_ps(acc[g][t], reinterpret_cast<__m512bh>(wv[g]),
                                       reinterpret_cast<__m512bh>(xv));
      }
    }
#endif
  } else {
    const float* x[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) x[t] = a.x + (t0 + t) * a.ldx;
    for (int64_t k = kr.k0; k < kr.k1; ++k) {
      const uint8_t* p = grp + 32 * k;
      HV wv[V];
      VT_UNROLL
      for (int g = 0; g < G; ++g) {
        if (stream && (k & 1) == 0)
          _mm_prefetch(reinterpret_cast<const char*>(p + g * gbytes + kHalfPrefetch), kHalfHint);
        VT_UNROLL
        for (int h = 0; h < kHalfVecs; ++h) {
          const int v = g * kHalfVecs + h;
          wv[v] = kr.wide ? wide_at(k, v, 0) : hv_f16(p + g * gbytes, h);
        }
      }
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const HV xv = hv_set1(x[t][k]);
        VT_UNROLL
        for (int v = 0; v < V; ++v) acc[v][t] = hv_fma(wv[v], xv, acc[v][t]);
      }
    }
  }
  if (!kr.last) {
    VT_UNROLL
    for (int v = 0; v < V; ++v) VT_UNROLL
    for (int t = 0; t < TT; ++t) hv_save(kr.part + t * kPartRow + v * kHalfLanes, acc[v][t]);
    return;
  }
  VT_UNROLL
  for (int v = 0; v < V; ++v) {
    const int64_t rows = std::min<int64_t>(kHalfLanes, n_rows - v * kHalfLanes);
    if (rows <= 0) break;
    VT_UNROLL
    for (int t = 0; t < TT; ++t)
      hv_store(y + (t0 + t) * ldy + v * kHalfLanes, acc[v][t], static_cast<int>(rows));
  }
}

// Tokens [t0, t0 + n) with n < kHalfTMax, as one tile of exactly n.
template <HalfKind K, int G, int TT = kHalfTMax - 1>
void half_tail(int n, const uint8_t* grp, int64_t gbytes, const ActView& a, int64_t t0,
               const KRange& kr, float* y, int64_t ldy, int64_t n_rows, bool stream) {
  if constexpr (TT > 0) {
    if (n == TT) return half_tile<K, G, TT>(grp, gbytes, a, t0, kr, y, ldy, n_rows, stream);
    half_tail<K, G, TT - 1>(n, grp, gbytes, a, t0, kr, y, ldy, n_rows, stream);
  }
}

// Tokens [c0, c1) of G groups. Few tokens (a decode step): one pass over each row, the
// weights streamed from DRAM with prefetch. Many: k-blocks, each kept in L1 (widened to
// fp32 first where the tiles would otherwise widen it once per tile) while all the token
// tiles pass, the accumulators parked in `part` between blocks.
template <HalfKind K, int G>
void half_tokens(const uint8_t* grp, int64_t gbytes, const ActView& a, int64_t c0, int64_t c1,
                 float* part, float* y, int64_t ldy, int64_t n_rows) {
  const int64_t steps = K == HalfKind::kF16 ? a.cols : a.ldr / 2;
  const bool stream = c1 - c0 < kHalfTMax;
  constexpr bool kWiden = K != HalfKind::kBf16Native;
  constexpr int64_t kStepBytes = G * (kWiden ? 4 * kWideStep<K> : 64);  // per step, G groups
  constexpr int64_t kBlock = kHalfKBlockBytes / kStepBytes;
  alignas(64) thread_local float wide[kHalfKBlockBytes / 4];
  const int64_t kb = stream ? steps : kBlock;
  for (int64_t k0 = 0; k0 < steps; k0 += kb) {
    const int64_t k1 = std::min(steps, k0 + kb);
    KRange kr{k0, k1, k0 == 0, k1 == steps, nullptr, nullptr};
    if (kWiden && !stream) {
      half_widen<K, G>(grp, gbytes, k0, k1, wide);
      kr.wide = wide;
    }
    int64_t t = c0;
    for (; t + kHalfTMax <= c1; t += kHalfTMax) {
      kr.part = part + (t - c0) * 16 * G;
      half_tile<K, G, kHalfTMax>(grp, gbytes, a, t, kr, y, ldy, n_rows, stream);
    }
    if (t < c1) {
      kr.part = part + (t - c0) * 16 * G;
      half_tail<K, G>(static_cast<int>(c1 - t), grp, gbytes, a, t, kr, y, ldy, n_rows, stream);
    }
  }
}

// Token chunks sized to stay in L2; within a chunk, kHalfGMax groups at a time (then single
// ones) while the chunk's tokens pass in tiles. A row-major view is packed one group at a time
// into per-thread scratch first (tests, unpacked callers).
template <HalfKind K>
void half_rows(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
               int64_t ldy) {
  const int64_t row_bytes = static_cast<int64_t>(half_packed_row_bytes(w.dtype, w.cols));
  const int64_t gbytes = kPackRows * row_bytes;
  const int64_t tok_bytes = K == HalfKind::kF16          ? a.cols * 4
                            : K == HalfKind::kBf16Native ? a.ldr * 2
                                                         : a.ldr * 4;
  const int64_t chunk =
      std::max<int64_t>(kHalfTMax, (kL2Budget / tok_bytes) / kHalfTMax * kHalfTMax);
  thread_local std::vector<uint8_t> scratch;
  thread_local std::vector<float> part;
  if (!w.packed && scratch.size() < static_cast<size_t>(gbytes))
    scratch.resize(static_cast<size_t>(gbytes));
  if (part.size() < static_cast<size_t>(chunk * kHalfGMax * kPackRows))
    part.resize(static_cast<size_t>(chunk * kHalfGMax * kPackRows));
  for (int64_t c0 = 0; c0 < a.n_tok; c0 += chunk) {
    const int64_t c1 = std::min(a.n_tok, c0 + chunk);
    for (int64_t r = r0; r < r1;) {
      const int64_t left = r1 - r;
      if (!w.packed) {
        WeightView sub = w;
        sub.data = static_cast<const uint8_t*>(w.data) + r * w.row_stride;
        sub.rows = std::min<int64_t>(kPackRows, w.rows - r);
        pack_groups_half(sub, 0, 1, scratch.data());
        half_tokens<K, 1>(scratch.data(), gbytes, a, c0, c1, part.data(), y + r, ldy, left);
        r += kPackRows;
        continue;
      }
      const uint8_t* grp = static_cast<const uint8_t*>(w.data) + (r / kPackRows) * gbytes;
      if (kHalfGMax == 4 && left > 3 * kPackRows) {
        half_tokens<K, kHalfGMax>(grp, gbytes, a, c0, c1, part.data(), y + r, ldy, left);
        r += kHalfGMax * kPackRows;
      } else {
        half_tokens<K, 1>(grp, gbytes, a, c0, c1, part.data(), y + r, ldy, left);
        r += kPackRows;
      }
    }
  }
}

// The emulation needs MXCSR.FTZ|DAZ; a separate function so that no floating-point work
// of the kernel can be scheduled across the MXCSR writes around the call.
__attribute__((noipa)) void bf16_rows_emul(const WeightView& w, const ActView& a, int64_t r0,
                                           int64_t r1, float* y, int64_t ldy) {
  half_rows<HalfKind::kBf16Emul>(w, a, r0, r1, y, ldy);
}

void half_rows_any(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                   int64_t ldy) {
  if (w.dtype == DType::F16) return half_rows<HalfKind::kF16>(w, a, r0, r1, y, ldy);
  // Activations laid out for another tile width (prepared for another ISA): read them
  // one at a time.
  if (a.tile != kHalfTMax) return matmul_rows_half_scalar(w, a, r0, r1, y, ldy);
#if VT_MM_VNNI && defined(__AVX512BF16__)
  if (a.xp) return half_rows<HalfKind::kBf16Native>(w, a, r0, r1, y, ldy);
#endif
  if (!a.xr) return matmul_rows_half_scalar(w, a, r0, r1, y, ldy);  // pairs without vdpbf16ps
  if (!a.rounded) return half_rows<HalfKind::kBf16Emul>(w, a, r0, r1, y, ldy);  // IEEE fma
  const unsigned csr = _mm_getcsr();
  _mm_setcsr(csr | 0x8040u);  // FTZ (bit 15) | DAZ (bit 6)
  bf16_rows_emul(w, a, r0, r1, y, ldy);
  _mm_setcsr(csr);
}

}  // namespace

// bf16_act_round on one row of n elements, zeros up to ldr.
void bf16_round_row(const float* x, int64_t n, int64_t ldr, uint16_t* out) {
#if VT_MM_VNNI
  const __m512i absm = _mm512_set1_epi32(0x7fffffff), expm = _mm512_set1_epi32(0x7f800000);
  const __m512i one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff);
  for (int64_t i = 0; i < ldr; i += 16) {
    // Lanes past n load as zero, which rounds to the zero padding.
    const auto m = static_cast<unsigned>(std::clamp<int64_t>(n - i, 0, 16));
    const __m512i u = _mm512_maskz_loadu_epi32(static_cast<__mmask16>((1u << m) - 1), x + i);
    const __m512i hi = _mm512_srli_epi32(u, 16);
    __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(u, _mm512_add_epi32(bias, _mm512_and_si512(hi, one))), 16);
    r = _mm512_mask_mov_epi32(r, _mm512_testn_epi32_mask(u, expm),
                              _mm512_and_si512(hi, _mm512_set1_epi32(0x8000)));
    r = _mm512_mask_mov_epi32(r, _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, absm), expm),
                              _mm512_set1_epi32(0x7fc0));
    const auto s = static_cast<unsigned>(std::min<int64_t>(16, ldr - i));
    _mm256_mask_storeu_epi16(out + i, static_cast<__mmask16>((1u << s) - 1),
                             _mm512_cvtepi32_epi16(r));
  }
#else
  const __m256i absm = _mm256_set1_epi32(0x7fffffff), expm = _mm256_set1_epi32(0x7f800000);
  const __m256i one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i hi = _mm256_srli_epi32(u, 16);
    __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(hi, one))), 16);
    const __m256i den = _mm256_cmpeq_epi32(_mm256_and_si256(u, expm), _mm256_setzero_si256());
    r = _mm256_blendv_epi8(r, _mm256_and_si256(hi, _mm256_set1_epi32(0x8000)), den);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, absm), expm);
    r = _mm256_blendv_epi8(r, _mm256_set1_epi32(0x7fc0), nan);
    // 8 x 32-bit -> 8 x 16-bit (values fit: packus never saturates here).
    const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(p));
  }
  for (; i < ldr; ++i) out[i] = i < n ? bf16_act_round(x[i]) : 0;
#endif
}

}  // namespace vt::cpu::VT_MM_NS

#pragma GCC diagnostic pop
