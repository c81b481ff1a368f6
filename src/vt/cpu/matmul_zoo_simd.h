// Packed Q2_K / Q3_K / IQ4_XS kernels (layout in pack_zoo.cpp) x Q8_K activations, compiled
// per ISA like matmul_packed_simd.h (matmul_simd.h includes this file and provides dot_u8s8,
// madd_acc, kL2Budget and VT_UNROLL). A tile is one 16-row group x TT tokens; AVX-512 holds
// the 16 rows in one vector, AVX2 runs the group as two 8-row halves.
//
// Each 64-byte chunk of a packed field gives every row the same 4 bytes, so one dot
// instruction against 4 broadcast activation bytes adds 4 products to each row's own int32
// lane. Per 16-element group (Q2_K, Q3_K) or 32-element sub-block (IQ4_XS) the lanes hold
// the rows' exact group dots; one 32-bit multiply by the rows' decoded scales adds them to
// the rows' exact super-block integer, and the float work is one convert and one fma per
// super-block, as matmul_internal.h fixes. Integers: Q2_K's 0..3 and Q3_K's q + 4 (0..7)
// are unsigned already (Q3_K subtracts 4 * sum_g scale_g * bsum_g, Q2_K's mins
// sum_g min_g * bsum_g get a second fma with -dmin); IQ4_XS looks its nibbles up in the code book
// (AVX-512: table + 128, then minus 128 * sum(x); AVX2: signed values, |w| * sign(x, w)).
//
// No include guard on purpose: one inclusion per ISA translation unit.

#ifndef VT_MM_NS
#error "include matmul_simd.h first"
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace vt::cpu::VT_MM_NS {
namespace {
namespace zoo {

inline int32_t x4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// The rows of one vector: 16 (AVX-512) or one 8-row half h of the group (AVX2).
#if VT_MM_VNNI
constexpr int kRows = 16, kHalves = 1, kTMax = 4;
using VI = __m512i;
using VF = __m512;
inline VI load(const uint8_t* chunk, int) { return _mm512_loadu_si512(chunk); }
inline VI set1(int32_t v) { return _mm512_set1_epi32(v); }
inline VI bytes(int v) { return _mm512_set1_epi8(static_cast<char>(v)); }
inline VI zero() { return _mm512_setzero_si512(); }
inline VI vand(VI a, VI b) { return _mm512_and_si512(a, b); }
inline VI vor(VI a, VI b) { return _mm512_or_si512(a, b); }
inline VI add(VI a, VI b) { return _mm512_add_epi32(a, b); }
inline VI sub(VI a, VI b) { return _mm512_sub_epi32(a, b); }
inline VI mullo(VI a, VI b) { return _mm512_mullo_epi32(a, b); }
inline VI srl32(VI a, int n) { return _mm512_srli_epi32(a, n); }
inline VI sll32(VI a, int n) { return _mm512_slli_epi32(a, n); }
inline VI srl16(VI a, int n) { return _mm512_srli_epi16(a, n); }
inline VI sll16(VI a, int n) { return _mm512_slli_epi16(a, n); }
inline VI dot(VI acc, VI u, int32_t x) { return _mm512_dpbusd_epi32(acc, u, set1(x)); }
inline VI dot16(VI acc, VI a, int32_t pair) { return _mm512_dpwssd_epi32(acc, a, set1(pair)); }
inline VF fp16s(const uint8_t* p, int) {
  return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline VI u16s(const uint8_t* p, int) {
  return _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
inline VF fzero() { return _mm512_setzero_ps(); }
inline VF fma_block(VF dw, float dx, VI i, VF acc) {
  return _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(dx)), _mm512_cvtepi32_ps(i), acc);
}
inline void store_rows(float* dst, VF v, int n) {
  _mm512_mask_storeu_ps(dst, static_cast<__mmask16>((1u << n) - 1), v);
}
inline VF fneg(VF a) { return _mm512_xor_ps(a, _mm512_set1_ps(-0.0f)); }
#else
constexpr int kRows = 8, kHalves = 2, kTMax = 2;
using VI = __m256i;
using VF = __m256;
inline VI load(const uint8_t* chunk, int h) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(chunk + 32 * h));
}
inline VI set1(int32_t v) { return _mm256_set1_epi32(v); }
inline VI bytes(int v) { return _mm256_set1_epi8(static_cast<char>(v)); }
inline VI zero() { return _mm256_setzero_si256(); }
inline VI vand(VI a, VI b) { return _mm256_and_si256(a, b); }
inline VI vor(VI a, VI b) { return _mm256_or_si256(a, b); }
inline VI add(VI a, VI b) { return _mm256_add_epi32(a, b); }
inline VI sub(VI a, VI b) { return _mm256_sub_epi32(a, b); }
inline VI mullo(VI a, VI b) { return _mm256_mullo_epi32(a, b); }
inline VI srl32(VI a, int n) { return _mm256_srli_epi32(a, n); }
inline VI sll32(VI a, int n) { return _mm256_slli_epi32(a, n); }
inline VI srl16(VI a, int n) { return _mm256_srli_epi16(a, n); }
inline VI sll16(VI a, int n) { return _mm256_slli_epi16(a, n); }
inline VI dot(VI acc, VI u, int32_t x) { return dot_u8s8(acc, u, set1(x)); }
inline VI dot16(VI acc, VI a, int32_t pair) { return madd_acc(acc, a, set1(pair)); }
inline VF fp16s(const uint8_t* p, int h) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * h)));
}
inline VI u16s(const uint8_t* p, int h) {
  return _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * h)));
}
inline VF fzero() { return _mm256_setzero_ps(); }
inline VF fma_block(VF dw, float dx, VI i, VF acc) {
  return _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(dx)), _mm256_cvtepi32_ps(i), acc);
}
inline void store_rows(float* dst, VF v, int n) {
  if (n == 8) return _mm256_storeu_ps(dst, v);
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, v);
  std::memcpy(dst, tmp, static_cast<size_t>(n) * sizeof(float));
}
inline VF fneg(VF a) { return _mm256_xor_ps(a, _mm256_set1_ps(-0.0f)); }
#endif

