// SIMD row kernels for Q2_K, Q3_K and IQ4_XS weights x Q8_K activations, compiled per ISA
// like the Q4_K / Q6_K kernels of matmul_simd.h (which includes this file and provides
// row_ptr, madd_acc, hsum8, hsum_i32, h2f and VT_UNROLL). Each row's super-block is unpacked
// once into bytes on the stack and reused by every token of the tile; per (row, token) the
// lane arithmetic is the one matmul_internal.h fixes for the type, so results equal the
// scalar reference (matmul_zoo_scalar.cpp) bit for bit.
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

// Two 16-element groups of a 32-byte chunk: group lo scales bytes 0..15, hi bytes 16..31.
inline __m256i group_scales(int lo, int hi) {
  return _mm256_set_m128i(_mm_set1_epi16(static_cast<int16_t>(hi)),
                          _mm_set1_epi16(static_cast<int16_t>(lo)));
}

// Stores the 2-bit fields of a K-quant's qs (64 bytes) in element order: element
// 128n + 32j + l is bits 2j..2j+1 of qs[32n + l].
inline void unpack_2bit(const uint8_t* qs, uint8_t* out) {
  const __m256i m3 = _mm256_set1_epi8(3);
  VT_UNROLL
  for (int n = 0; n < 2; ++n) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * n));
    VT_UNROLL
    for (int j = 0; j < 4; ++j)
      _mm256_store_si256(reinterpret_cast<__m256i*>(out + 128 * n + 32 * j),
                         _mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3));
  }
}

struct Q2KKernel {
  template <int R, int TT>
  static void run(const WeightView& w, const ActView& a, int64_t r0, int64_t t0, float* y,
                  int64_t ldy) {
    const int64_t nb = a.n_blocks;
    const BlockQ2_K* rows[R];
    VT_UNROLL
    for (int r = 0; r < R; ++r) rows[r] = reinterpret_cast<const BlockQ2_K*>(row_ptr(w, r0 + r));
    __m256 acc[R][TT];
    float macc[R][TT];
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t) {
      acc[r][t] = _mm256_setzero_ps();
      macc[r][t] = 0;
    }
    alignas(32) uint8_t wq[R][kQK_K];
    __m256i scv[R][8];
    __m256i mins16[R];
    float dw[R], dmw[R];
    for (int64_t b = 0; b < nb; ++b) {
      VT_UNROLL
      for (int r = 0; r < R; ++r) {
        const BlockQ2_K& blk = rows[r][b];
        dw[r] = h2f(blk.d);
        dmw[r] = h2f(blk.dmin);
        VT_UNROLL
        for (int c = 0; c < 8; ++c)
          scv[r][c] = group_scales(blk.scales[2 * c] & 0xF, blk.scales[2 * c + 1] & 0xF);
        mins16[r] = _mm256_srli_epi16(
            _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk.scales))), 4);
        unpack_2bit(blk.qs, wq[r]);
      }
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const int8_t* x = a.qs + (t0 + t) * a.cols + b * kQK_K;
        const float dx = a.d[(t0 + t) * nb + b];
        const __m256i bs = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(a.bsums + ((t0 + t) * nb + b) * 16));
        VT_UNROLL
        for (int r = 0; r < R; ++r) {
          __m256i lanes = _mm256_setzero_si256();
          VT_UNROLL
          for (int c = 0; c < 8; ++c) {
            const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(wq[r] + 32 * c));
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * c));
            lanes = madd_acc(lanes, _mm256_maddubs_epi16(wv, xv), scv[r][c]);
          }
          const int summ = hsum_i32(_mm256_madd_epi16(bs, mins16[r]));
          const float d = dw[r] * dx, dm = dmw[r] * dx;
          acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes), acc[r][t]);
          macc[r][t] = std::fma(dm, static_cast<float>(summ), macc[r][t]);
        }
      }
    }
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t) y[(t0 + t) * ldy + r0 + r] = hsum8(acc[r][t]) - macc[r][t];
  }
};

