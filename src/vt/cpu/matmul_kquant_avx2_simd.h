// AVX2 K-quant tiles of matmul_kquant_simd.h (see its comment for the contract and the
// integer / float steps every ISA shares). A fragment included inside that file's namespace;
// no include guard on purpose.

// AVX2: all 256 scale / min bytes as in the AVX-512 version, 32 bytes at a time.
inline void unpack_kscales(const uint8_t* s, uint8_t* out) {
  const __m256i m4 = _mm256_set1_epi8(0x0F), m30 = _mm256_set1_epi8(0x30);
  for (int half = 0; half < 2; ++half) {
    const int o = 32 * half;
    const __m256i sc = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + o));
    const __m256i mn = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 64 + o));
    const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + 128 + o));
    auto lo4 = [&](__m256i v) { return _mm256_and_si256(v, m4); };
    auto up4 = [&](__m256i v) { return _mm256_and_si256(_mm256_srli_epi16(v, 4), m4); };
    auto bits45 = [&](__m256i v) { return _mm256_and_si256(v, m30); };
    auto st = [&](int off, __m256i v) {
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + off + o), v);
    };
    st(0, _mm256_or_si256(lo4(sc), bits45(_mm256_slli_epi16(hi, 4))));
    st(64, _mm256_or_si256(up4(sc), bits45(_mm256_slli_epi16(hi, 2))));
    st(128, _mm256_or_si256(lo4(mn), bits45(hi)));
    st(192, _mm256_or_si256(up4(mn), bits45(_mm256_srli_epi16(hi, 2))));
  }
}

template <int TT>
inline void store_half(const __m256 (&acc)[TT], float* y, int64_t t0, int64_t ldy, int h,
                       int n_rows) {
  const int n = std::clamp(n_rows - 8 * h, 0, 8);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) {
    float* dst = y + (t0 + t) * ldy + 8 * h;
    if (n == 8) {
      _mm256_storeu_ps(dst, acc[t]);
    } else {
      alignas(32) float tmp[8];
      _mm256_store_ps(tmp, acc[t]);
      std::memcpy(dst, tmp, static_cast<size_t>(n) * sizeof(float));
    }
  }
}

// 8 rows' (a[r], b[r]) int16 pairs from 8 unsigned bytes each.
inline __m256i pairs_u8(const uint8_t* a, const uint8_t* b) {
  const __m128i va = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a));
  const __m128i vb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b));
  return _mm256_cvtepu8_epi16(_mm_unpacklo_epi8(va, vb));
}

// 8 scales as floats from 8 unsigned (Q4_K / Q5_K) or signed (Q6_K) bytes.
inline __m256 scales_u8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}
inline __m256 scales_s8(const uint8_t* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// f = fma(scale, I, f) with I held as the bits of 1.5 * 2^23 + I (kMagic) or, kPlain, as the
// int32 itself: either conversion is exact (|I| < 2^22), so the float is the same.
template <bool kPlain = false>
inline __m256 fold_scaled(__m256 f, __m256 scale, __m256i sum) {
  const __m256 i = kPlain ? _mm256_cvtepi32_ps(sum)
                          : _mm256_sub_ps(_mm256_castsi256_ps(sum), _mm256_set1_ps(kMagic));
  return _mm256_fmadd_ps(scale, i, f);
}

// fifth_bits, dot_u8s8_i16 and widen_i16 come from matmul_packed_simd.h.

// The per-(half, token) steps both tile kinds share.
template <int NH, int TT>
__attribute__((always_inline)) inline void zero_tile(__m256 (&v)[NH][TT]) {
  VT_UNROLL
  for (int hx = 0; hx < NH; ++hx) {
    VT_UNROLL
    for (int t = 0; t < TT; ++t) v[hx][t] = _mm256_setzero_ps();
  }
}
template <int NH, int TT>
__attribute__((always_inline)) inline void widen_tile(__m256i (&is)[NH][TT],
                                                      const __m256i (&s16)[NH][TT]) {
  VT_UNROLL
  for (int hx = 0; hx < NH; ++hx) {
    VT_UNROLL
    for (int t = 0; t < TT; ++t) is[hx][t] = widen_i16(is[hx][t], s16[hx][t]);
  }
}
// f = fma(scale, I, f) with half hx's 8 row scales scale_of(hx).
template <int NH, int TT, bool kPlain = false, class ScaleOf>
__attribute__((always_inline)) inline void fold_tile(__m256 (&f)[NH][TT],
                                                     const __m256i (&is)[NH][TT],
                                                     ScaleOf scale_of) {
  VT_UNROLL
  for (int hx = 0; hx < NH; ++hx) {
    const __m256 sc = scale_of(hx);
    VT_UNROLL
    for (int t = 0; t < TT; ++t) f[hx][t] = fold_scaled<kPlain>(f[hx][t], sc, is[hx][t]);
  }
}

// Chunk k's low (nh = 0) or high nibbles of rows 8h..8h+7 of a packed Q4_K / Q5_K
// super-block pb as unsigned bytes (Q5_K: with the fifth bit); q points at the chunk's half.
template <DType T>
__attribute__((always_inline)) inline __m256i kq45_weights(const uint8_t* pb, const uint8_t* q,
                                                           int k, int nh, int h, __m256i m4) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  __m256i w = nh ? _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4) : _mm256_and_si256(raw, m4);
  if constexpr (T == DType::Q5_K) {
    uint32_t bits;
    std::memcpy(&bits, pb + kquant_layout(T).qh + 8 * (2 * k + nh) + 4 * h, 4);
    w = _mm256_or_si256(w, fifth_bits(bits));
  }
  return w;
}

