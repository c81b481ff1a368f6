// Paged attention's segments (see attention_kernel.h for the invariance argument): which
// kAttnSeg-position segments a token reads (all up to its own, or, with a sliding window, from
// the one holding its first visible position), and how the exact softmax partials of those
// segments fold together. The fold is the one place partials meet, so every work
// decomposition gives the same bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "vt/cpu/attention_scores.h"
#include "vt/cpu/ops_simd.h"

namespace vt::cpu {
namespace {

// Folds partial (o, m, l) into the running state (O, M, L). The one place partials meet,
// so whole and split mode produce the same bits.
template <class V>
__attribute__((noinline)) void attn_merge(int G, int hd, float* O, float* M, float* L,
                                          const float* o, const float* m, const float* l) {
  constexpr int W = V::kW;
  for (int g = 0; g < G; ++g) {
    const float mn = std::max(M[g], m[g]);
    const float a = std::exp(M[g] - mn);
    const float b = std::exp(m[g] - mn);
    const float la = L[g] * a;
    const float lb = l[g] * b;
    L[g] = la + lb;
    M[g] = mn;
    const typename V::R va = V::set1(a), vb = V::set1(b);
    float* Og = O + static_cast<int64_t>(g) * hd;
    const float* og = o + static_cast<int64_t>(g) * hd;
    for (int d = 0; d < hd; d += W)
      V::store(Og + d, V::add(V::mul(V::load(Og + d), va), V::mul(V::load(og + d), vb)));
  }
}

// O /= L for G vectors; with sinks (the vectors' heads' sink logits, attention sinks), each
// sink first joins the softmax's denominator as one more score with no value row: with
// mn = max(M, sink), O * exp(M - mn) / (L exp(M - mn) + exp(sink - mn)). Scalar per vector, the
// same steps on every ISA.
template <class V>
__attribute__((noinline)) void attn_finish(int G, int hd, float* O, const float* M, const float* L,
                                           const float* sinks) {
  constexpr int W = V::kW;
  for (int g = 0; g < G; ++g) {
    float* Og = O + static_cast<int64_t>(g) * hd;
    if (sinks) {
      const float mn = std::max(M[g], sinks[g]);
      const float a = std::exp(M[g] - mn);
      const typename V::R va = V::set1(a), vl = V::set1(L[g] * a + std::exp(sinks[g] - mn));
      for (int d = 0; d < hd; d += W) V::store(Og + d, V::div(V::mul(V::load(Og + d), va), vl));
      continue;
    }
    const typename V::R vl = V::set1(L[g]);
    for (int d = 0; d < hd; d += W) V::store(Og + d, V::div(V::load(Og + d), vl));
  }
}

// The first position a token at pos attends to, and the segments it reads: from the one that
// holds that position to the one that holds pos.
inline int attn_lo(int32_t pos, int window) {
  return window > 0 ? std::max(0, pos - window + 1) : 0;
}
inline int attn_first_segment(int32_t pos, int window) { return attn_lo(pos, window) / kAttnSeg; }
inline int attn_num_segments(int32_t pos, int window) {
  return pos / kAttnSeg + 1 - attn_first_segment(pos, window);
}
// lo_of for G vectors of one token: null when no key of segment p0 is outside its window.
inline const int* attn_window_lo(int32_t pos, int window, int p0, int G, int* buf) {
  const int lo = attn_lo(pos, window);
  if (lo <= p0) return nullptr;
  std::fill(buf, buf + G, lo);
  return buf;
}

}  // namespace
}  // namespace vt::cpu
