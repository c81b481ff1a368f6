// Attention scores (see attention_kernel.h for the layout and the invariance argument):
// the K/V element types, and the score tiles that put keys in vector lanes, one fma chain
// per key over d in order, so every ISA computes the same bits.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "vt/cpu/ops_simd.h"

namespace vt::cpu {
namespace {

// A bf16 KV element: distinct from fp16's uint16_t so the element type picks the widening.
struct Bf16Elem {
  uint16_t bits;
};

constexpr int kAttnSeg = 256;  // positions per segment (absolute-aligned)

// A K chunk: up to W keys of one page, consecutive in the segment: lane i holds dim d of
// key j + i at p + d * bs + i, for i < n.
struct AttnKChunk {
  const void* p;  // V::Elem
  int j, n;
};

// The vector traits of ops_simd.h plus how K/V elements are stored: E = float, or
// uint16_t for an fp16 cache (widened to fp32 on load; the arithmetic is the same).
template <class Base, class E>
struct AttnVec : Base {
  using Elem = E;
  static typename Base::R kv_load(const E* p) {
    if constexpr (std::is_same_v<E, float>)
      return Base::load(p);
    else if constexpr (std::is_same_v<E, Bf16Elem>)
      return Base::load_bf16(&p->bits);
    else
      return Base::load_f16(p);
  }
  static typename Base::R kv_load_partial(const E* p, int n) {
    if constexpr (std::is_same_v<E, float>)
      return Base::load_partial(p, n, 0.f);
    else if constexpr (std::is_same_v<E, Bf16Elem>)
      return Base::load_bf16_partial(&p->bits, n);
    else
      return Base::load_f16_partial(p, n);
  }
};

// Keeps a loaded vector in a register: without this GCC folds the K load into each of the
// G fmas that use it, which makes the score loop load-bound (G loads per vector instead of
// one) on cores with one 512-bit load per cycle.
template <class V>
inline void attn_in_register(typename V::R& r) {
  if constexpr (V::kW > 1) asm("" : "+v"(r));
}

// K chunks per score tile: enough independent chains (G * C) to cover the fma latency,
// within the vector register file (accumulators + K vectors + one q broadcast).
template <int W, int G>
constexpr int attn_score_chunks() {
  if (W == 1) return 4;
  const int regs = W >= 16 ? 30 : 14;
  int c = 1;
  while (c < 8 && G * c < 12 && G * (c + 1) + (c + 1) + 1 <= regs) ++c;
  return c;
}

// How a score tile loads its chunks: all full, the last one partial (bs a multiple of W),
// or each one partial (other block sizes: one chunk per run of keys in a page).
enum class AttnKLoad { kFull, kLastPartial, kPartial };

// Scores of G heads for C chunks, their keys hoff elements past the chunks' addresses.
// Masked-off lanes load 0 and are never stored.
// noinline: inlined into attn_segment (the full-load tiles were), GCC 12 allocated the P.V
// pass's G * DT accumulators around the tiles' and spilled them to the stack on every key.
// Out of line, `bench_ops 'attn_prefill/avx512/16x8x128/tok:256/f16'` 108-116 -> 153-157
// GFLOP/s, 'attn_decode/avx512/16x8x128/ctx:4096/f16' 39-42 -> 55 GB/s (2-core Zen 4 VM).
template <class V, int G, int C, AttnKLoad kL, bool kPf>
__attribute__((noinline)) void attn_score_tile(const float* q, int hd, const AttnKChunk* ch,
                                               int64_t bs, float scale, const void* const* vrow,
                                               float* sc, int64_t hoff) {
  using R = typename V::R;
  using E = typename V::Elem;
  R acc[G][C];
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
    for (int i = 0; i < C; ++i) acc[g][i] = V::zero();
  const E* kb[C];
  int kn[C];
#pragma GCC unroll 8
  for (int i = 0; i < C; ++i) kb[i] = static_cast<const E*>(ch[i].p) + hoff, kn[i] = ch[i].n;
  auto step = [&](int d) {
    const int64_t off = d * bs;
    R k[C];
#pragma GCC unroll 8
    for (int i = 0; i < C; ++i) {
      const bool part = kL == AttnKLoad::kPartial || (kL == AttnKLoad::kLastPartial && i == C - 1);
      k[i] = part ? V::kv_load_partial(kb[i] + off, kn[i]) : V::kv_load(kb[i] + off);
      attn_in_register<V>(k[i]);
    }
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g) {
      const R qv = V::set1(q[g * hd + d]);
#pragma GCC unroll 8
      for (int i = 0; i < C; ++i) acc[g][i] = V::fma(qv, k[i], acc[g][i]);
    }
  };
  // kPf: the chunks' V rows (vrow[j]: up to W keys of one page, W * hd contiguous
  // elements) are fetched while the scores are computed, one line per chunk every P dims, all
  // of them by the last d: the P.V pass then finds them in cache, their DRAM time hidden
  // under the score fmas. Prefetches only: the arithmetic and its order are unchanged.
  constexpr int P = std::max(1, 64 / (V::kW * static_cast<int>(sizeof(E))));
  const char* vb[C];
#pragma GCC unroll 8
  for (int i = 0; i < C; ++i) vb[i] = kPf ? static_cast<const char*>(vrow[ch[i].j]) : nullptr;
  int d = 0;
  for (int line = 0; d + P <= hd; d += P, line += 64) {
#pragma GCC unroll 8
    for (int i = 0; i < C; ++i)
      if constexpr (kPf) __builtin_prefetch(vb[i] + line, 0, 2);
#pragma GCC unroll 4
    for (int u = 0; u < P; ++u) step(d + u);
  }
  for (; d < hd; ++d) step(d);
  const R vs = V::set1(scale);
#pragma GCC unroll 8
  for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
    for (int i = 0; i < C; ++i) {
      float* dst = sc + g * kAttnSeg + ch[i].j;
      if constexpr (kL == AttnKLoad::kPartial)
        V::store_partial(dst, V::mul(acc[g][i], vs), kn[i]);
      else  // chunks are W keys apart from j = 0 and a score row has room for the last one
        V::store(dst, V::mul(acc[g][i], vs));
    }
}

// The segment's chunks, C per tile; the last tile has r = 1..C chunks.
template <class V, int G, int C, AttnKLoad kL, AttnKLoad kLast, bool kPf>
inline void attn_score_last(int r, const float* q, int hd, const AttnKChunk* ch, int64_t bs,
                            float scale, const void* const* vrow, float* sc, int64_t hoff) {
  if (r == C) return attn_score_tile<V, G, C, kLast, kPf>(q, hd, ch, bs, scale, vrow, sc, hoff);
  if constexpr (C > 1)
    attn_score_last<V, G, C - 1, kL, kLast, kPf>(r, q, hd, ch, bs, scale, vrow, sc, hoff);
}

// Scores of nh consecutive kv heads (G query vectors each, q and sc head after head), the
// chunks given for the first of them: kv head h's keys and V rows lie hoff = h * hd * bs
// elements further in every page (K [kv_head][dim][slot], V [kv_head][slot][dim]).
//
// One kv head (nh = 1): each tile fetches its chunks' V rows (vrow[j]: up to W keys of one
// page, W * hd contiguous elements) while it computes, so the P.V pass finds them in cache.
// Several: tile after tile, each tile for every head in turn, so the pages are read in
// address order (each page's head slices one after another), a stream the hardware
// prefetchers follow, instead of one head's 4 KiB slice of each page after another; V is
// left to the P.V pass's page-by-page stream (a segment's K and V for every head, 1 MiB
// for Qwen3-0.6B, would not stay in L2 until then). Each head's scores are the same bits
// either way (each key's chain is its own).
template <class V, int G, AttnKLoad kL, AttnKLoad kLast>
inline void attn_scores(int nch, const float* q, int hd, const AttnKChunk* ch, int64_t bs,
                        float scale, const void* const* vrow, float* sc, int nh) {
  constexpr int C = attn_score_chunks<V::kW, G>();
  const int r = nch - C * ((nch - 1) / C);
  const int64_t qs = static_cast<int64_t>(G) * hd, hs = static_cast<int64_t>(hd) * bs;
  auto run = [&]<bool kPf>() {
    int i = 0;
    for (; i + r < nch; i += C)
      for (int h = 0; h < nh; ++h)
        attn_score_tile<V, G, C, kL, kPf>(q + h * qs, hd, ch + i, bs, scale, vrow,
                                          sc + h * G * kAttnSeg, h * hs);
    for (int h = 0; h < nh; ++h)
      attn_score_last<V, G, C, kL, kLast, kPf>(r, q + h * qs, hd, ch + i, bs, scale, vrow,
                                               sc + h * G * kAttnSeg, h * hs);
  };
  if (nh == 1)
    run.template operator()<true>();
  else
    run.template operator()<false>();
}

}  // namespace
}  // namespace vt::cpu