// Two int16 values as one int32 (low, high), the operand layout of dot16.
inline VI pair16(VI lo, VI hi) { return vor(vand(lo, set1(0xFFFF)), sll32(hi, 16)); }
inline int32_t bsum_pair(const int16_t* bs, int p) {
  int32_t v;
  std::memcpy(&v, bs + 2 * p, 4);
  return v;
}

// Token pointers of a tile for super-block b.
template <int TT>
struct Acts {
  const int8_t* q[TT];
  float d[TT];
  const int16_t* bs[TT];
  Acts(const ActView& a, int64_t t0, int64_t b) {
    VT_UNROLL
    for (int t = 0; t < TT; ++t) {
      q[t] = a.qs + (t0 + t) * a.cols + b * kQK_K;
      d[t] = a.d[(t0 + t) * a.n_blocks + b];
      bs[t] = a.bsums + ((t0 + t) * a.n_blocks + b) * 16;
    }
  }
};

// Q2_K: scales at 0 (4 chunks), qs at 256 (16 chunks), d at 1280, dmin at 1312.
template <int TT>
void q2k_block(const uint8_t* pb, const Acts<TT>& x, int h, VF* acc) {
  const VI m3 = bytes(3), m4 = set1(0xF);
  VI sc[4];
  VT_UNROLL
  for (int c = 0; c < 4; ++c) sc[c] = load(pb + 64 * c, h);
  VI total[TT], msum[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) total[t] = msum[t] = zero();
  VT_UNROLL
  for (int p = 0; p < 8; ++p) {  // mins of groups 2p, 2p + 1 against their bsums
    const int g = 2 * p;
    const VI mp = pair16(vand(srl32(sc[g / 4], 8 * (g % 4) + 4), m4),
                         vand(srl32(sc[(g + 1) / 4], 8 * ((g + 1) % 4) + 4), m4));
    VT_UNROLL
    for (int t = 0; t < TT; ++t) msum[t] = dot16(msum[t], mp, bsum_pair(x.bs[t], p));
  }
  const uint8_t* qs = pb + 256;
  VT_UNROLL
  for (int n = 0; n < 2; ++n) {
    VT_UNROLL
    for (int hh = 0; hh < 2; ++hh) {
      VI raw[4];
      VT_UNROLL
      for (int kk = 0; kk < 4; ++kk) raw[kk] = load(qs + 64 * (8 * n + 4 * hh + kk), h);
      VT_UNROLL
      for (int j = 0; j < 4; ++j) {
        const int g = 8 * n + 2 * j + hh;
        VI is[TT];
        VT_UNROLL
        for (int t = 0; t < TT; ++t) is[t] = zero();
        VT_UNROLL
        for (int kk = 0; kk < 4; ++kk) {
          const VI v = vand(srl16(raw[kk], 2 * j), m3);
          const int xo = 128 * n + 32 * j + 16 * hh + 4 * kk;
          VT_UNROLL
          for (int t = 0; t < TT; ++t) is[t] = dot(is[t], v, x4(x.q[t] + xo));
        }
        const VI s = vand(srl32(sc[g / 4], 8 * (g % 4)), m4);
        VT_UNROLL
        for (int t = 0; t < TT; ++t) total[t] = add(total[t], mullo(is[t], s));
      }
    }
  }
  const VF dw = fp16s(pb + 1280, h), ndmw = fneg(fp16s(pb + 1312, h));
  VT_UNROLL
  for (int t = 0; t < TT; ++t) {
    acc[t] = fma_block(dw, x.d[t], total[t], acc[t]);
    acc[t] = fma_block(ndmw, x.d[t], msum[t], acc[t]);  // (-dmin) * d_x = -(dmin * d_x)
  }
}