// A decoded super-block is its kKqDecBlock weight bytes alone here.
constexpr int64_t kKqDecStride = kKqDecBlock;

// Half h of piece `piece` of super-block b of a decoded group (kKqDecBlock,
// matmul_kquant_simd.h).
__attribute__((always_inline)) inline __m256i kq_decoded(const uint8_t* dec, int64_t b, int piece,
                                                         int h) {
  return _mm256_load_si256(
      reinterpret_cast<const __m256i*>(dec + b * kKqDecBlock + 64 * piece + 32 * h));
}

// Rows 8h..8h+7 of a Q4_K / Q5_K group for h = h0 .. h0 + NH - 1. NH = 2 runs both halves in
// one pass (one-token tiles: each 64-byte chunk is read once, its activation broadcast
// shared); every row's operations and their order are the same either way. DEC: the weight
// bytes come already decoded from `dec` (kq_decode_group) instead of from the packed chunks.
template <DType T, int TT, int NH, bool DEC>
__attribute__((noinline)) void kq45_halves(const uint8_t* grp, const uint8_t* dec, int64_t nb,
                                           const ActView& a, int64_t t0, float* y, int64_t ldy,
                                           int h0, int n_rows, const GroupPrefetch& pf) {
  constexpr KQuantLayout L = kquant_layout(T);
  // Chunks summed in int16 before widening: 4-bit weights give pairs of at most
  // 2 * 15 * 128 = 3840, so all 8 of a sub-block fit; 5-bit ones 2 * 31 * 128 = 7936, four.
  constexpr int kRun = T == DType::Q4_K ? 8 : 4;
  const KTileActs<TT> x(a, t0);
  __m256 acc[NH][TT];
  zero_tile(acc);
  const __m256i m4 = _mm256_set1_epi8(0xF);
  alignas(32) uint8_t scm[256];
  for (int64_t b = 0; b < nb; ++b) {
    VT_UNROLL
    for (int hx = 0; hx < NH; ++hx) pf.at((h0 + hx) * nb + b);
    const uint8_t* pb = grp + b * L.block;
    const uint8_t* q = pb + L.qs + 32 * h0;
    const int64_t xo = b * kQK_K;
    unpack_kscales(pb + kKScales, scm);
    __m256 f[NH][TT];
    zero_tile(f);
    for (int p = 0; p < 4; ++p) {
      VT_UNROLL
      for (int nh = 0; nh < 2; ++nh) {
        const int j = 2 * p + nh;
        __m256i is[NH][TT], s16[NH][TT];
        VT_UNROLL
        for (int hx = 0; hx < NH; ++hx) {
          VT_UNROLL
          for (int t = 0; t < TT; ++t) is[hx][t] = _mm256_setzero_si256();
        }
        VT_UNROLL
        for (int c = 0; c < 8; ++c) {
          const int k = 8 * p + c;
          __m256i xv[TT];
          VT_UNROLL
          for (int t = 0; t < TT; ++t)
            xv[t] = _mm256_set1_epi32(load_i32(x.q[t] + xo + 32 * j + 4 * c));
          VT_UNROLL
          for (int hx = 0; hx < NH; ++hx) {
            const __m256i w = DEC ? kq_decoded(dec, b, 2 * k + nh, h0 + hx)
                                  : kq45_weights<T>(pb, q + 64 * k + 32 * hx, k, nh, h0 + hx, m4);
            VT_UNROLL
            for (int t = 0; t < TT; ++t)
              s16[hx][t] = dot_u8s8_i16(s16[hx][t], c % kRun == 0, w, xv[t]);
          }
          if (c % kRun == kRun - 1) widen_tile(is, s16);
        }
        fold_tile<NH, TT, true>(f, is,
                                [&](int hx) { return scales_u8(scm + 16 * j + 8 * (h0 + hx)); });
      }
    }
    VT_UNROLL
    for (int hx = 0; hx < NH; ++hx) {
      const int h = h0 + hx;
      const __m256 dw =
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 16 * h)));
      const __m256 dmw =
          _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 32 + 16 * h)));
      VT_UNROLL
      for (int t = 0; t < TT; ++t)
        acc[hx][t] =
            _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(x.d[t][b])), f[hx][t], acc[hx][t]);
      __m256i msum[TT];
      VT_UNROLL
      for (int t = 0; t < TT; ++t) msum[t] = _mm256_setzero_si256();
      VT_UNROLL
      for (int k = 0; k < 4; ++k) {
        const __m256i mv = pairs_u8(scm + 128 + 32 * k + 8 * h, scm + 128 + 32 * k + 16 + 8 * h);
        VT_UNROLL
        for (int t = 0; t < TT; ++t)
          msum[t] =
              _mm256_add_epi32(msum[t], _mm256_madd_epi16(mv, _mm256_set1_epi32(x.pair(t, b, k))));
      }
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const __m256 dm = _mm256_mul_ps(dmw, _mm256_set1_ps(x.d[t][b]));
        acc[hx][t] = _mm256_fnmadd_ps(dm, _mm256_cvtepi32_ps(msum[t]), acc[hx][t]);
      }
    }
  }
  VT_UNROLL
  for (int hx = 0; hx < NH; ++hx) store_half(acc[hx], y, t0, ldy, h0 + hx, n_rows);
}

