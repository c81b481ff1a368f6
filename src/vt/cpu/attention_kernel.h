// Paged attention, written once against the vector traits of ops_simd.h and instantiated
// per ISA (attention.cpp, attention_avx2.cpp, attention_avx512.cpp).
//
// Cache layout (see KvLayerView): K pages are [kv_head][dim][slot], so for one page and one
// dim the keys of all slots are contiguous; V pages are [kv_head][slot][dim], so a kv head's
// V rows of one page are contiguous too (one stream, not rows 2 KiB apart). Scores are
// computed with vector lanes = keys: score_j = (fma chain over d = 0..hd-1 of q[d] * k_j[d],
// starting from 0, in d order) * scale. Each key has its own chain, so there is no
// horizontal reduction, one K vector load feeds every query head of the GQA group, and the
// scalar instantiation (one key per "vector", std::fma) computes bit-identical scores. The
// softmax exp is one algorithm on every ISA, its denominator is a canonical 16-lane sum
// (ops_simd.h), P.V accumulates each d over keys in order with fused multiply-adds, and these
// files are compiled without fp contraction (CMakeLists.txt): attention is ISA-invariant.
//
// Batch invariance is the design constraint. A token's keys 0..pos are cut into segments of
// kAttnSeg positions aligned to absolute position 0. Each segment gets an exact softmax
// partial (max m, sum l, unnormalized P.V o); partials are folded left to right with one
// merge function; the result is divided by l at the end. Every per-head operation (score
// chains, reductions, merges) depends only on the head's own data and pos, never on how
// many heads or keys are processed together, which lane a key lands in, which thread runs
// it, or whether the segments of a token were spread over threads (split mode) or walked by
// one thread (whole mode). So the output for a token is bit-identical whatever else is in
// the batch. That is also what lets a prefill share work across tokens: consecutive tokens
// of one sequence run each segment as one pass of up to nt * g query vectors
// (attn_group_whole), each K/V vector loaded and widened once for all of them.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "vt/cpu/attention_scores.h"
#include "vt/cpu/attention_segments.h"
#include "vt/cpu/kernels.h"
#include "vt/cpu/ops_simd.h"

