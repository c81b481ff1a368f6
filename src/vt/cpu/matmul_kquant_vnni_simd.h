// AVX-512 VNNI K-quant tiles of matmul_kquant_simd.h (see its comment for the contract and the
// integer / float steps every ISA shares). A fragment included inside that file's namespace;
// no include guard on purpose.

// All 256 scale (out[16 j + r]) and min (out[128 + 16 j + r]) bytes of a packed Q4_K / Q5_K
// super-block from its three 64-byte vectors (kquant.h).
inline void unpack_kscales(const uint8_t* s, uint8_t* out) {
  const __m512i m4 = _mm512_set1_epi8(0x0F), m30 = _mm512_set1_epi8(0x30);
  const __m512i sc = _mm512_loadu_si512(s), mn = _mm512_loadu_si512(s + 64),
                hi = _mm512_loadu_si512(s + 128);
  auto lo4 = [&](__m512i v) { return _mm512_and_si512(v, m4); };
  auto up4 = [&](__m512i v) { return _mm512_and_si512(_mm512_srli_epi16(v, 4), m4); };
  auto bits45 = [&](__m512i v) { return _mm512_and_si512(v, m30); };
  _mm512_store_si512(out, _mm512_or_si512(lo4(sc), bits45(_mm512_slli_epi16(hi, 4))));
  _mm512_store_si512(out + 64, _mm512_or_si512(up4(sc), bits45(_mm512_slli_epi16(hi, 2))));
  _mm512_store_si512(out + 128, _mm512_or_si512(lo4(mn), bits45(hi)));
  _mm512_store_si512(out + 192, _mm512_or_si512(up4(mn), bits45(_mm512_srli_epi16(hi, 2))));
}

// 16 rows' (a[r], b[r]) int16 pairs from 16 unsigned bytes each.
inline __m512i pairs_u8(const uint8_t* a, const uint8_t* b) {
  const __m128i va = _mm_load_si128(reinterpret_cast<const __m128i*>(a));
  const __m128i vb = _mm_load_si128(reinterpret_cast<const __m128i*>(b));
  return _mm512_cvtepu8_epi16(
      _mm256_set_m128i(_mm_unpackhi_epi8(va, vb), _mm_unpacklo_epi8(va, vb)));
}

// F += scale * I for an accumulator that started at kMagicBits (see above).
inline __m512 fold_scaled(__m512 f, __m512 scale, __m512i magic_plus_i) {
  const __m512 i = _mm512_sub_ps(_mm512_castsi512_ps(magic_plus_i), _mm512_set1_ps(kMagic));
  return _mm512_fmadd_ps(scale, i, f);
}

// Chunk k's nibble h (0: low, 1: high) of a packed Q4_K / Q5_K super-block pb (quant chunks
// at q), with the Q5_K fifth bits.
template <DType T>
__attribute__((always_inline)) inline __m512i kq45_weights(const uint8_t* pb, const uint8_t* q,
                                                           int k, int h, __m512i m4, __m512i c16) {
  const __m512i raw = _mm512_loadu_si512(q + 64 * k);
  __m512i w = h ? _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4) : _mm512_and_si512(raw, m4);
  if constexpr (T == DType::Q5_K) {
    uint64_t bits;
    std::memcpy(&bits, pb + kquant_layout(T).qh + 8 * (2 * k + h), 8);
    w = _mm512_mask_add_epi8(w, _cvtu64_mask64(bits), w, c16);
  }
  return w;
}

// A decoded super-block (matmul_kquant_simd.h) is its kKqDecBlock weight bytes followed by
// what each tile's per-super-block tail would otherwise recompute for every token tile of the
// chunk, at these offsets past the weights: Q4_K / Q5_K the 8 sub-block scales of the 16 rows
// as fp32 (0), the mins as the int16 (2k, 2k + 1) pairs pairs_u8 makes (512), d and dmin as
// fp32 (768, 832); Q6_K the 16 group scales as fp32 (0) and d (1024). The same values the
// tails convert, so the same bits.
constexpr int64_t kKqDecStride = kKqDecBlock + 1152;

// Piece `piece` of super-block b of a decoded group.
__attribute__((always_inline)) inline __m512i kq_decoded(const uint8_t* dec, int64_t b, int piece) {
  return _mm512_load_si512(dec + b * kKqDecStride + 64 * piece);
}

