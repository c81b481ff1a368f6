// Elementwise, normalization, softmax and RoPE kernel bodies, written once against the
// vector traits of ops_simd.h and instantiated per ISA (ops.cpp, ops_avx2.cpp,
// ops_avx512.cpp). Tails go through masked loads so a row is computed by one code path.
//
// Every row is reduced in an order fixed by its length alone, so results never depend on
// the batch a row arrives in.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include "vt/cpu/kernels.h"
#include "vt/cpu/ops_simd.h"

namespace vt::cpu {
namespace {

// The sum of x[0, dim) (kSquares: of its squares) over the canonical lanes (ops_simd.h): the
// same bits on every ISA.
template <class V, bool kSquares>
float canonical_row_sum(const float* xr, int64_t dim) {
  constexpr int W = V::kW;
  auto step = [](typename V::R v, typename V::R acc) {
    if constexpr (kSquares)
      return V::fma(v, v, acc);
    else
      return V::add(acc, v);
  };
  Sum16<V> acc;
  int64_t i = 0;
  for (; i + kSumLanes <= dim; i += kSumLanes)
    for (int k = 0; k < Sum16<V>::K; ++k) acc.r[k] = step(V::load(xr + i + k * W), acc.r[k]);
  for (int k = 0; k < Sum16<V>::K && i + k * W < dim; ++k) {
    const int m = static_cast<int>(dim - i - k * W);
    acc.r[k] =
        step(m >= W ? V::load(xr + i + k * W) : V::load_partial(xr + i + k * W, m, 0.f), acc.r[k]);
  }
  return acc.fold();
}

template <class V>
void rms_norm_impl(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim,
                   float eps, float* y, int64_t ldy) {
  constexpr int W = V::kW;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * ldx;
    float* yr = y + r * ldy;
    const float ss = canonical_row_sum<V, true>(xr, dim);
    // HF: x * rsqrt(mean(x^2) + eps), then weight * that (two roundings, kept).
    const float inv = 1.0f / std::sqrt(ss / static_cast<float>(dim) + eps);
    const typename V::R vinv = V::set1(inv);
    int64_t i = 0;
    for (; i + W <= dim; i += W)
      V::store(yr + i, V::mul(V::load(w + i), V::mul(V::load(xr + i), vinv)));
    if (i < dim) {
      int n = static_cast<int>(dim - i);
      V::store_partial(
          yr + i,
          V::mul(V::load_partial(w + i, n, 0.f), V::mul(V::load_partial(xr + i, n, 0.f), vinv)), n);
    }
  }
}

// LayerNorm without a bias (Cohere's): (x - mean) * rsqrt(mean((x - mean)^2) + eps) * w, in
// HF's steps: the mean over the canonical lanes (the same bits on every ISA), the centred row,
// then rms_norm_impl on it (its mean of squares is the variance). In place is allowed.
template <class V>
void layer_norm_impl(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim,
                     float eps, float* y, int64_t ldy) {
  constexpr int W = V::kW;
  for (int64_t r = 0; r < n_rows; ++r) {
    const float* xr = x + r * ldx;
    float* yr = y + r * ldy;
    const typename V::R mean =
        V::set1(canonical_row_sum<V, false>(xr, dim) / static_cast<float>(dim));
    int64_t i = 0;
    for (; i + W <= dim; i += W) V::store(yr + i, V::sub(V::load(xr + i), mean));
    if (i < dim) {
      const int n = static_cast<int>(dim - i);
      V::store_partial(yr + i, V::sub(V::load_partial(xr + i, n, 0.f), mean), n);
    }
    rms_norm_impl<V>(yr, ldy, w, 1, dim, eps, yr, ldy);
  }
}

template <class V>
inline typename V::R silu_mul_vec(typename V::R g, typename V::R u) {
  typename V::R one = V::set1(1.f);
  typename V::R e = V::exp(V::sub(V::zero(), g));
  return V::mul(V::div(g, V::add(one, e)), u);
}

// Gemma's tanh GELU times up: 0.5 g (1 + tanh(z)) = g * sigmoid(2 z), z = sqrt(2/pi) (g +
// 0.044715 g^3): the SiLU form with the one exp every ISA shares, so every ISA gets the same
// bits (torch's tanh differs from it in the last bits only).
template <class V>
inline typename V::R gelu_tanh_mul_vec(typename V::R g, typename V::R u) {
  const typename V::R one = V::set1(1.f);
  const typename V::R g3 = V::mul(V::mul(g, g), g);
  const typename V::R z2 =
      V::mul(V::set1(2.f * 0.7978845608028654f), V::add(g, V::mul(V::set1(0.044715f), g3)));
  const typename V::R e = V::exp(V::sub(V::zero(), z2));
  return V::mul(V::div(g, V::add(one, e)), u);
}

template <class V, bool kGelu = false>
void silu_mul_impl(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                   int64_t n_tok, int64_t dim, float* out, int64_t ld_out) {
  constexpr int W = V::kW;
  auto act = [](typename V::R g, typename V::R u) {
    if constexpr (kGelu)
      return gelu_tanh_mul_vec<V>(g, u);
    else
      return silu_mul_vec<V>(g, u);
  };
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* g = gate + t * ld_gate;
    const float* u = up + t * ld_up;
    float* o = out + t * ld_out;
    int64_t i = 0;
    for (; i + W <= dim; i += W) V::store(o + i, act(V::load(g + i), V::load(u + i)));
    if (i < dim) {
      int n = static_cast<int>(dim - i);
      V::store_partial(o + i, act(V::load_partial(g + i, n, 0.f), V::load_partial(u + i, n, 0.f)),
                       n);
    }
  }
}