// Q3_K: hmask at 0 (8 chunks), qs at 512 (16 chunks), scales at 1536 (3 chunks), d at 1728.
template <int TT>
void q3k_block(const uint8_t* pb, const Acts<TT>& x, int h, VF* acc) {
  const VI m3 = bytes(3), four = bytes(4), m4 = set1(0xF), m2 = set1(3), c32 = set1(32);
  VI sc[16];
  {
    const VI c0 = load(pb + 1536, h), c1 = load(pb + 1536 + 64, h), c2 = load(pb + 1536 + 128, h);
    VT_UNROLL
    for (int g = 0; g < 16; ++g) {
      const VI lo = vand(srl32(g % 8 < 4 ? c0 : c1, 8 * (g % 4) + 4 * (g / 8)), m4);
      const VI hi = vand(srl32(c2, 8 * (g % 4) + 2 * (g / 4)), m2);
      sc[g] = sub(vor(lo, sll32(hi, 4)), c32);
    }
  }
  VI total[TT], off[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) total[t] = off[t] = zero();
  VT_UNROLL
  for (int p = 0; p < 8; ++p) {
    const VI sp = pair16(sc[2 * p], sc[2 * p + 1]);
    VT_UNROLL
    for (int t = 0; t < TT; ++t) off[t] = dot16(off[t], sp, bsum_pair(x.bs[t], p));
  }
  const uint8_t* qs = pb + 512;
  VT_UNROLL
  for (int n = 0; n < 2; ++n) {
    VT_UNROLL
    for (int hh = 0; hh < 2; ++hh) {
      VI raw[4], hm[4];
      VT_UNROLL
      for (int kk = 0; kk < 4; ++kk) {
        raw[kk] = load(qs + 64 * (8 * n + 4 * hh + kk), h);
        hm[kk] = load(pb + 64 * (4 * hh + kk), h);
      }
      VT_UNROLL
      for (int j = 0; j < 4; ++j) {
        const int g = 8 * n + 2 * j + hh, bit = 4 * n + j;
        VI is[TT];
        VT_UNROLL
        for (int t = 0; t < TT; ++t) is[t] = zero();
        VT_UNROLL
        for (int kk = 0; kk < 4; ++kk) {
          // q + 4: the 2 low bits, plus 4 where hmask bit `bit` is set (moved to bit 2).
          const VI hb = bit >= 2 ? srl16(hm[kk], bit - 2) : sll16(hm[kk], 2 - bit);
          const VI v = vor(vand(srl16(raw[kk], 2 * j), m3), vand(hb, four));
          const int xo = 128 * n + 32 * j + 16 * hh + 4 * kk;
          VT_UNROLL
          for (int t = 0; t < TT; ++t) is[t] = dot(is[t], v, x4(x.q[t] + xo));
        }
        VT_UNROLL
        for (int t = 0; t < TT; ++t) total[t] = add(total[t], mullo(is[t], sc[g]));
      }
    }
  }
  const VF dw = fp16s(pb + 1728, h);
  VT_UNROLL
  for (int t = 0; t < TT; ++t)
    acc[t] = fma_block(dw, x.d[t], sub(total[t], sll32(off[t], 2)), acc[t]);
}

// IQ4_XS: d at 0, scales_h at 32, scales_l at 64 (1 chunk), qs at 128 (32 chunks).
template <int TT>
void iq4xs_block(const uint8_t* pb, const Acts<TT>& x, int h, VF* acc) {
  const VI m4 = bytes(0xF), s4 = set1(0xF), m2 = set1(3), c32 = set1(32);
#if VT_MM_VNNI
  alignas(16) static constexpr uint8_t kUnsigned[16] = {1,   24,  45,  63,  79,  93,  106, 118,
                                                        129, 141, 153, 166, 181, 197, 217, 241};
  const VI table =
      _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(kUnsigned)));