namespace vt::cpu {
namespace {

constexpr int kAttnMaxGroup = 8;  // query heads sharing one pass over a segment's K/V

struct AttnCtx {
  const float* q;
  int64_t ldq;
  float* out;
  int64_t ldo;
  int n_kv, hd, bs, group;
  const void* kc;  // V::Elem (float or fp16) pages, see KvLayerView
  const void* vc;
  const int32_t* positions;
  const int32_t* seq_of_token;
  const int32_t* bt;
  int64_t bt_stride;
  float scale;
  int window;          // AttnBatch::window
  float softcap;       // AttnBatch::softcap
  const float* sinks;  // AttnBatch::sinks
};
// The sinks of query heads h0.. (null: none).
inline const float* attn_sinks(const AttnCtx& c, int h0) {
  return c.sinks ? c.sinks + h0 : nullptr;
}

// One work unit: heads [h0, h0 + g) of tokens t .. t + nt - 1 (consecutive tokens of one
// sequence; nt > 1 only in whole mode), all sharing kv head h0 / group; or, nh > 1 (one
// token, g = group), all query heads [h0, h0 + nh * g) of kv heads h0 / group .. + nh - 1.
struct AttnGroup {
  int64_t t;
  int h0, g, nseg, nt;  // nseg: segments from seg0 (split mode)
  int64_t first_item;   // split mode: index of its segment 0 in the item list
  int nh = 1;
  int seg0 = 0;  // split mode: the token's first segment (a sliding window skips earlier ones)
  int nq() const { return g * nh; }  // query vectors per token
};

struct AttnThreadScratch {
  std::vector<float> sc, o, q, ml;
  std::vector<AttnKChunk> kchunk;
  std::vector<const void*> vrow;  // V::Elem rows
  // Room for units of up to `heads` query vectors (kAttnMaxGroup at least).
  void reserve(int hd, int heads) {
    const size_t h = static_cast<size_t>(std::max(heads, kAttnMaxGroup));
    if (sc.size() < h * kAttnSeg) {
      sc.resize(h * kAttnSeg);
      ml.resize(4 * h);
    }
    if (kchunk.size() < static_cast<size_t>(kAttnSeg)) {
      kchunk.resize(kAttnSeg);
      vrow.resize(kAttnSeg);
    }
    if (o.size() < h * (hd + 2)) o.resize(h * (hd + 2));
    if (q.size() < static_cast<size_t>(kAttnMaxGroup * hd)) q.resize(kAttnMaxGroup * hd);
  }
};

inline AttnThreadScratch& attn_thread_scratch(int hd, int heads) {
  thread_local AttnThreadScratch s;
  s.reserve(hd, heads);
  return s;
}

// Vectors of d per P.V pass: G * DT accumulators + DT V vectors + one broadcast. A whole
// 128-wide head row in one pass (DT = 8 on AVX-512 for G <= 2) reads each V row once instead
// of twice; every output element still accumulates over the keys in order, the same bits.
template <int W, int G>
constexpr int attn_pv_vectors() {
  const int regs = W >= 16 ? 30 : 14;
  for (int dt : {8, 4, 2})
    if (G * dt + dt + 1 <= regs) return dt;
  return 1;
}

inline const int32_t* attn_block_table(const AttnCtx& c, int64_t t) {
  return c.bt + static_cast<int64_t>(c.seq_of_token[t]) * c.bt_stride;
}
inline const float* attn_query(const AttnCtx& c, int64_t t, int h0) {
  return c.q + t * c.ldq + static_cast<int64_t>(h0) * c.hd;
}

// Exact softmax partial of G query vectors q[g * hd ..] (heads of kv head kvh, of one token
// or of several tokens of the sequence with block table bt) over positions [p0, p1]
// (p1 - p0 < kAttnSeg), or, with n_of, vector g over positions [p0, p0 + n_of[g]) (a tile's
// tokens on their last segment): m[g] = max score, l[g] = sum exp(score - m),
// o[g*hd + d] = sum exp(score - m) v[d]. Each g's arithmetic is its own (see the top): its
// key chains do not depend on which other keys share a vector, and its softmax and P.V
// sums run over its own keys only, in order.
//
// lo_of (a sliding window): vector g attends to positions >= lo_of[g] only. The keys below get
// no weight at all: their scores do not enter the max, the exp sum starts at the first key
// that counts, and their P.V weight is exactly 0. A token's (p0, lo) are fixed by its position
// and the window, so its arithmetic stays the same whatever shares the pass.
//
// nh > 1 (one token, no n_of): the same for kv heads kvh .. kvh + nh - 1 at once, q, o, m
// and l head after head (G vectors each). The pages are then walked in address order, every
// head's slice of a page before the next page (attn_scores; the P.V pass goes page by page
// too, each head's accumulators parked in o between pages): a stream the hardware
// prefetchers follow, where one kv head at a time reads a 4 KiB slice of each page, 32 KiB
// apart. Each head's operations and their order are those of nh = 1: the same bits.
template <class V, int G>
__attribute__((noinline)) void attn_segment(const AttnCtx& c, const float* q, const int32_t* bt,
                                            int kvh, int nh, int p0, int p1, const int* n_of,
                                            const int* lo_of, float* o, float* m, float* l,
                                            AttnThreadScratch& s) {
  using R = typename V::R;
  using E = typename V::Elem;
  constexpr int W = V::kW;
  const int hd = c.hd;
  const int bs = c.bs;
  const int n = p1 - p0 + 1;
  const int64_t page = static_cast<int64_t>(bs) * c.n_kv * hd;  // elements per page (K or V)
  const int64_t hs = static_cast<int64_t>(hd) * bs;             // one kv head's slice of a page
  // The kv head's K rows (hd * bs elements) and V rows (bs * hd) in page 0.
  const E* kh = static_cast<const E*>(c.kc) + static_cast<int64_t>(kvh) * hs;
  const E* vh = static_cast<const E*>(c.vc) + static_cast<int64_t>(kvh) * hs;
  // One run of keys in one page per step: the run's V rows, and (one kv head) every line of
  // the page's K rows prefetched into L2 before the scores (the pages are scattered, so no
  // hardware prefetcher runs ahead across them). The score tiles fetch their keys' V rows
  // while they compute (attn_score_tile), so the P.V pass finds them in cache. Fetching V
  // here too, or a few keys ahead in the P.V pass, waited on DRAM on top of the fmas:
  // `bench_ops 'attn_decode/avx2/16x8x128/seqs:32/ctx:320/f16'` read 15-17 GB/s that way,
  // 24-27 GB/s with V fetched in the score tiles (2-core Zen 4 VM, AVX2). Several kv heads
  // read the pages in address order instead (above) and leave K to the hardware.
  constexpr int kLine = 64 / static_cast<int>(sizeof(E));
  const void** vrow = s.vrow.data();
  for (int j = 0; j < n;) {
    const int p = p0 + j, slot = p % bs;
    const int len = std::min(bs - slot, n - j);
    const int64_t pg = static_cast<int64_t>(bt[p / bs]) * page;
    if (nh == 1)
      for (int64_t e = 0; e < hs; e += kLine) __builtin_prefetch(kh + pg + e, 0, 2);
    const E* vr = vh + pg + static_cast<int64_t>(slot) * hd;
    for (int i = 0; i < len; ++i) vrow[j + i] = vr + static_cast<int64_t>(i) * hd;
    j += len;
  }

  // K chunks. With bs a multiple of W, chunk i is keys [i*W, i*W + W) (p0 is a multiple of
  // W, so it lies in one page) read with full loads, only the segment's last chunk being
  // partial. Otherwise each run of keys in one page is cut into chunks of up to W keys,
  // read with masked loads. A key's lane holds its own k[d] either way, so the scores are
  // the same bits.
  AttnKChunk* ch = s.kchunk.data();
  int nch = 0;
  const bool aligned = bs % W == 0;
  for (int j = 0; j < n; ++nch) {
    const int p = p0 + j, slot = p % bs;
    const int len = std::min({W, bs - slot, n - j});
    ch[nch] = {kh + static_cast<int64_t>(bt[p / bs]) * page + slot, j, len};
    j += len;
  }
  float* sc = s.sc.data();
  if (aligned)
    attn_scores<V, G, AttnKLoad::kFull, AttnKLoad::kLastPartial>(nch, q, hd, ch, bs, c.scale, vrow,
                                                                 sc, nh);
  else
    attn_scores<V, G, AttnKLoad::kPartial, AttnKLoad::kPartial>(nch, q, hd, ch, bs, c.scale, vrow,
                                                                sc, nh);

  int ng[G];
  int nmin = n;
  for (int g = 0; g < G; ++g) nmin = std::min(nmin, ng[g] = n_of ? n_of[g] : n);
  // Soft-capping (Gemma 2), score by score with the shared exp: the same bits on every ISA.
  if (c.softcap > 0)
    for (int h = 0; h < nh; ++h)
      for (int g = 0; g < G; ++g) softcap_inplace<V>(sc + (h * G + g) * kAttnSeg, ng[g], c.softcap);

  // Softmax numerators per head.
  for (int h = 0; h < nh; ++h)
    for (int g = 0; g < G; ++g) {
      float* sg = sc + (h * G + g) * kAttnSeg;
      const int cut = lo_of ? std::clamp(lo_of[g] - p0, 0, ng[g]) : 0;  // keys outside the window
      m[h * G + g] = row_max<V>(sg + cut, ng[g] - cut);
      l[h * G + g] = exp_sub_sum16<V>(sg + cut, ng[g] - cut, m[h * G + g]);
      std::fill(sg, sg + cut, 0.0f);
    }

  // P.V: each output vector accumulates over keys in order; DT vectors of d per pass keep
  // G * DT accumulators in registers. The widest pass that fits reads each V row of the
  // segment once (AVX-512: head_dim 128 with DT = 8 for G <= 2, head_dim 64 with DT = 4).
  // One pass over keys [j0, j1) of kv head h for the DT vectors of d from d, the
  // accumulators starting from 0 or (kResume) from where the previous keys left them in o:
  auto pass = [&]<int DT, bool kResume>(int h, int d, int j0, int j1) {
    R acc[G][DT];
    float* oh = o + static_cast<int64_t>(h) * G * hd + d;
    const float* sch = sc + h * G * kAttnSeg;
    const int64_t ho = h * hs;
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
      for (int u = 0; u < DT; ++u) acc[g][u] = kResume ? V::load(oh + g * hd + u * W) : V::zero();
    int jj = j0;
    for (const int je = std::min(j1, nmin); jj < je; ++jj) {
      const E* vr = static_cast<const E*>(vrow[jj]) + ho + d;
      R vv[DT];
#pragma GCC unroll 8
      for (int u = 0; u < DT; ++u) vv[u] = V::kv_load(vr + u * W);
#pragma GCC unroll 8
      for (int g = 0; g < G; ++g) {
        R pv = V::set1(sch[g * kAttnSeg + jj]);
#pragma GCC unroll 8
        for (int u = 0; u < DT; ++u) acc[g][u] = V::fma(pv, vv[u], acc[g][u]);
      }
    }
    for (; jj < j1; ++jj) {  // keys only some vectors see (n_of)
      const E* vr = static_cast<const E*>(vrow[jj]) + ho + d;
      R vv[DT];
#pragma GCC unroll 8
      for (int u = 0; u < DT; ++u) vv[u] = V::kv_load(vr + u * W);
      for (int g = 0; g < G; ++g) {
        if (jj >= ng[g]) continue;
        R pv = V::set1(sch[g * kAttnSeg + jj]);
#pragma GCC unroll 8
        for (int u = 0; u < DT; ++u) acc[g][u] = V::fma(pv, vv[u], acc[g][u]);
      }
    }
#pragma GCC unroll 8
    for (int g = 0; g < G; ++g)
#pragma GCC unroll 8
      for (int u = 0; u < DT; ++u) V::store(oh + g * hd + u * W, acc[g][u]);
  };
  constexpr int DT = attn_pv_vectors<W, G>();
  constexpr int DT2 = DT > 4 ? 4 : DT;  // a head row narrower than DT vectors (head_dim 64)
  // Keys [j0, j1) of kv head h, every d.
  auto head_row = [&]<bool kResume>(int h, int j0, int j1) {
    int d = 0;
    if constexpr (DT > DT2)
      for (; d + DT * W <= hd; d += DT * W) pass.template operator()<DT, kResume>(h, d, j0, j1);
    for (; d + DT2 * W <= hd; d += DT2 * W) pass.template operator()<DT2, kResume>(h, d, j0, j1);
    for (; d < hd; d += W) pass.template operator()<1, kResume>(h, d, j0, j1);
  };
  if (nh == 1) {
    head_row.template operator()<false>(0, 0, n);
  } else {  // page by page (runs of keys in one page), every head's slice in turn
    for (int j = 0; j < n;) {
      const int len = std::min(bs - (p0 + j) % bs, n - j);
      for (int h = 0; h < nh; ++h)
        if (j == 0)
          head_row.template operator()<false>(h, j, j + len);
        else
          head_row.template operator()<true>(h, j, j + len);
      j += len;
    }
  }
}

template <class V>
void attn_segment_g(int G, int nh, const AttnCtx& c, const float* q, const int32_t* bt, int kvh,
                    int p0, int p1, const int* n_of, const int* lo_of, float* o, float* m, float* l,
                    AttnThreadScratch& s) {
  switch (G) {
#define VT_ATTN_SEG_CASE(g) \
  case g:                   \
    return attn_segment<V, g>(c, q, bt, kvh, nh, p0, p1, n_of, lo_of, o, m, l, s);
    VT_ATTN_SEG_CASE(1)
    VT_ATTN_SEG_CASE(2)
    VT_ATTN_SEG_CASE(3)
    VT_ATTN_SEG_CASE(4)
    VT_ATTN_SEG_CASE(5)
    VT_ATTN_SEG_CASE(6)
    VT_ATTN_SEG_CASE(7)
#undef VT_ATTN_SEG_CASE
    default:
      return attn_segment<V, 8>(c, q, bt, kvh, nh, p0, p1, n_of, lo_of, o, m, l, s);
  }
}

// Whole mode: one thread walks every segment of the unit's tokens. Each segment runs once
// for all the unit's tokens that reach it (nt * g query vectors at most; on a token's last
// segment only its own keys count, via n_of), so each K and V vector loaded and widened
// feeds up to nt * g heads instead of g. Every (token, head) gets the partials of the same
// segments, merged in the same order, as when it runs alone: the bits do not depend on the
// unit's shape.
template <class V>
void attn_group_whole(const AttnCtx& c, const AttnGroup& gr) {
  const int hd = c.hd, g = gr.g;
  AttnThreadScratch& s = attn_thread_scratch(hd, g * gr.nh);
  const int64_t gh = static_cast<int64_t>(g) * hd;
  const int kvh = gr.h0 / c.group;
  const int32_t* bt = attn_block_table(c, gr.t);
  float* o = s.o.data();
  auto out = [&](int i) { return c.out + (gr.t + i) * c.ldo + static_cast<int64_t>(gr.h0) * hd; };
  if (gr.nt == 1) {
    const int32_t pos = c.positions[gr.t];
    const float* q = attn_query(c, gr.t, gr.h0);
    const int nq = g * gr.nh;  // query vectors, kv head after kv head
    float *M = s.ml.data(), *L = M + nq, *m = L + nq, *l = m + nq;
    float* O = out(0);
    int lo_buf[kAttnMaxGroup];
    const int sg0 = attn_first_segment(pos, c.window);
    for (int sg = sg0; sg <= pos / kAttnSeg; ++sg) {
      const int p0 = sg * kAttnSeg;
      const int p1 = std::min<int>(pos, p0 + kAttnSeg - 1);
      const int* lo_of = attn_window_lo(pos, c.window, p0, g, lo_buf);
      if (sg == sg0) {
        attn_segment_g<V>(g, gr.nh, c, q, bt, kvh, p0, p1, nullptr, lo_of, O, M, L, s);
      } else {
        attn_segment_g<V>(g, gr.nh, c, q, bt, kvh, p0, p1, nullptr, lo_of, o, m, l, s);
        attn_merge<V>(nq, hd, O, M, L, o, m, l);
      }
    }
    attn_finish<V>(nq, hd, O, M, L, attn_sinks(c, gr.h0));
    return;
  }
  float M[kAttnMaxGroup], L[kAttnMaxGroup], m[kAttnMaxGroup], l[kAttnMaxGroup];
  int sg_lo = INT32_MAX, sg_hi = 0;
  for (int i = 0; i < gr.nt; ++i) {
    sg_lo = std::min(sg_lo, attn_first_segment(c.positions[gr.t + i], c.window));
    sg_hi = std::max(sg_hi, c.positions[gr.t + i] / kAttnSeg);
  }
  float* qs = s.q.data();
  int who[kAttnMaxGroup], n_of[kAttnMaxGroup], lo_of[kAttnMaxGroup];
  for (int sg = sg_lo; sg <= sg_hi; ++sg) {
    const int p0 = sg * kAttnSeg;
    int k = 0, p1 = p0;
    bool masked = false;
    for (int i = 0; i < gr.nt; ++i) {
      const int32_t pos = c.positions[gr.t + i];
      if (pos < p0 || attn_first_segment(pos, c.window) > sg) continue;
      const int last = std::min<int>(pos, p0 + kAttnSeg - 1);
      const int lo = attn_lo(pos, c.window);
      masked |= lo > p0;
      p1 = std::max(p1, last);
      std::copy_n(attn_query(c, gr.t + i, gr.h0), gh, qs + k * gh);
      for (int h = 0; h < g; ++h) {
        n_of[k * g + h] = last - p0 + 1;
        lo_of[k * g + h] = lo;
      }
      who[k++] = i;
    }
    if (k == 0) continue;  // positions with a gap: no token of the unit reaches sg
    attn_segment_g<V>(k * g, 1, c, qs, bt, kvh, p0, p1, n_of, masked ? lo_of : nullptr, o, m, l, s);
    for (int j = 0; j < k; ++j) {
      const int i = who[j];
      if (sg == attn_first_segment(c.positions[gr.t + i], c.window)) {
        std::copy_n(o + j * gh, gh, out(i));
        std::copy_n(m + j * g, g, M + i * g);
        std::copy_n(l + j * g, g, L + i * g);
      } else {
        attn_merge<V>(g, hd, out(i), M + i * g, L + i * g, o + j * gh, m + j * g, l + j * g);
      }
    }
  }
  for (int i = 0; i < gr.nt; ++i)
    attn_finish<V>(g, hd, out(i), M + i * g, L + i * g, attn_sinks(c, gr.h0));
}

struct AttnPlan {
  std::vector<AttnGroup> groups;
  std::vector<int64_t> item_group;  // split mode: item -> group index
  std::vector<float> partials;      // split mode: per item [o (g*hd) | m (g) | l (g)]
};

template <class V>
void paged_attention_impl(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                          const AttnBatch& batch, float scale, float* out, int64_t ldo,
                          ThreadPool& pool) {
  const int64_t n_tok = batch.n_tok;
  if (n_tok <= 0 || n_heads <= 0 || cache.n_kv_heads <= 0) return;
  const int n_kv = cache.n_kv_heads;
  const int hd = cache.head_dim;
  const int group = n_heads / n_kv;
  AttnCtx c{q,
            ldq,
            out,
            ldo,
            n_kv,
            hd,
            cache.block_size,
            group,
            cache.k,
            cache.v,
            batch.positions,
            batch.seq_of_token,
            batch.block_tables,
            batch.bt_stride,
            scale,
            batch.window,
            batch.softcap,
            batch.sinks};

  // Work decomposition: only changes who computes what, never the arithmetic per head.
  const int64_t want = 4 * static_cast<int64_t>(pool.size());
  int64_t total_segs = 0;
  const int window = batch.window;
  for (int64_t t = 0; t < n_tok; ++t) total_segs += attn_num_segments(batch.positions[t], window);
  int nsub = (group + kAttnMaxGroup - 1) / kAttnMaxGroup;
  bool split = false;
  if (n_tok * n_kv * nsub < want) {
    split = total_segs > n_tok;
    if (n_kv * nsub * (split ? total_segs : n_tok) < want) nsub = group;  // one head per unit
  }

  thread_local AttnPlan plan;
  plan.groups.clear();
  plan.item_group.clear();
  int gmax = 1;
  // Units of a run of consecutive tokens of one sequence go kv head by kv head, so the
  // pages of one kv head stay in cache while the run's tokens read them. In whole mode a
  // unit takes up to kAttnMaxGroup / group consecutive tokens of the run.
  const int tile = !split && nsub == 1 ? std::max(1, kAttnMaxGroup / group) : 1;
  // The end of the run of consecutive tokens of one sequence that starts at r0.
  auto run_end = [&](int64_t r0) {
    int64_t r1 = r0 + 1;
    while (r1 < n_tok && batch.seq_of_token[r1] == batch.seq_of_token[r0]) ++r1;
    return r1;
  };
  // Whole mode with at least `want` one-token runs (decode steps of a batch): each such
  // token is one unit over all its kv heads (attn_segment's nh), reading its pages in
  // address order. `bench_ops 'attn_decode/avx512/16x8x128/seqs:32/ctx:2048/f16/bs:16/asc'`
  // (pages in the order a fresh pool hands them out) 21-23 -> 28-31 GB/s, the same with
  // pages reversed 21-22 -> 23-27; 32 requests of 256 in / 128 out, output tok/s, 3
  // alternations: Q5_K_M 126-139 -> 139-145, Q4_K_M 130-144 -> 137-145 (2-core Zen 4 VM,
  // 2026-12-04). Fewer (batch-1 decode), the kv heads stay separate units so every thread
  // works.
  bool all_heads = false;
  if (nsub == 1 && n_kv > 1) {
    int64_t singles = 0;  // one-token runs
    for (int64_t r0 = 0, r1; r0 < n_tok; r0 = r1) {
      r1 = run_end(r0);
      singles += r1 - r0 == 1;
    }
    all_heads = !split && singles >= want;
    // A few decode tokens deep in their context (batch-1 decode of a long prompt): split
    // mode over segments, each segment a unit over all kv heads, when the segments alone
    // give every thread work. Qwen3-0.6B-shape Q4_K_M batch-1 decode at 4096 positions
    // (`vllm bench latency --input-len 4096 --output-len 32`, two alternations) 28.1-28.3
    // -> 35.2-42.3 tok/s.
    if (!split && singles == n_tok && n_tok < want && total_segs >= want) split = all_heads = true;
  }
  for (int64_t r0 = 0, r1; r0 < n_tok; r0 = r1) {
    r1 = run_end(r0);
    if (all_heads && r1 - r0 == 1) {
      const int nseg = attn_num_segments(batch.positions[r0], window);
      AttnGroup gr{r0, 0, group, nseg, 1, static_cast<int64_t>(plan.item_group.size())};
      gr.nh = n_kv;  // every kv head of the token
      gr.seg0 = attn_first_segment(batch.positions[r0], window);
      gmax = std::max(gmax, gr.nq());
      if (split)
        for (int sg = 0; sg < gr.nseg; ++sg) plan.item_group.push_back(plan.groups.size());
      plan.groups.push_back(gr);
      continue;
    }
    for (int kvh = 0; kvh < n_kv; ++kvh) {
      for (int64_t t = r0; t < r1; t += tile) {
        const int nt = static_cast<int>(std::min<int64_t>(tile, r1 - t));
        // Split mode has one-token units (tile 1): their segments, from the first one.
        const int nseg = attn_num_segments(batch.positions[t + nt - 1], window);
        for (int sub = 0; sub < nsub; ++sub) {
          const int a = group * sub / nsub, b = group * (sub + 1) / nsub;
          AttnGroup gr{
              t, kvh * group + a, b - a, nseg, nt, static_cast<int64_t>(plan.item_group.size())};
          gr.seg0 = attn_first_segment(batch.positions[t + nt - 1], window);
          gmax = std::max(gmax, gr.g);
          if (split)
            for (int sg = 0; sg < nseg; ++sg) plan.item_group.push_back(plan.groups.size());
          plan.groups.push_back(gr);
        }
      }
    }
  }
  const int64_t n_groups = static_cast<int64_t>(plan.groups.size());
  const AttnGroup* groups = plan.groups.data();

  if (!split) {
    // Later tokens of a prefill see more keys: hand out the biggest units first.
    std::atomic<int64_t> next{0};
    pool.run([&](int, int) {
      for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n_groups;)
        attn_group_whole<V>(c, groups[n_groups - 1 - i]);
    });
    return;
  }

