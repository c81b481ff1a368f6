// Packed Q8_0 / Q4_0 / Q4_1 kernels (layout in pack.cpp), compiled per ISA like
// matmul_simd.h. A tile is one 16-row group x TT tokens. Each 64-byte chunk of a packed
// block gives every row 4 consecutive weight bytes; one dot instruction against 4 broadcast
// activation bytes adds that row's partial sum to its own int32 lane, so after a block each
// lane holds the row's exact block dot I_b and the float work is one convert and one fma
// per 16 rows (AVX-512; two 8-row halves on AVX2) instead of one per 4 bytes.
//
// Integers: AVX-512 multiplies Q8_0's stored w + 128 (unsigned) with the signed activation
// and subtracts 128 * sum(x); Q4_0 subtracts 8 * sum(x); AVX2 (maddubs saturates at
// 255 * 127 * 2) recovers w and uses |w| * sign(x, w). Q5_0 / Q5_1 add 16 to the nibble
// bytes their fifth-bit masks select (Q5_0 then subtracts 16 * sum(x)); IQ4_NL and MXFP4 look
// their nibbles up in their code book by one byte shuffle (AVX-512: the table + 128, then
// minus 128 * sum(x); AVX2: signed values and |w| * sign(x, w)). Every way gives the exact
// I_b, and the float chain is the one matmul_internal.h fixes, so all paths agree bit for bit.
// MXFP4's scales are 16 E8M0 bytes, widened to the fp32 2^(e - 128) with integer ops: the
// exponent field e - 1 for e >= 2, the denormal bits 0x00200000 << e for e = 0 / 1.
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

inline int32_t load_i32(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

template <class U>
inline U load_bits(const uint8_t* p) {
  U v;
  std::memcpy(&v, p, sizeof(U));
  return v;
}

// Types whose packed blocks are 4 chunks of nibbles (all but Q8_0), with a min chain.
constexpr bool has_min_chain(DType t) { return t == DType::Q4_1 || t == DType::Q5_1; }
constexpr bool has_fifth_bit(DType t) { return t == DType::Q5_0 || t == DType::Q5_1; }
// Types whose nibbles index a 16-entry code book.
constexpr bool has_table(DType t) { return t == DType::IQ4_NL || t == DType::MXFP4; }
// Amount to subtract times sum(x) to undo the unsigned offset of the stored weights (VNNI).
constexpr int vnni_offset(DType t) {
  return t == DType::Q8_0 || has_table(t) ? 128 : t == DType::Q4_0 ? 8 : t == DType::Q5_0 ? 16 : 0;
}

// Token pointers of a tile.
template <int TT>
struct TileActs {
  const int8_t* q[TT];
  const float* d[TT];
  const float* s[TT];
  const int32_t* sum[TT];
  TileActs(const ActView& a, int64_t t0) {
    VT_UNROLL
    for (int t = 0; t < TT; ++t) {
      q[t] = a.qs + (t0 + t) * a.cols;
      d[t] = a.d + (t0 + t) * a.n_blocks;
      s[t] = a.s + (t0 + t) * a.n_blocks;
      sum[t] = a.xsum + (t0 + t) * a.n_blocks;
    }
  }
};

#if VT_MM_VNNI

// The 16 rows' MXFP4 scales 2^(e - 128) from their exponent bytes at p (e8m0_half).
inline __m512 e8m0_half_x16(const uint8_t* p) {
  const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
  const __m512i denormal = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
  const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
  return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, denormal));
}