template <int KP>
inline __m256i q6_weights(const uint8_t* ql, const uint8_t* qh, __m256i m4, __m256i m30) {
  const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(ql));
  const __m256i nib =
      KP >= 2 ? _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4) : _mm256_and_si256(raw, m4);
  const __m256i hv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
  const __m256i hs = KP == 0   ? _mm256_slli_epi16(hv, 4)
                     : KP == 1 ? _mm256_slli_epi16(hv, 2)
                     : KP == 2 ? hv
                               : _mm256_srli_epi16(hv, 2);
  return _mm256_or_si256(nib, _mm256_and_si256(hs, m30));
}

// Rows 8h..8h+7, h = h0 .. h0 + NH - 1, of Q6_K group g = 8 hh + 2 KP + gi (see the AVX-512
// kq6_group).
template <int KP, int TT, int NH, bool DEC>
__attribute__((always_inline)) inline void kq6_group(const uint8_t* pb, const uint8_t* dec,
                                                     int64_t b, int h0, int hh, int gi,
                                                     const KTileActs<TT>& x, int64_t xo,
                                                     const int32_t (&starts)[TT][16],
                                                     __m256 (&f)[NH][TT], __m256i m4, __m256i m30) {
  constexpr KQuantLayout L = kquant_layout(DType::Q6_K);
  const int g = 8 * hh + 2 * KP + gi;
  __m256i is[NH][TT], s16[NH][TT];
  VT_UNROLL
  for (int hx = 0; hx < NH; ++hx) {
    VT_UNROLL
    for (int t = 0; t < TT; ++t) is[hx][t] = _mm256_set1_epi32(starts[t][g]);
  }
  VT_UNROLL
  for (int cc = 0; cc < 4; ++cc) {
    const int c = 4 * gi + cc;
    __m256i xv[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) xv[t] = _mm256_set1_epi32(load_i32(x.q[t] + xo + 16 * g + 4 * cc));
    VT_UNROLL
    for (int hx = 0; hx < NH; ++hx) {
      const int h = h0 + hx;
      const __m256i w = DEC ? kq_decoded(dec, b, 4 * g + cc, h)
                            : q6_weights<KP>(pb + L.qs + 64 * (16 * hh + 8 * (KP & 1) + c) + 32 * h,
                                             pb + L.qh + 64 * (8 * hh + c) + 32 * h, m4, m30);
      // 6-bit weights: pairs of at most 2 * 63 * 128 = 16128, two chunks per int16 sum.
      VT_UNROLL
      for (int t = 0; t < TT; ++t) s16[hx][t] = dot_u8s8_i16(s16[hx][t], cc % 2 == 0, w, xv[t]);
    }
    if (cc % 2 == 1) widen_tile(is, s16);
  }
  fold_tile(f, is, [&](int hx) { return scales_s8(pb + 16 * g + 8 * (h0 + hx)); });
}

