// Vectorized activation quantizers (Q8_0 with block sums, Q8_K), bit-identical to the
// scalar quantize_act_* in quant.cpp: the max is order-independent, the products are the
// same fp32 multiplies and cvtps2dq rounds to nearest even like nearbyint. Included by the
// ISA translation units right after matmul_simd.h (uses its helpers and VT_MM_NS).
//
// No include guard on purpose: one inclusion per ISA translation unit.

#ifndef VT_MM_NS
#error "include matmul_simd.h first"
#endif

namespace vt::cpu::VT_MM_NS {
namespace {

// 32 floats -> 32 int8 (RNE, like nearbyint), returns their sum.
inline int quant32(const float* x, __m256 mul, int8_t* out) {
  const __m256i a = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), mul));
  const __m256i b = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8), mul));
  const __m256i c = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16), mul));
  const __m256i d = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 24), mul));
  const int sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(a, b), _mm256_add_epi32(c, d)));
  const __m256i ab = _mm256_packs_epi32(a, b), cd = _mm256_packs_epi32(c, d);
  const __m256i q = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(ab, cd),
                                                _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), q);
  return sum;
}

inline float hmax8(__m256 v) {
  __m128 a = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  a = _mm_max_ps(a, _mm_movehl_ps(a, a));
  return _mm_cvtss_f32(_mm_max_ss(a, _mm_movehdup_ps(a)));
}

inline float fp16_round(float f) { return _cvtsh_ss(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT)); }

// A Q8_K block of zeros (its scale 0), as the scalar loop writes it.
inline void zero_q8_k_block(int8_t* qs, float* d, int16_t* bsums) {
  *d = 0;
  std::memset(qs, 0, kQK_K);
  std::memset(bsums, 0, kQK_K / 16 * sizeof(int16_t));
}

}  // namespace

void quant_act_q8_0(const float* x, int64_t n, int8_t* qs, float* d, float* s, int32_t* xsum) {
  const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / kQK; ++i, x += kQK, qs += kQK) {
    __m256 m = _mm256_and_ps(_mm256_loadu_ps(x), absmask);
    VT_UNROLL
    for (int k = 1; k < 4; ++k)
      m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(x + 8 * k), absmask));
    const float amax = hmax8(m);
    const float dd = amax / 127.0f;
    const float id = amax != 0 ? 127.0f / amax : 0.0f;
    const int sum = quant32(x, _mm256_set1_ps(id), qs);
    d[i] = fp16_round(dd);
    s[i] = fp16_round(dd * static_cast<float>(sum));
    xsum[i] = sum;
  }
}

#ifdef __AVX512BW__
// GCC 12's AVX-512 intrinsics pass _mm512_undefined_* through, which -Wmaybe-uninitialized
// reports once inlined here (as in matmul_kquant_simd.h).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
namespace {

// Every lane of each of the 16 vectors v[g] summed: out[g] = sum of v[g]'s lanes (integer
// adds, so any order gives the scalar loop's sum). Pairs of vectors fold into one per level:
// dwords within 128-bit lanes, then qwords, then the lanes themselves.
inline __m512i sum_lanes16(const __m512i (&v)[16]) {
  __m512i w[8], x[4];
  VT_UNROLL
  for (int k = 0; k < 8; ++k)
    w[k] = _mm512_add_epi32(_mm512_unpacklo_epi32(v[2 * k], v[2 * k + 1]),
                            _mm512_unpackhi_epi32(v[2 * k], v[2 * k + 1]));
  VT_UNROLL
  for (int k = 0; k < 4; ++k)  // lane L of x[k]: v[4k .. 4k + 3] over lane L
    x[k] = _mm512_add_epi32(_mm512_unpacklo_epi64(w[2 * k], w[2 * k + 1]),
                            _mm512_unpackhi_epi64(w[2 * k], w[2 * k + 1]));
  const __m512i y01 = _mm512_add_epi32(_mm512_shuffle_i32x4(x[0], x[1], 0x88),
                                       _mm512_shuffle_i32x4(x[0], x[1], 0xdd));
  const __m512i y23 = _mm512_add_epi32(_mm512_shuffle_i32x4(x[2], x[3], 0x88),
                                       _mm512_shuffle_i32x4(x[2], x[3], 0xdd));
  return _mm512_add_epi32(_mm512_shuffle_i32x4(y01, y23, 0x88),
                          _mm512_shuffle_i32x4(y01, y23, 0xdd));
}

}  // namespace