struct Q3KKernel {
  template <int R, int TT>
  static void run(const WeightView& w, const ActView& a, int64_t r0, int64_t t0, float* y,
                  int64_t ldy) {
    const int64_t nb = a.n_blocks;
    const BlockQ3_K* rows[R];
    VT_UNROLL
    for (int r = 0; r < R; ++r) rows[r] = reinterpret_cast<const BlockQ3_K*>(row_ptr(w, r0 + r));
    __m256 acc[R][TT];
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t) acc[r][t] = _mm256_setzero_ps();
    alignas(32) uint8_t wq[R][kQK_K];
    __m256i scv[R][8];
    __m256i sc16[R];
    float dw[R];
    const __m256i m3 = _mm256_set1_epi8(3), four = _mm256_set1_epi8(4);
    for (int64_t b = 0; b < nb; ++b) {
      VT_UNROLL
      for (int r = 0; r < R; ++r) {
        const BlockQ3_K& blk = rows[r][b];
        dw[r] = h2f(blk.d);
        alignas(32) int16_t sc[16];
        VT_UNROLL
        for (int g = 0; g < 16; ++g) {
          const int lo = (blk.scales[g % 8] >> (4 * (g / 8))) & 0xF;
          const int hi = (blk.scales[8 + g % 4] >> (2 * (g / 4))) & 3;
          sc[g] = static_cast<int16_t>((lo | (hi << 4)) - 32);
        }
        VT_UNROLL
        for (int c = 0; c < 8; ++c) scv[r][c] = group_scales(sc[2 * c], sc[2 * c + 1]);
        sc16[r] = _mm256_load_si256(reinterpret_cast<const __m256i*>(sc));
        // q + 4 = low 2 bits + 4 * (hmask bit 4n + j), element 128n + 32j + l: the hmask bit
        // k = 4n + j is moved to bit 2 of each byte (shift right k - 2, or left for k < 2).
        const __m256i hm = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.hmask));
        VT_UNROLL
        for (int n = 0; n < 2; ++n) {
          const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * n));
          VT_UNROLL
          for (int j = 0; j < 4; ++j) {
            const int k = 4 * n + j;
            const __m256i h = k >= 2 ? _mm256_srli_epi16(hm, k - 2) : _mm256_slli_epi16(hm, 2 - k);
            const __m256i v = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(q, 2 * j), m3),
                                              _mm256_and_si256(h, four));
            _mm256_store_si256(reinterpret_cast<__m256i*>(wq[r] + 32 * k), v);
          }
        }
      }
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const int8_t* x = a.qs + (t0 + t) * a.cols + b * kQK_K;
        const float dx = a.d[(t0 + t) * nb + b];
        const __m256i bs = _mm256_loadu_si256(
            reinterpret_cast<const __m256i*>(a.bsums + ((t0 + t) * nb + b) * 16));
        VT_UNROLL
        for (int r = 0; r < R; ++r) {
          __m256i lanes = _mm256_setzero_si256();
          VT_UNROLL
          for (int c = 0; c < 8; ++c) {
            const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(wq[r] + 32 * c));
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * c));
            lanes = madd_acc(lanes, _mm256_maddubs_epi16(wv, xv), scv[r][c]);
          }
          const int off = 4 * hsum_i32(_mm256_madd_epi16(bs, sc16[r]));
          lanes = _mm256_sub_epi32(lanes, _mm256_setr_epi32(off, 0, 0, 0, 0, 0, 0, 0));
          const float d = dw[r] * dx;
          acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes), acc[r][t]);
        }
      }
    }
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t) y[(t0 + t) * ldy + r0 + r] = hsum8(acc[r][t]);
  }
};