// Rows [g*16, g*16 + n_rows) of the group at `grp` for tokens [t0, t0 + TT).
template <DType T, int TT>
void packed_tile(const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y,
                 int64_t ldy, int n_rows, const GroupPrefetch& pf) {
  constexpr PackedLayout L = packed_layout(T);
  const TileActs<TT> x(a, t0);
  __m512 acc[TT], macc[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) acc[t] = macc[t] = _mm512_setzero_ps();
  const __m512i m4 = _mm512_set1_epi8(0xF), c16 = _mm512_set1_epi8(16);
  // The code books + 128 (unsigned for vpdpbusd).
  alignas(16) static constexpr uint8_t kIQ4Unsigned[16] = {1,   24,  45,  63,  79,  93,  106, 118,
                                                           129, 141, 153, 166, 181, 197, 217, 241};
  alignas(16) static constexpr uint8_t kMXFP4Unsigned[16] = {
      128, 129, 130, 131, 132, 134, 136, 140, 128, 127, 126, 125, 124, 122, 120, 116};
  const __m512i table = _mm512_broadcast_i32x4(_mm_load_si128(
      reinterpret_cast<const __m128i*>(T == DType::MXFP4 ? kMXFP4Unsigned : kIQ4Unsigned)));
  for (int64_t b = 0; b < nb; ++b) {
    pf.at(b);
    const uint8_t* pb = grp + b * L.block();
    const uint8_t* q = pb + L.chunks();
    const int64_t xo = b * kQK;
    __m512i is[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) is[t] = _mm512_setzero_si512();
    if constexpr (T == DType::Q8_0) {
      VT_UNROLL
      for (int k = 0; k < 8; ++k) {
        const __m512i wv = _mm512_loadu_si512(q + 64 * k);
        VT_UNROLL
        for (int t = 0; t < TT; ++t)
          is[t] = _mm512_dpbusd_epi32(is[t], wv, _mm512_set1_epi32(load_i32(x.q[t] + xo + 4 * k)));
      }
    } else {
      VT_UNROLL
      for (int k = 0; k < 4; ++k) {
        const __m512i raw = _mm512_loadu_si512(q + 64 * k);
        __m512i lo = _mm512_and_si512(raw, m4);
        __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4);
        if constexpr (has_fifth_bit(T)) {
          const uint8_t* mk = pb + L.hdr + 16 * k;
          lo = _mm512_mask_add_epi8(lo, _cvtu64_mask64(load_bits<uint64_t>(mk)), lo, c16);
          hi = _mm512_mask_add_epi8(hi, _cvtu64_mask64(load_bits<uint64_t>(mk + 8)), hi, c16);
        }
        if constexpr (has_table(T)) {
          lo = _mm512_shuffle_epi8(table, lo);
          hi = _mm512_shuffle_epi8(table, hi);
        }
        VT_UNROLL
        for (int t = 0; t < TT; ++t) {
          is[t] = _mm512_dpbusd_epi32(is[t], lo, _mm512_set1_epi32(load_i32(x.q[t] + xo + 4 * k)));
          is[t] =
              _mm512_dpbusd_epi32(is[t], hi, _mm512_set1_epi32(load_i32(x.q[t] + xo + 16 + 4 * k)));
        }
      }
    }
    __m512 dw;
    if constexpr (T == DType::MXFP4)
      dw = e8m0_half_x16(pb);
    else
      dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb)));
    __m512 mw;
    if constexpr (has_min_chain(T))
      mw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + 32)));
    VT_UNROLL
    for (int t = 0; t < TT; ++t) {
      __m512i v = is[t];
      if constexpr (vnni_offset(T) != 0)
        v = _mm512_sub_epi32(v, _mm512_set1_epi32(vnni_offset(T) * x.sum[t][b]));
      const __m512 dd = _mm512_mul_ps(dw, _mm512_set1_ps(x.d[t][b]));
      acc[t] = _mm512_fmadd_ps(dd, _mm512_cvtepi32_ps(v), acc[t]);
      if constexpr (has_min_chain(T))
        macc[t] = _mm512_fmadd_ps(mw, _mm512_set1_ps(x.s[t][b]), macc[t]);
    }
  }
  const __mmask16 mask = static_cast<__mmask16>((1u << n_rows) - 1);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) {
    const __m512 v = has_min_chain(T) ? _mm512_add_ps(acc[t], macc[t]) : acc[t];
    _mm512_mask_storeu_ps(y + (t0 + t) * ldy, mask, v);
  }
}

constexpr int kPackedTMax = 8;
constexpr int kPackedPasses = 1;

#else

// 16 in each of 32 bytes whose bit is set in `bits` (byte i <- bit i): a Q5 fifth-bit mask.
inline __m256i fifth_bits(uint32_t bits) {
  const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                          2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3);
  const __m256i sel = _mm256_set1_epi64x(static_cast<int64_t>(0x8040201008040201ull));
  const __m256i v = _mm256_shuffle_epi8(_mm256_set1_epi32(static_cast<int32_t>(bits)), spread);
  return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(v, sel), sel), _mm256_set1_epi8(16));
}

// 8 rows' MXFP4 scales 2^(e - 128) from their exponent bytes at p (e8m0_half).
inline __m256 e8m0_half_x8(const uint8_t* p) {
  const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
  const __m256i denormal = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
  const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
  return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, denormal, small));
}