// Super-block b's extras (above).
__attribute__((always_inline)) inline const uint8_t* kq_dec_extra(const uint8_t* dec, int64_t b) {
  return dec + b * kKqDecStride + kKqDecBlock;
}
inline __m512 load_extra_ps(const uint8_t* ex, int off) {
  return _mm512_load_ps(reinterpret_cast<const float*>(ex + off));
}

// DEC: the weight bytes come already decoded from `dec` (kq_decode_group) instead of from
// the packed chunks and the Q5_K masks, the scales, mins and d from its extras. Every tile
// takes each token's sub-block sum pairs from the activation (ActView::bsum_pairs).
template <DType T, int TT, bool DEC>
__attribute__((noinline)) void kq45_tile(const uint8_t* grp, const uint8_t* dec, int64_t nb,
                                         const ActView& a, int64_t t0, float* y, int64_t ldy,
                                         int n_rows, const GroupPrefetch& pf) {
  constexpr KQuantLayout L = kquant_layout(T);
  const KTileActs<TT> x(a, t0);
  __m512 acc[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) acc[t] = _mm512_setzero_ps();
  const __m512i m4 = _mm512_set1_epi8(0xF), c16 = _mm512_set1_epi8(16);
  alignas(64) uint8_t scm[256];
  for (int64_t b = 0; b < nb; ++b) {
    pf.at(b);
    const uint8_t* pb = grp + b * L.block;
    const uint8_t* q = pb + L.qs;
    const int64_t xo = b * kQK_K;
    const uint8_t* ex = DEC ? kq_dec_extra(dec, b) : nullptr;
    if constexpr (!DEC) unpack_kscales(pb + kKScales, scm);
    __m512 f[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) f[t] = _mm512_setzero_ps();
    for (int p = 0; p < 4; ++p) {  // sub-blocks 2p (low nibbles) and 2p + 1 (high)
      VT_UNROLL
      for (int h = 0; h < 2; ++h) {
        const int j = 2 * p + h;
        __m512i is[TT];
        VT_UNROLL
        for (int t = 0; t < TT; ++t) is[t] = _mm512_set1_epi32(kMagicBits);
        VT_UNROLL
        for (int c = 0; c < 8; ++c) {
          const int k = 8 * p + c;
          const __m512i w =
              DEC ? kq_decoded(dec, b, 2 * k + h) : kq45_weights<T>(pb, q, k, h, m4, c16);
          VT_UNROLL
          for (int t = 0; t < TT; ++t)
            is[t] = _mm512_dpbusd_epi32(is[t], w,
                                        _mm512_set1_epi32(load_i32(x.q[t] + xo + 32 * j + 4 * c)));
        }
        const __m512 sc = DEC ? load_extra_ps(ex, 64 * j)
                              : _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_load_si128(
                                    reinterpret_cast<const __m128i*>(scm + 16 * j))));
        VT_UNROLL
        for (int t = 0; t < TT; ++t) f[t] = fold_scaled(f[t], sc, is[t]);
      }
    }
    const __m512 dw =
        DEC ? load_extra_ps(ex, 768)
            : _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb)));
    const __m512 dmw =
        DEC ? load_extra_ps(ex, 832)
            : _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + 32)));
    VT_UNROLL
    for (int t = 0; t < TT; ++t)
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(x.d[t][b])), f[t], acc[t]);
    __m512i msum[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) msum[t] = _mm512_setzero_si512();
    VT_UNROLL
    for (int k = 0; k < 4; ++k) {
      const __m512i mv = DEC ? _mm512_load_si512(ex + 512 + 64 * k)
                             : pairs_u8(scm + 128 + 32 * k, scm + 128 + 32 * k + 16);
      VT_UNROLL
      for (int t = 0; t < TT; ++t)
        msum[t] = _mm512_dpwssd_epi32(msum[t], mv, _mm512_set1_epi32(x.pair(t, b, k)));
    }
    VT_UNROLL
    for (int t = 0; t < TT; ++t) {
      const __m512 dm = _mm512_mul_ps(dmw, _mm512_set1_ps(x.d[t][b]));
      acc[t] = _mm512_fnmadd_ps(dm, _mm512_cvtepi32_ps(msum[t]), acc[t]);
    }
  }
  const __mmask16 mask = static_cast<__mmask16>((1u << n_rows) - 1);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * ldy, mask, acc[t]);
}