template <int TT, int NH, bool DEC>
void kq6_halves(const uint8_t* grp, const uint8_t* dec, int64_t nb, const ActView& a, int64_t t0,
                float* y, int64_t ldy, int h0, int n_rows, const GroupPrefetch& pf) {
  constexpr KQuantLayout L = kquant_layout(DType::Q6_K);
  const KTileActs<TT> x(a, t0);
  __m256 acc[NH][TT];
  zero_tile(acc);
  const __m256i m4 = _mm256_set1_epi8(0xF), m30 = _mm256_set1_epi8(0x30);
  for (int64_t b = 0; b < nb; ++b) {
    VT_UNROLL
    for (int hx = 0; hx < NH; ++hx) pf.at((h0 + hx) * nb + b);
    const uint8_t* pb = grp + b * L.block;
    const int64_t xo = b * kQK_K;
    alignas(32) int32_t starts[TT][16];
    kq6_starts<TT>(x, b, starts);
    __m256 f[NH][TT];
    zero_tile(f);
    for (int hh = 0; hh < 2; ++hh) {
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<0, TT, NH, DEC>(pb, dec, b, h0, hh, gi, x, xo, starts, f, m4, m30);
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<1, TT, NH, DEC>(pb, dec, b, h0, hh, gi, x, xo, starts, f, m4, m30);
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<2, TT, NH, DEC>(pb, dec, b, h0, hh, gi, x, xo, starts, f, m4, m30);
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<3, TT, NH, DEC>(pb, dec, b, h0, hh, gi, x, xo, starts, f, m4, m30);
    }
    VT_UNROLL
    for (int hx = 0; hx < NH; ++hx) {
      const __m256 dw = _mm256_cvtph_ps(_mm_loadu_si128(
          reinterpret_cast<const __m128i*>(grp + nb * L.block + 32 * b + 16 * (h0 + hx))));
      VT_UNROLL
      for (int t = 0; t < TT; ++t)
        acc[hx][t] =
            _mm256_fmadd_ps(_mm256_mul_ps(dw, _mm256_set1_ps(x.d[t][b])), f[hx][t], acc[hx][t]);
    }
  }
  VT_UNROLL
  for (int hx = 0; hx < NH; ++hx) store_half(acc[hx], y, t0, ldy, h0 + hx, n_rows);
}