// IQ4_XS: the nibbles become signed code-book values by one byte shuffle; the products use
// |w| * sign(x, w) so maddubs (unsigned x signed) stays exact for a signed weight.
struct IQ4XSKernel {
  template <int R, int TT>
  static void run(const WeightView& w, const ActView& a, int64_t r0, int64_t t0, float* y,
                  int64_t ldy) {
    const int64_t nb = a.n_blocks;
    const BlockIQ4_XS* rows[R];
    VT_UNROLL
    for (int r = 0; r < R; ++r) rows[r] = reinterpret_cast<const BlockIQ4_XS*>(row_ptr(w, r0 + r));
    __m256 acc[R][TT];
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t) acc[r][t] = _mm256_setzero_ps();
    alignas(32) int8_t wq[R][kQK_K];   // code-book values (for their signs)
    alignas(32) uint8_t wa[R][kQK_K];  // and their magnitudes
    __m256i scv[R][8];
    float dw[R];
    const __m256i m4 = _mm256_set1_epi8(0xF);
    const __m256i table =
        _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4Values)));
    for (int64_t b = 0; b < nb; ++b) {
      VT_UNROLL
      for (int r = 0; r < R; ++r) {
        const BlockIQ4_XS& blk = rows[r][b];
        dw[r] = h2f(blk.d);
        VT_UNROLL
        for (int ib = 0; ib < 8; ++ib) {
          const int lo = (blk.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
          const int hi = (blk.scales_h >> (2 * ib)) & 3;
          scv[r][ib] = _mm256_set1_epi16(static_cast<int16_t>((lo | (hi << 4)) - 32));
        }
        // 32 bytes of qs hold sub-blocks 2p (bytes 0..15) and 2p + 1 (16..31); a sub-block
        // is its 16 low nibbles, then its 16 high nibbles.
        VT_UNROLL
        for (int p = 0; p < 4; ++p) {
          const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk.qs + 32 * p));
          const __m256i lo = _mm256_and_si256(raw, m4);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), m4);
          const __m256i v0 = _mm256_shuffle_epi8(table, _mm256_permute2x128_si256(lo, hi, 0x20));
          const __m256i v1 = _mm256_shuffle_epi8(table, _mm256_permute2x128_si256(lo, hi, 0x31));
          _mm256_store_si256(reinterpret_cast<__m256i*>(wq[r] + 64 * p), v0);
          _mm256_store_si256(reinterpret_cast<__m256i*>(wq[r] + 64 * p + 32), v1);
          _mm256_store_si256(reinterpret_cast<__m256i*>(wa[r] + 64 * p), _mm256_abs_epi8(v0));
          _mm256_store_si256(reinterpret_cast<__m256i*>(wa[r] + 64 * p + 32), _mm256_abs_epi8(v1));
        }
      }
      VT_UNROLL
      for (int t = 0; t < TT; ++t) {
        const int8_t* x = a.qs + (t0 + t) * a.cols + b * kQK_K;
        const float dx = a.d[(t0 + t) * nb + b];
        VT_UNROLL
        for (int r = 0; r < R; ++r) {
          __m256i lanes = _mm256_setzero_si256();
          VT_UNROLL
          for (int ib = 0; ib < 8; ++ib) {
            const __m256i wv = _mm256_load_si256(reinterpret_cast<const __m256i*>(wq[r] + 32 * ib));
            const __m256i ua = _mm256_load_si256(reinterpret_cast<const __m256i*>(wa[r] + 32 * ib));
            const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 32 * ib));
            const __m256i p = _mm256_maddubs_epi16(ua, _mm256_sign_epi8(xv, wv));
            lanes = madd_acc(lanes, p, scv[r][ib]);
          }
          const float d = dw[r] * dx;
          acc[r][t] = _mm256_fmadd_ps(_mm256_set1_ps(d), _mm256_cvtepi32_ps(lanes), acc[r][t]);
        }
      }
    }
    VT_UNROLL
    for (int r = 0; r < R; ++r) VT_UNROLL
    for (int t = 0; t < TT; ++t) y[(t0 + t) * ldy + r0 + r] = hsum8(acc[r][t]);
  }
};

}  // namespace
}  // namespace vt::cpu::VT_MM_NS

#pragma GCC diagnostic pop