// The 6-bit values of element chunk c of a Q6_K group for the 16 rows, from one ql chunk
// (nibble KP >> 1) and one qh chunk (bits 2 KP, 2 KP + 1).
template <int KP>
inline __m512i q6_weights(const uint8_t* ql, const uint8_t* qh, __m512i m4, __m512i m30) {
  const __m512i raw = _mm512_loadu_si512(ql);
  const __m512i nib =
      KP >= 2 ? _mm512_and_si512(_mm512_srli_epi16(raw, 4), m4) : _mm512_and_si512(raw, m4);
  const __m512i hv = _mm512_loadu_si512(qh);
  const __m512i hs = KP == 0   ? _mm512_slli_epi16(hv, 4)
                     : KP == 1 ? _mm512_slli_epi16(hv, 2)
                     : KP == 2 ? hv
                               : _mm512_srli_epi16(hv, 2);
  return _mm512_or_si512(nib, _mm512_and_si512(hs, m30));
}

// f += sc_g * I'_g for group g = 8 hh + 2 KP + gi of every row and token: element chunks
// 32 hh + 8 KP + 4 gi + cc, i.e. ql chunk 16 hh + 8 (KP & 1) + 4 gi + cc, qh chunk
// 8 hh + 4 gi + cc (kquant.h).
template <int KP, int TT, bool DEC>
__attribute__((always_inline)) inline void kq6_group(const uint8_t* pb, const uint8_t* dec,
                                                     int64_t b, int hh, int gi,
                                                     const KTileActs<TT>& x, int64_t xo,
                                                     const int32_t (&starts)[TT][16],
                                                     __m512 (&f)[TT], __m512i m4, __m512i m30) {
  constexpr KQuantLayout L = kquant_layout(DType::Q6_K);
  const int g = 8 * hh + 2 * KP + gi;
  __m512i is[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) is[t] = _mm512_set1_epi32(starts[t][g]);
  VT_UNROLL
  for (int cc = 0; cc < 4; ++cc) {
    const int c = 4 * gi + cc;
    const __m512i w = DEC ? kq_decoded(dec, b, 4 * g + cc)
                          : q6_weights<KP>(pb + L.qs + 64 * (16 * hh + 8 * (KP & 1) + c),
                                           pb + L.qh + 64 * (8 * hh + c), m4, m30);
    VT_UNROLL
    for (int t = 0; t < TT; ++t)
      is[t] =
          _mm512_dpbusd_epi32(is[t], w, _mm512_set1_epi32(load_i32(x.q[t] + xo + 16 * g + 4 * cc)));
  }
  const __m512 sc = DEC ? load_extra_ps(kq_dec_extra(dec, b), 64 * g)
                        : _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 16 * g))));
  VT_UNROLL
  for (int t = 0; t < TT; ++t) f[t] = fold_scaled(f[t], sc, is[t]);
}

template <int TT, bool DEC>
void kq6_tile(const uint8_t* grp, const uint8_t* dec, int64_t nb, const ActView& a, int64_t t0,
              float* y, int64_t ldy, int n_rows, const GroupPrefetch& pf) {
  constexpr KQuantLayout L = kquant_layout(DType::Q6_K);
  const KTileActs<TT> x(a, t0);
  __m512 acc[TT];
  VT_UNROLL
  for (int t = 0; t < TT; ++t) acc[t] = _mm512_setzero_ps();
  const __m512i m4 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30);
  for (int64_t b = 0; b < nb; ++b) {
    pf.at(b);
    const uint8_t* pb = grp + b * L.block;
    const int64_t xo = b * kQK_K;
    alignas(32) int32_t starts[TT][16];
    kq6_starts<TT>(x, b, starts);
    __m512 f[TT];
    VT_UNROLL
    for (int t = 0; t < TT; ++t) f[t] = _mm512_setzero_ps();
    for (int hh = 0; hh < 2; ++hh) {  // groups 8 hh .. 8 hh + 7, in order
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<0, TT, DEC>(pb, dec, b, hh, gi, x, xo, starts, f, m4, m30);
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<1, TT, DEC>(pb, dec, b, hh, gi, x, xo, starts, f, m4, m30);
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<2, TT, DEC>(pb, dec, b, hh, gi, x, xo, starts, f, m4, m30);
      VT_UNROLL
      for (int gi = 0; gi < 2; ++gi)
        kq6_group<3, TT, DEC>(pb, dec, b, hh, gi, x, xo, starts, f, m4, m30);
    }
    const __m512 dw = DEC ? load_extra_ps(kq_dec_extra(dec, b), 1024)
                          : _mm512_cvtph_ps(_mm256_loadu_si256(
                                reinterpret_cast<const __m256i*>(grp + nb * L.block + 32 * b)));
    VT_UNROLL
    for (int t = 0; t < TT; ++t)
      acc[t] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(x.d[t][b])), f[t], acc[t]);
  }
  const __mmask16 mask = static_cast<__mmask16>((1u << n_rows) - 1);
  VT_UNROLL
  for (int t = 0; t < TT; ++t) _mm512_mask_storeu_ps(y + (t0 + t) * ldy, mask, acc[t]);
}