// One-token tiles run both halves in one pass (their registers fit twice); wider tiles one
// half per pass, except decoded Q4_K / Q5_K tiles of an even TT >= 4: two passes of TT / 2
// tokens over both halves, the same int16 sums in registers, but each activation broadcast
// feeds two vpmaddubsw instead of one (the broadcasts bound these tiles). DEC: dec holds the
// group decoded by kq_decode_group.
template <DType T, int TT, bool DEC = false>
void kq_tile(const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y, int64_t ldy,
             int n_rows, const GroupPrefetch& pf, const uint8_t* dec = nullptr) {
  if constexpr (DEC && T != DType::Q6_K && TT % 2 == 0 && TT >= 4) {
    if (n_rows > 8) {
      kq45_halves<T, TT / 2, 2, DEC>(grp, dec, nb, a, t0, y, ldy, 0, n_rows, pf);
      kq45_halves<T, TT / 2, 2, DEC>(grp, dec, nb, a, t0 + TT / 2, y, ldy, 0, n_rows, pf);
      return;
    }
  }
  if constexpr (TT == 1) {
    if (n_rows > 8) {
      if constexpr (T == DType::Q6_K)
        kq6_halves<1, 2, DEC>(grp, dec, nb, a, t0, y, ldy, 0, n_rows, pf);
      else
        kq45_halves<T, 1, 2, DEC>(grp, dec, nb, a, t0, y, ldy, 0, n_rows, pf);
      return;
    }
  }
  for (int h = 0; h < 2 && 8 * h < n_rows; ++h) {
    if constexpr (T == DType::Q6_K)
      kq6_halves<TT, 1, DEC>(grp, dec, nb, a, t0, y, ldy, h, n_rows, pf);
    else
      kq45_halves<T, TT, 1, DEC>(grp, dec, nb, a, t0, y, ldy, h, n_rows, pf);
  }
}

// Tokens per tile: the 4- and 5-bit kernels keep TT int16 sums, TT broadcasts and one
// weight vector in registers; Q6_K's longer weight decode and per-16-element folds leave
// room for fewer before the compiler spills.
template <DType T>
constexpr int kKqTMax = T == DType::Q6_K ? 4 : 8;
constexpr int kKqPasses = 2;

// Q6_K groups 8 hh + 2 KP + gi of super-block pb into the decoded super-block out.
template <int KP>
inline void kq6_decode_groups(const uint8_t* pb, uint8_t* out, __m256i m4, __m256i m30) {
  constexpr KQuantLayout L = kquant_layout(DType::Q6_K);
  for (int hh = 0; hh < 2; ++hh)
    for (int gi = 0; gi < 2; ++gi)
      for (int cc = 0; cc < 4; ++cc)
        for (int h = 0; h < 2; ++h) {
          const int g = 8 * hh + 2 * KP + gi, c = 4 * gi + cc;
          _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * (4 * g + cc) + 32 * h),
                             q6_weights<KP>(pb + L.qs + 64 * (16 * hh + 8 * (KP & 1) + c) + 32 * h,
                                            pb + L.qh + 64 * (8 * hh + c) + 32 * h, m4, m30));
        }
}

// Group grp's nb super-blocks as kq_decoded reads them: the weight decode of the tiles, done
// once for every token tile of a chunk instead of once per tile.
template <DType T>
void kq_decode_group(const uint8_t* grp, int64_t nb, uint8_t* dec) {
  const int64_t block = kquant_layout(T).block, qs = kquant_layout(T).qs;
  const __m256i m4 = _mm256_set1_epi8(0xF), m30 = _mm256_set1_epi8(0x30);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = grp + b * block;
    uint8_t* out = dec + b * kKqDecBlock;
    if constexpr (T == DType::Q6_K) {
      kq6_decode_groups<0>(pb, out, m4, m30);
      kq6_decode_groups<1>(pb, out, m4, m30);
      kq6_decode_groups<2>(pb, out, m4, m30);
      kq6_decode_groups<3>(pb, out, m4, m30);
    } else {
      for (int k = 0; k < 32; ++k)
        for (int nh = 0; nh < 2; ++nh)
          for (int h = 0; h < 2; ++h)
            _mm256_store_si256(reinterpret_cast<__m256i*>(out + 64 * (2 * k + nh) + 32 * h),
                               kq45_weights<T>(pb, pb + qs + 64 * k + 32 * h, k, nh, h, m4));
    }
  }
}