template <class V>
void add_inplace_impl(float* y, const float* x, int64_t n) {
  constexpr int W = V::kW;
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(y + i, V::add(V::load(y + i), V::load(x + i)));
  if (i < n) {
    int r = static_cast<int>(n - i);
    V::store_partial(y + i, V::add(V::load_partial(y + i, r, 0.f), V::load_partial(x + i, r, 0.f)),
                     r);
  }
}

template <class V>
void softmax_impl(float* x, int64_t n) {
  constexpr int W = V::kW;
  if (n <= 0) return;
  const typename V::R vsum = V::set1(exp_sub_sum16<V>(x, n, row_max<V>(x, n)));
  int64_t i = 0;
  for (; i + W <= n; i += W) V::store(x + i, V::div(V::load(x + i), vsum));
  if (i < n) {
    int r = static_cast<int>(n - i);
    V::store_partial(x + i, V::div(V::load_partial(x + i, r, 1.f), vsum), r);
  }
}

// cos/sin of float(pos) * inv_freq[i] in float, as HF builds its rotary tables. libm's
// float cos/sin are within an ulp for the large angles long contexts produce, which a
// short polynomial is not; the table is shared by every head of the token. Times mscale in
// float, as HF multiplies its tables by the attention factor (1: exact).
inline void rope_tables(int32_t pos, const float* inv_freq, int half, float mscale, float* c,
                        float* s) {
  const float p = static_cast<float>(pos);
  for (int i = 0; i < half; ++i) {
    const float a = p * inv_freq[i];
    c[i] = std::cos(a) * mscale;
    s[i] = std::sin(a) * mscale;
  }
}

// Index of the first maximum of x[0, n), n > 0; NaN never wins (all NaN: 0). Two passes: the
// maximum, with max(x, m) keeping m where x is NaN, then the first index holding it.
template <class V>
int64_t argmax_impl(const float* x, int64_t n) {
  constexpr int W = V::kW;
  typename V::R acc = V::set1(-INFINITY);
  int64_t i = 0;
  for (; i + W <= n; i += W) acc = V::max(V::load(x + i), acc);
  float m = V::reduce_max(acc);
  for (; i < n; ++i)
    if (x[i] > m) m = x[i];
  const typename V::R mv = V::set1(m);
  for (i = 0; i + W <= n; i += W)
    if (const int eq = V::eq_mask(V::load(x + i), mv)) return i + __builtin_ctz(eq);
  for (; i < n; ++i)
    if (x[i] == m) return i;
  return 0;
}