#else
  const VI table =
      _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
#endif
  const VI sh = u16s(pb + 32, h), sl = load(pb + 64, h);
  VI total[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) total[t] = zero();
  const uint8_t* qs = pb + 128;
  VT_UNROLL
  for (int ib = 0; ib < 8; ++ib) {
    const VI ls = sub(vor(vand(srl32(sl, 4 * ib), s4), sll32(vand(srl32(sh, 2 * ib), m2), 4)), c32);
    VI is[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) is[t] = zero();
    VT_UNROLL
    for (int k = 0; k < 4; ++k) {
      const VI raw = load(qs + 64 * (4 * ib + k), h);
      const int xo = 32 * ib + 4 * k;
#if VT_MM_VNNI
      const VI lo = _mm512_shuffle_epi8(table, vand(raw, m4));
      const VI hi = _mm512_shuffle_epi8(table, vand(srl16(raw, 4), m4));
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        is[t] = dot(is[t], lo, x4(x.q[t] + xo));
        is[t] = dot(is[t], hi, x4(x.q[t] + xo + 16));
      }
#else
      const VI lo = _mm256_shuffle_epi8(table, vand(raw, m4));
      const VI hi = _mm256_shuffle_epi8(table, vand(srl16(raw, 4), m4));
      const VI ul = _mm256_abs_epi8(lo), uh = _mm256_abs_epi8(hi);
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        is[t] = dot_u8s8(is[t], ul, _mm256_sign_epi8(set1(x4(x.q[t] + xo)), lo));
        is[t] = dot_u8s8(is[t], uh, _mm256_sign_epi8(set1(x4(x.q[t] + xo + 16)), hi));
      }
#endif
    }
    VT_UNROLL
    for (int t = 0; t < TT; ++t) {
#if VT_MM_VNNI
      is[t] = sub(is[t], set1(128 * (x.bs[t][2 * ib] + x.bs[t][2 * ib + 1])));
#endif
      total[t] = add(total[t], mullo(is[t], ls));
    }
  }
  const VF dw = fp16s(pb, h);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) acc[t] = fma_block(dw, x.d[t], total[t], acc[t]);
}

// Rows [kRows * h, kRows * h + kRows) of the group at `grp`, tokens [t0, t0 + TT).
template <DType T, int TT>
void tile(const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y, int64_t ldy,
          int h, int n_rows, const GroupPrefetch& pf) {
  constexpr int64_t kBlock = kPackRows * (T == DType::Q2_K ? 84 : T == DType::Q3_K ? 110 : 136);
  VF acc[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) acc[t] = fzero();
  for (int64_t b = 0; b < nb; ++b) {
    pf.at(h * nb + b);
    const Acts<TT> x(a, t0, b);
    const uint8_t* pb = grp + b * kBlock;
    if constexpr (T == DType::Q2_K) q2k_block<TT>(pb, x, h, acc);
    if constexpr (T == DType::Q3_K) q3k_block<TT>(pb, x, h, acc);
    if constexpr (T == DType::IQ4_XS) iq4xs_block<TT>(pb, x, h, acc);
  }
  const int n = std::clamp(n_rows - kRows * h, 0, kRows);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) store_rows(y + (t0 + t) * ldy + kRows * h, acc[t], n);
}

// The tile for n tokens, 1 <= n <= the maximum (packed_groups' token tiles).
template <DType T, int TT = kTMax>
void tile_n(int n, const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y,
            int64_t ldy, int h, int n_rows, const GroupPrefetch& pf) {
  if constexpr (TT > 0) {
    if (n == TT) return tile<T, TT>(grp, nb, a, t0, y, ldy, h, n_rows, pf);
    tile_n<T, TT - 1>(n, grp, nb, a, t0, y, ldy, h, n_rows, pf);
  }
}

template <DType T>
void rows(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y, int64_t ldy) {
  packed_groups<kTMax, kHalves>(
      w, a, r0, r1,
      [&](const uint8_t* grp, int64_t r, int n_rows, int64_t t0, int n, const GroupPrefetch& pf) {
        for (int h = 0; h < kHalves && kRows * h < n_rows; ++h)
          tile_n<T>(n, grp, a.n_blocks, a, t0, y + r, ldy, h, n_rows, pf);
      });
}

}  // namespace zoo
}  // namespace
}  // namespace vt::cpu::VT_MM_NS

#pragma GCC diagnostic pop