// The AVX2 integer dots keep maddubs's int16 pair sums in int16 across a few chunks (as many
// as the weight's bit width allows without overflow: |activation| <= 128) and widen them
// with one madd per run instead of one per chunk: half the multiply-port work per chunk.
// The integers are exact either way, so the result is unchanged.
inline __m256i dot_u8s8_i16(__m256i s16, bool first, __m256i u, __m256i s) {
  const __m256i p = _mm256_maddubs_epi16(u, s);
  __m256i r = first ? p : _mm256_add_epi16(s16, p);
  // Keeps the sum a chain in a register: left alone, GCC re-associates the adds into a
  // tree and spills its leaves, which cost more than the madds saved.
  asm("" : "+x"(r));
  return r;
}
inline __m256i widen_i16(__m256i acc, __m256i s16) {
  return _mm256_add_epi32(acc, _mm256_madd_epi16(s16, _mm256_set1_epi16(1)));
}

// AVX2: the group as two 8-row halves (the low and high 32 bytes of each chunk).
template <DType T, int TT>
void packed_half(const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y,
                 int64_t ldy, int h, int n_rows, const GroupPrefetch& pf) {
  constexpr PackedLayout L = packed_layout(T);
  const TileActs<TT> x(a, t0);
  __m256 acc[TT], macc[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) acc[t] = macc[t] = _mm256_setzero_ps();
  const __m256i m4 = _mm256_set1_epi8(0xF), flip = _mm256_set1_epi8(static_cast<char>(0x80));
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(
      reinterpret_cast<const __m128i*>(T == DType::MXFP4 ? kMXFP4Values : kIQ4Values)));
  for (int64_t b = 0; b < nb; ++b) {
    pf.at(h * nb + b);
    const uint8_t* pb = grp + b * L.block();
    const uint8_t* q = pb + L.chunks() + 32 * h;
    const int64_t xo = b * kQK;
    __m256i is[TT], s16[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) is[t] = _mm256_setzero_si256();
    if constexpr (T == DType::Q8_0) {
      VT_UNROLL
      for (int k = 0; k < 8; ++k) {
        const __m256i w = _mm256_xor_si256(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64 * k)), flip);
        const __m256i u = _mm256_abs_epi8(w);
        VT_UNROLL
        for (int t = 0; t < TT; ++t) {
          const __m256i xv = _mm256_set1_epi32(load_i32(x.q[t] + xo + 4 * k));
          is[t] = dot_u8s8(is[t], u, _mm256_sign_epi8(xv, w));
        }
      }
    } else {
      VT_UNROLL
      for (int k = 0; k < 4; ++k) {
        const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 64 * k));
        __m256i lo = _mm256_and_si256(raw, m4);
        __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
        if constexpr (has_fifth_bit(T)) {
          const uint8_t* mk = pb + L.hdr + 16 * k + 4 * h;
          lo = _mm256_or_si256(lo, fifth_bits(load_bits<uint32_t>(mk)));
          hi = _mm256_or_si256(hi, fifth_bits(load_bits<uint32_t>(mk + 8)));
        }
        if constexpr (T == DType::IQ4_NL) {
          const __m256i wl = _mm256_shuffle_epi8(table, lo), wh = _mm256_shuffle_epi8(table, hi);
          const __m256i ul = _mm256_abs_epi8(wl), uh = _mm256_abs_epi8(wh);
          VT_UNROLL
          for (int t = 0; t < TT; ++t) {
            const __m256i xl = _mm256_set1_epi32(load_i32(x.q[t] + xo + 4 * k));
            const __m256i xh = _mm256_set1_epi32(load_i32(x.q[t] + xo + 16 + 4 * k));
            is[t] = dot_u8s8(is[t], ul, _mm256_sign_epi8(xl, wl));
            is[t] = dot_u8s8(is[t], uh, _mm256_sign_epi8(xh, wh));
          }
          continue;
        }
        if constexpr (T == DType::MXFP4) {
          // |w| <= 12: the whole block's int16 sums fit (8 pair sums of at most 2 * 12 * 128).
          const __m256i wl = _mm256_shuffle_epi8(table, lo), wh = _mm256_shuffle_epi8(table, hi);
          const __m256i ul = _mm256_abs_epi8(wl), uh = _mm256_abs_epi8(wh);
          VT_UNROLL
          for (int t = 0; t < TT; ++t) {
            const __m256i xl = _mm256_set1_epi32(load_i32(x.q[t] + xo + 4 * k));
            const __m256i xh = _mm256_set1_epi32(load_i32(x.q[t] + xo + 16 + 4 * k));
            s16[t] = dot_u8s8_i16(s16[t], k == 0, ul, _mm256_sign_epi8(xl, wl));
            s16[t] = dot_u8s8_i16(s16[t], false, uh, _mm256_sign_epi8(xh, wh));
          }
          if (k == 3) {
            VT_UNROLL
            for (int t = 0; t < TT; ++t) is[t] = widen_i16(is[t], s16[t]);
          }
          continue;
        }
        // 4-bit weights: the whole block's int16 sums fit (8 chunks of at most
        // 2 * 15 * 128); 5-bit ones: half of it.
        constexpr int kRun = has_fifth_bit(T) ? 2 : 4;
        VT_UNROLL
        for (int t = 0; t < TT; ++t) {
          s16[t] = dot_u8s8_i16(s16[t], k % kRun == 0, lo,
                                _mm256_set1_epi32(load_i32(x.q[t] + xo + 4 * k)));
          s16[t] = dot_u8s8_i16(s16[t], false, hi,
                                _mm256_set1_epi32(load_i32(x.q[t] + xo + 16 + 4 * k)));
        }
        if (k % kRun == kRun - 1) {
          VT_UNROLL
          for (int t = 0; t < TT; ++t) is[t] = widen_i16(is[t], s16[t]);
        }
      }
    }
    __m256 dw;
    if constexpr (T == DType::MXFP4)
      dw = e8m0_half_x8(pb + 8 * h);
    else
      dw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 16 * h)));
    __m256 mw;
    if constexpr (has_min_chain(T))
      mw = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 32 + 16 * h)));
    VT_UNROLL
    for (int t = 0; t < TT; ++t) {
      __m256i v = is[t];
      if constexpr (T == DType::Q4_0) v = _mm256_sub_epi32(v, _mm256_set1_epi32(8 * x.sum[t][b]));
      if constexpr (T == DType::Q5_0) v = _mm256_sub_epi32(v, _mm256_set1_epi32(16 * x.sum[t][b]));
      const __m256 dd = _mm256_mul_ps(dw, _mm256_set1_ps(x.d[t][b]));
      acc[t] = _mm256_fmadd_ps(dd, _mm256_cvtepi32_ps(v), acc[t]);
      if constexpr (has_min_chain(T))
        macc[t] = _mm256_fmadd_ps(mw, _mm256_set1_ps(x.s[t][b]), macc[t]);
    }
  }
  const int n = std::clamp(n_rows - 8 * h, 0, 8);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) {
    const __m256 v = has_min_chain(T) ? _mm256_add_ps(acc[t], macc[t]) : acc[t];
    float* dst = y + (t0 + t) * ldy + 8 * h;
    if (n == 8) {
      _mm256_storeu_ps(dst, v);
    } else {
      alignas(32) float tmp[8];
      _mm256_store_ps(tmp, v);
      std::memcpy(dst, tmp, static_cast<size_t>(n) * sizeof(float));
    }
  }
}