  const int64_t n_items = static_cast<int64_t>(plan.item_group.size());
  const int64_t pstride = (static_cast<int64_t>(gmax) * (hd + 2) + 15) & ~int64_t{15};
  if (plan.partials.size() < static_cast<size_t>(n_items * pstride))
    plan.partials.resize(n_items * pstride);
  float* partials = plan.partials.data();
  const int64_t* item_group = plan.item_group.data();
  std::atomic<int64_t> next{0};
  pool.run([&](int, int) {
    AttnThreadScratch& s = attn_thread_scratch(hd, gmax);
    for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n_items;) {
      const AttnGroup& gr = groups[item_group[i]];
      const int sg = gr.seg0 + static_cast<int>(i - gr.first_item);
      const int32_t pos = c.positions[gr.t];
      const int p0 = sg * kAttnSeg;
      const int p1 = std::min<int>(pos, p0 + kAttnSeg - 1);
      float* po = partials + i * pstride;
      int lo_buf[kAttnMaxGroup];
      attn_segment_g<V>(gr.g, gr.nh, c, attn_query(c, gr.t, gr.h0), attn_block_table(c, gr.t),
                        gr.h0 / c.group, p0, p1, nullptr,
                        attn_window_lo(pos, c.window, p0, gr.g, lo_buf), po, po + gr.nq() * hd,
                        po + gr.nq() * hd + gr.nq(), s);
    }
  });
  pool.parallel_for(n_groups, [&](int64_t b, int64_t e) {
    float* M = attn_thread_scratch(hd, gmax).ml.data();
    float* L = M + gmax;
    for (int64_t gi = b; gi < e; ++gi) {
      const AttnGroup& gr = groups[gi];
      const int nq = gr.nq();
      float* O = c.out + gr.t * c.ldo + static_cast<int64_t>(gr.h0) * hd;
      const int64_t gh = static_cast<int64_t>(nq) * hd;
      const float* p = partials + gr.first_item * pstride;
      std::copy(p, p + gh, O);
      std::copy(p + gh, p + gh + nq, M);
      std::copy(p + gh + nq, p + gh + 2 * nq, L);
      for (int sg = 1; sg < gr.nseg; ++sg) {
        p += pstride;
        attn_merge<V>(nq, hd, O, M, L, p, p + gh, p + gh + nq);
      }
      attn_finish<V>(nq, hd, O, M, L, attn_sinks(c, gr.h0));
    }
  });
}

// The entry point per ISA: picks the instantiation for the cache's element type.
template <class Base>
void paged_attention_any(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                         const AttnBatch& batch, float scale, float* out, int64_t ldo,
                         ThreadPool& pool) {
  if (cache.dtype == DType::F16)
    paged_attention_impl<AttnVec<Base, uint16_t>>(q, ldq, n_heads, cache, batch, scale, out, ldo,
                                                  pool);
  else if (cache.dtype == DType::BF16)
    paged_attention_impl<AttnVec<Base, Bf16Elem>>(q, ldq, n_heads, cache, batch, scale, out, ldo,
                                                  pool);
  else
    paged_attention_impl<AttnVec<Base, float>>(q, ldq, n_heads, cache, batch, scale, out, ldo,
                                               pool);
}

}  // namespace
}  // namespace vt::cpu