template <class V>
void rope_impl(float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim,
               const int32_t* positions, const float* inv_freq, RopeStyle style, int rot_dim,
               float mscale) {
  constexpr int W = V::kW;
  const int rd = rot_dim > 0 ? rot_dim : head_dim;  // the rotated prefix of each head
  const int half = rd / 2;
  thread_local std::vector<float> tab;
  if (tab.size() < static_cast<size_t>(6 * half)) tab.resize(6 * half);
  float* c = tab.data();
  float* s = c + half;
  float* ci = s + half;  // interleaved layout: c0 c0 c1 c1 ...
  float* si = ci + rd;   // -s0 s0 -s1 s1 ...
  for (int64_t t = 0; t < n_tok; ++t) {
    rope_tables(positions[t], inv_freq, half, mscale, c, s);
    float* xt = x + t * ld;
    if (style == RopeStyle::kNeox) {
      for (int h = 0; h < n_heads; ++h) {
        float* x1 = xt + static_cast<int64_t>(h) * head_dim;
        float* x2 = x1 + half;
        int i = 0;
        // HF: q * cos + rotate_half(q) * sin, rotate_half = cat(-x2, x1).
        for (; i + W <= half; i += W) {
          typename V::R a = V::load(x1 + i), b = V::load(x2 + i);
          typename V::R cv = V::load(c + i), sv = V::load(s + i);
          V::store(x1 + i, V::sub(V::mul(a, cv), V::mul(b, sv)));
          V::store(x2 + i, V::add(V::mul(b, cv), V::mul(a, sv)));
        }
        if (i < half) {
          int n = half - i;
          typename V::R a = V::load_partial(x1 + i, n, 0.f), b = V::load_partial(x2 + i, n, 0.f);
          typename V::R cv = V::load_partial(c + i, n, 0.f), sv = V::load_partial(s + i, n, 0.f);
          V::store_partial(x1 + i, V::sub(V::mul(a, cv), V::mul(b, sv)), n);
          V::store_partial(x2 + i, V::add(V::mul(b, cv), V::mul(a, sv)), n);
        }
      }
    } else if constexpr (W == 1) {
      for (int h = 0; h < n_heads; ++h) {
        float* xh = xt + static_cast<int64_t>(h) * head_dim;
        for (int i = 0; i < half; ++i) {
          const float a = xh[2 * i], b = xh[2 * i + 1];
          xh[2 * i] = a * c[i] - b * s[i];
          xh[2 * i + 1] = b * c[i] + a * s[i];
        }
      }
    } else {
      for (int i = 0; i < half; ++i) {
        ci[2 * i] = ci[2 * i + 1] = c[i];
        si[2 * i] = -s[i];
        si[2 * i + 1] = s[i];
      }
      for (int h = 0; h < n_heads; ++h) {
        float* xh = xt + static_cast<int64_t>(h) * head_dim;
        int i = 0;
        // Pair (a, b) -> (a c - b s, b c + a s): x * c + swap(x) * (-s, s).
        for (; i + W <= rd; i += W) {
          typename V::R v = V::load(xh + i);
          V::store(xh + i,
                   V::add(V::mul(v, V::load(ci + i)), V::mul(V::swap_pairs(v), V::load(si + i))));
        }
        if (i < rd) {
          int n = rd - i;
          typename V::R v = V::load_partial(xh + i, n, 0.f);
          V::store_partial(xh + i,
                           V::add(V::mul(v, V::load_partial(ci + i, n, 0.f)),
                                  V::mul(V::swap_pairs(v), V::load_partial(si + i, n, 0.f))),
                           n);
        }
      }
    }
  }
}

}  // namespace
}  // namespace vt::cpu