template <DType T, int TT>
void packed_tile(const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y,
                 int64_t ldy, int n_rows, const GroupPrefetch& pf) {
  packed_half<T, TT>(grp, nb, a, t0, y, ldy, 0, n_rows, pf);
  if (n_rows > 8) packed_half<T, TT>(grp, nb, a, t0, y, ldy, 1, n_rows, pf);
}

constexpr int kPackedTMax = 4;
constexpr int kPackedPasses = 2;  // passes over a group per tile (pf.at steps = passes x blocks)

#endif

// The tile for n tokens, 1 <= n <= the maximum (packed_groups' token tiles).
template <DType T, int TT = kPackedTMax>
void packed_tile_n(int n, const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y,
                   int64_t ldy, int n_rows, const GroupPrefetch& pf) {
  if constexpr (TT > 0) {
    if (n == TT) return packed_tile<T, TT>(grp, nb, a, t0, y, ldy, n_rows, pf);
    packed_tile_n<T, TT - 1>(n, grp, nb, a, t0, y, ldy, n_rows, pf);
  }
}

template <DType T>
void packed_rows(const WeightView& w, const ActView& a, int64_t r0, int64_t r1, float* y,
                 int64_t ldy) {
  packed_groups<kPackedTMax, kPackedPasses>(
      w, a, r0, r1,
      [&](const uint8_t* grp, int64_t r, int n_rows, int64_t t0, int n, const GroupPrefetch& pf) {
        packed_tile_n<T>(n, grp, a.n_blocks, a, t0, y + r, ldy, n_rows, pf);
      });
}

}  // namespace
}  // namespace vt::cpu::VT_MM_NS

#pragma GCC diagnostic pop