// DEC: dec holds the group decoded by kq_decode_group.
template <DType T, int TT, bool DEC = false>
void kq_tile(const uint8_t* grp, int64_t nb, const ActView& a, int64_t t0, float* y, int64_t ldy,
             int n_rows, const GroupPrefetch& pf, const uint8_t* dec = nullptr) {
  if constexpr (T == DType::Q6_K)
    kq6_tile<TT, DEC>(grp, dec, nb, a, t0, y, ldy, n_rows, pf);
  else
    kq45_tile<T, TT, DEC>(grp, dec, nb, a, t0, y, ldy, n_rows, pf);
}

// Group grp's nb super-blocks as kq_decoded reads them: the weight decode of the tiles, done
// once for every token tile of a chunk instead of once per tile.
template <DType T>
void kq_decode_group(const uint8_t* grp, int64_t nb, uint8_t* dec) {
  constexpr KQuantLayout L = kquant_layout(T);
  const __m512i m4 = _mm512_set1_epi8(0xF), m30 = _mm512_set1_epi8(0x30),
                c16 = _mm512_set1_epi8(16);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* pb = grp + b * L.block;
    uint8_t* out = dec + b * kKqDecStride;
    auto put = [&](int piece, __m512i w) { _mm512_store_si512(out + 64 * piece, w); };
    uint8_t* ex = out + kKqDecBlock;
    auto put_ps = [&](int off, __m512 v) {
      _mm512_store_ps(reinterpret_cast<float*>(ex + off), v);
    };
    if constexpr (T == DType::Q6_K) {
      for (int g = 0; g < 16; ++g)
        put_ps(64 * g, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(
                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(pb + 16 * g)))));
      put_ps(1024, _mm512_cvtph_ps(_mm256_loadu_si256(
                       reinterpret_cast<const __m256i*>(grp + nb * L.block + 32 * b))));
    } else {
      alignas(64) uint8_t scm[256];
      unpack_kscales(pb + kKScales, scm);
      for (int j = 0; j < 8; ++j)
        put_ps(64 * j, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(
                           _mm_load_si128(reinterpret_cast<const __m128i*>(scm + 16 * j)))));
      for (int k = 0; k < 4; ++k)
        _mm512_store_si512(ex + 512 + 64 * k,
                           pairs_u8(scm + 128 + 32 * k, scm + 128 + 32 * k + 16));
      put_ps(768, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb))));
      put_ps(832, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(pb + 32))));
    }
    if constexpr (T == DType::Q6_K) {
      for (int hh = 0; hh < 2; ++hh)
        for (int gi = 0; gi < 2; ++gi)
          for (int cc = 0; cc < 4; ++cc) {
            const int c = 4 * gi + cc;
            const uint8_t* ql = pb + L.qs + 64 * (16 * hh + c);
            const uint8_t* qh = pb + L.qh + 64 * (8 * hh + c);
            put(4 * (8 * hh + gi) + cc, q6_weights<0>(ql, qh, m4, m30));
            put(4 * (8 * hh + 2 + gi) + cc, q6_weights<1>(ql + 512, qh, m4, m30));
            put(4 * (8 * hh + 4 + gi) + cc, q6_weights<2>(ql, qh, m4, m30));
            put(4 * (8 * hh + 6 + gi) + cc, q6_weights<3>(ql + 512, qh, m4, m30));
          }
    } else {
      for (int k = 0; k < 32; ++k)
        for (int h = 0; h < 2; ++h) put(2 * k + h, kq45_weights<T>(pb, pb + L.qs, k, h, m4, c16));
    }
  }
}

template <DType>
constexpr int kKqTMax = 8;
constexpr int kKqPasses = 1;  // passes over a group per tile (pf.at steps = passes x blocks)
