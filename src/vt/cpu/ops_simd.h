// SIMD vector traits the elementwise and attention kernel templates are written against:
// one algorithm, instantiated for scalar, AVX2 and AVX-512 in the TU compiled for that ISA.
//
// Everything here has internal linkage on purpose: the same template instantiated in two
// TUs compiled with different -m flags must never be merged by the linker (an AVX-512 copy
// could otherwise end up behind the scalar entry point).
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>
#include <cstring>

#include "vt/cpu/kernels.h"

// GCC 12 reports the self-initialized placeholder inside _mm512_undefined_*() as
// uninitialized wherever an AVX-512 intrinsic using it is inlined (GCC PR 105593). The
// pragma has to stay active at the inlining site, so it is not popped; only kernel TUs
// include this header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

namespace vt::cpu {
namespace {

// exp(x) for float lanes: range reduction x = n ln2 + r, |r| <= ln2/2, then a degree-6
// polynomial for e^r (Cephes expf coefficients, ~1 ulp). Inputs are clamped so 2^n stays a
// normal float; values below the clamp come out ~1e-38 instead of 0, which no consumer here
// can tell apart.
constexpr float kExpHi = 88.3762626647949f;
constexpr float kExpLo = -87.3365478515625f;
constexpr float kLog2e = 1.44269504088896341f;
constexpr float kLn2Hi = 0.693359375f;
constexpr float kLn2Lo = -2.12194440e-4f;
constexpr float kExpP0 = 1.9875691500e-4f;
constexpr float kExpP1 = 1.3981999507e-3f;
constexpr float kExpP2 = 8.3334519073e-3f;
constexpr float kExpP3 = 4.1665795894e-2f;
constexpr float kExpP4 = 1.6666665459e-1f;
constexpr float kExpP5 = 5.0000001201e-1f;

// exp(r) for |r| <= ln2/2 (the range-reduced argument): the ISA-independent half of the
// vector exp, written once over a Vec type's operations.
template <class V>
typename V::R exp_reduced(typename V::R r) {
  typename V::R p = V::set1(kExpP0);
  p = V::fma(p, r, V::set1(kExpP1));
  p = V::fma(p, r, V::set1(kExpP2));
  p = V::fma(p, r, V::set1(kExpP3));
  p = V::fma(p, r, V::set1(kExpP4));
  p = V::fma(p, r, V::set1(kExpP5));
  return V::fma(p, V::mul(r, r), V::add(r, V::set1(1.f)));
}

struct VecScalar {
  using R = float;
  static constexpr int kW = 1;
  static R load(const float* p) { return *p; }
  static R load_partial(const float* p, int n, float fill) { return n > 0 ? *p : fill; }
  // fp16 elements (KV cache) widened on load; partial loads fill with 0.
  static R load_f16(const uint16_t* p) { return fp16_to_fp32(*p); }
  static R load_f16_partial(const uint16_t* p, int n) { return n > 0 ? fp16_to_fp32(*p) : 0.f; }
  // bf16 elements (KV cache): the top half of an fp32, so widening is exact.
  static R load_bf16(const uint16_t* p) { return bf16_to_fp32(*p); }
  static R load_bf16_partial(const uint16_t* p, int n) { return n > 0 ? bf16_to_fp32(*p) : 0.f; }
  static void store(float* p, R v) { *p = v; }
  static void store_partial(float* p, R v, int n) {
    if (n > 0) *p = v;
  }
  static R set1(float x) { return x; }
  static R zero() { return 0.f; }
  static R add(R a, R b) { return a + b; }
  static R sub(R a, R b) { return a - b; }
  static R mul(R a, R b) { return a * b; }
  static R div(R a, R b) { return a / b; }
  // Fused like the vector paths' vfmadd, so every ISA rounds once per multiply-add.
  static R fma(R a, R b, R c) { return std::fma(a, b, c); }
  static R max(R a, R b) { return a > b ? a : b; }
  static int eq_mask(R a, R b) { return a == b ? 1 : 0; }  // lane i -> bit i
  static float reduce_add(R a) { return a; }
  static float reduce_max(R a) { return a; }
  // The vector paths' exp step for step: max_ps / min_ps clamping, round half to even,
  // fused range reduction, the same polynomial and the same 2^n scaling.
  static R exp(R x) {
    x = x > kExpLo ? x : kExpLo;
    x = x < kExpHi ? x : kExpHi;
    const R n = std::nearbyint(x * kLog2e);
    R r = std::fma(-n, kLn2Hi, x);
    r = std::fma(-n, kLn2Lo, r);
    const R p = exp_reduced<VecScalar>(r);
    const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
    float e;
    std::memcpy(&e, &bits, sizeof e);
    return p * e;
  }
};

#if defined(__AVX2__) && defined(__FMA__)
struct VecAvx2 {
  using R = __m256;
  static constexpr int kW = 8;
  static __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static R load(const float* p) { return _mm256_loadu_ps(p); }
  static R load_partial(const float* p, int n, float fill) {
    __m256i m = mask(n);
    return _mm256_blendv_ps(_mm256_set1_ps(fill), _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
  }
  static R load_f16(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static R load_f16_partial(const uint16_t* p, int n) {
    alignas(16) uint16_t buf[8] = {};
    std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(uint16_t));
    return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i*>(buf)));
  }
  static R widen_bf16(__m128i h) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
  static R load_bf16(const uint16_t* p) {
    return widen_bf16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static R load_bf16_partial(const uint16_t* p, int n) {
    alignas(16) uint16_t buf[8] = {};
    std::memcpy(buf, p, static_cast<size_t>(n) * sizeof(uint16_t));
    return widen_bf16(_mm_load_si128(reinterpret_cast<const __m128i*>(buf)));
  }
  static void store(float* p, R v) { _mm256_storeu_ps(p, v); }
  static void store_partial(float* p, R v, int n) { _mm256_maskstore_ps(p, mask(n), v); }
  static R set1(float x) { return _mm256_set1_ps(x); }
  static R zero() { return _mm256_setzero_ps(); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R sub(R a, R b) { return _mm256_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R div(R a, R b) { return _mm256_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static R max(R a, R b) { return _mm256_max_ps(a, b); }
  static int eq_mask(R a, R b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ)); }
  static float reduce_add(R a) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float reduce_max(R a) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(a), _mm256_extractf128_ps(a, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static R exp(R x) {
    x = _mm256_min_ps(_mm256_max_ps(x, set1(kExpLo)), set1(kExpHi));
    R n = _mm256_round_ps(_mm256_mul_ps(x, set1(kLog2e)),
                          _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    R r = _mm256_fnmadd_ps(n, set1(kLn2Hi), x);
    r = _mm256_fnmadd_ps(n, set1(kLn2Lo), r);
    const R p = exp_reduced<VecAvx2>(r);
    __m256i e =
        _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
    return _mm256_mul_ps(p, _mm256_castsi256_ps(e));
  }
  static R swap_pairs(R a) { return _mm256_permute_ps(a, 0xB1); }
};
#endif

#if defined(__AVX512F__) && defined(__AVX512DQ__)
struct VecAvx512 {
  using R = __m512;
  static constexpr int kW = 16;
  static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static R load(const float* p) { return _mm512_loadu_ps(p); }
  static R load_partial(const float* p, int n, float fill) {
    return _mm512_mask_loadu_ps(_mm512_set1_ps(fill), mask(n), p);
  }
  static R load_f16(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static R load_f16_partial(const uint16_t* p, int n) {
    return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(mask(n), p));
  }
  static R widen_bf16(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  }
  static R load_bf16(const uint16_t* p) {
    return widen_bf16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static R load_bf16_partial(const uint16_t* p, int n) {
    return widen_bf16(_mm256_maskz_loadu_epi16(mask(n), p));
  }
  static void store(float* p, R v) { _mm512_storeu_ps(p, v); }
  static void store_partial(float* p, R v, int n) { _mm512_mask_storeu_ps(p, mask(n), v); }
  static R set1(float x) { return _mm512_set1_ps(x); }
  static R zero() { return _mm512_setzero_ps(); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R sub(R a, R b) { return _mm512_sub_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R div(R a, R b) { return _mm512_div_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static R max(R a, R b) { return _mm512_max_ps(a, b); }
  static int eq_mask(R a, R b) { return _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ); }
  // Explicit halving tree so the order is ours, not the compiler's.
  static float reduce_add(R a) {
    __m256 h = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
  }
  static float reduce_max(R a) { return _mm512_reduce_max_ps(a); }
  static R exp(R x) {
    x = _mm512_min_ps(_mm512_max_ps(x, set1(kExpLo)), set1(kExpHi));
    R n = _mm512_roundscale_ps(_mm512_mul_ps(x, set1(kLog2e)),
                               _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    R r = _mm512_fnmadd_ps(n, set1(kLn2Hi), x);
    r = _mm512_fnmadd_ps(n, set1(kLn2Lo), r);
    const R p = exp_reduced<VecAvx512>(r);
    __m512i e =
        _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
    return _mm512_mul_ps(p, _mm512_castsi512_ps(e));
  }
  static R swap_pairs(R a) { return _mm512_permute_ps(a, 0xB1); }
};
#endif

// Sums whose bits must not depend on the ISA (rms_norm's sum of squares, the softmax
// denominators) run over 16 canonical lanes: element j of a row is added to lane j % 16 in
// index order, and the lanes are folded by one fixed tree, ((h0+h4)+(h2+h6)) +
// ((h1+h5)+(h3+h7)) with h[i] = lane[i] + lane[i+8]. That is one zmm on AVX-512, two ymm on
// AVX2 and sixteen floats on the scalar path, so all three produce the same bits.
constexpr int kSumLanes = 16;

template <class V>
struct Sum16 {
  static constexpr int K = kSumLanes / V::kW;
  typename V::R r[K];
  Sum16() {
    for (int k = 0; k < K; ++k) r[k] = V::zero();
  }
  float fold() const {
    if constexpr (V::kW == 16) {
      return V::reduce_add(r[0]);
    } else if constexpr (V::kW == 8) {
      return V::reduce_add(V::add(r[0], r[1]));
    } else {
      static_assert(V::kW == 1, "canonical sums cover 1-, 8- and 16-lane vectors");
      float h[8], q[4];
      for (int i = 0; i < 8; ++i) h[i] = r[i] + r[i + 8];
      for (int i = 0; i < 4; ++i) q[i] = h[i] + h[i + 4];
      return (q[0] + q[2]) + (q[1] + q[3]);
    }
  }
};

// max of x[0, n) (exact in any order, so no canonical lanes needed); -inf for n = 0.
template <class V>
float row_max(const float* x, int64_t n) {
  constexpr int W = V::kW;
  typename V::R m = V::set1(-INFINITY);
  int64_t i = 0;
  for (; i + W <= n; i += W) m = V::max(m, V::load(x + i));
  if (i < n) m = V::max(m, V::load_partial(x + i, static_cast<int>(n - i), -INFINITY));
  return V::reduce_max(m);
}

// x[i] = exp(x[i] - mx) for i < n, in place; returns their sum over the canonical lanes.
// The numerator pass of every softmax here (ops and attention).
// Soft-capping in place: x = cap * tanh(x / cap), as cap - 2 cap / (1 + exp(2 x / cap)) with
// the one exp every ISA shares (the same bits on each; within a few ulp of tanh).
template <class V>
void softcap_inplace(float* x, int64_t n, float cap) {
  constexpr int W = V::kW;
  const typename V::R vcap = V::set1(cap), two_over = V::set1(2.f / cap),
                      two_cap = V::set1(2.f * cap), one = V::set1(1.f);
  auto f = [&](typename V::R v) {
    const typename V::R e = V::exp(V::mul(v, two_over));
    return V::sub(vcap, V::div(two_cap, V::add(one, e)));
  };
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(x + i, f(V::load(x + i)));
  if (i < n) {
    const int r = static_cast<int>(n - i);
    V::store_partial(x + i, f(V::load_partial(x + i, r, 0.f)), r);
  }
}

template <class V>
float exp_sub_sum16(float* x, int64_t n, float mx) {
  constexpr int W = V::kW;
  const typename V::R vmx = V::set1(mx);
  Sum16<V> s;
  int64_t i = 0;
  for (; i + kSumLanes <= n; i += kSumLanes)
    for (int k = 0; k < Sum16<V>::K; ++k) {
      const typename V::R e = V::exp(V::sub(V::load(x + i + k * W), vmx));
      V::store(x + i + k * W, e);
      s.r[k] = V::add(s.r[k], e);
    }
  for (int k = 0; k < Sum16<V>::K && i + k * W < n; ++k) {
    float* p = x + i + k * W;
    const int r = static_cast<int>(n - i - k * W);
    if (r >= W) {
      const typename V::R e = V::exp(V::sub(V::load(p), vmx));
      V::store(p, e);
      s.r[k] = V::add(s.r[k], e);
    } else {  // masked lanes would hold exp(-mx): sum what was stored
      V::store_partial(p, V::exp(V::sub(V::load_partial(p, r, 0.f), vmx)), r);
      s.r[k] = V::add(s.r[k], V::load_partial(p, r, 0.f));
    }
  }
  return s.fold();
}

}  // namespace
}  // namespace vt::cpu