// AVX-512: one 16-lane vector per 16-element group. Same max, same first element of largest
// magnitude, same fp32 products and RNE conversion as the scalar loop, so the same bits.
void quant_act_q8_k(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums) {
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qs += kQK_K, bsums += kQK_K / 16) {
    __m512 m = _mm512_setzero_ps();
    VT_UNROLL
    for (int g = 0; g < kQK_K / 16; ++g)
      m = _mm512_max_ps(m, _mm512_abs_ps(_mm512_loadu_ps(x + 16 * g)));
    const float amax = _mm512_reduce_max_ps(m);
    if (amax == 0) {
      zero_q8_k_block(qs, d + i, bsums);
      continue;
    }
    // The first element of largest magnitude sets the sign, as in GGML's scalar loop.
    int j = 0;
    const __m512 am = _mm512_set1_ps(amax);
    for (int g = 0; g < kQK_K / 16; ++g) {
      const __mmask16 hit =
          _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + 16 * g)), am, _CMP_EQ_OQ);
      if (hit) {
        j = 16 * g + __builtin_ctz(static_cast<unsigned>(hit));
        break;
      }
    }
    const float iscale = -127.0f / x[j];
    const __m512 mul = _mm512_set1_ps(iscale);
    const __m512i cap = _mm512_set1_epi32(127);
    __m512i v[16];
    VT_UNROLL
    for (int g = 0; g < kQK_K / 16; ++g) {
      v[g] = _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * g), mul)),
                              cap);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16 * g), _mm512_cvtsepi32_epi8(v[g]));
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(bsums), _mm512_cvtepi32_epi16(sum_lanes16(v)));
    d[i] = 1.0f / iscale;
  }
}
#pragma GCC diagnostic pop
#else
void quant_act_q8_k(const float* x, int64_t n, int8_t* qs, float* d, int16_t* bsums) {
  const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K, qs += kQK_K, bsums += kQK_K / 16) {
    __m256 m = _mm256_setzero_ps();
    for (int k = 0; k < kQK_K / 8; ++k)
      m = _mm256_max_ps(m, _mm256_and_ps(_mm256_loadu_ps(x + 8 * k), absmask));
    const float amax = hmax8(m);
    if (amax == 0) {
      zero_q8_k_block(qs, d + i, bsums);
      continue;
    }
    // The first element of largest magnitude sets the sign, as in GGML's scalar loop.
    int j = 0;
    {  // the first 8-lane vector holding amax, then its first lane (the scalar scan it
       // replaces took ~40% of this function's samples in a 128-token prefill)
      const __m256 am = _mm256_set1_ps(amax);
      int k = 0, bits = 0;
      for (; k < kQK_K / 8; ++k) {
        bits = _mm256_movemask_ps(
            _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + 8 * k), absmask), am, _CMP_EQ_OQ));
        if (bits) break;
      }
      if (bits) j = 8 * k + __builtin_ctz(static_cast<unsigned>(bits));
    }
    const float iscale = -127.0f / x[j];
    const __m256 mul = _mm256_set1_ps(iscale);
    const __m256i cap = _mm256_set1_epi32(127);
    for (int g = 0; g < kQK_K / 16; ++g) {
      const __m256i a = _mm256_min_epi32(
          _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16 * g), mul)), cap);
      const __m256i b = _mm256_min_epi32(
          _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 16 * g + 8), mul)), cap);
      bsums[g] = static_cast<int16_t>(hsum_i32(_mm256_add_epi32(a, b)));
      const __m256i q16 = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), 0xd8);
      const __m128i q8 =
          _mm_packs_epi16(_mm256_castsi256_si128(q16), _mm256_extracti128_si256(q16, 1));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(qs + 16 * g), q8);
    }
    d[i] = 1.0f / iscale;
  }
}
#endif

}  // namespace vt::cpu::VT_MM_NS
