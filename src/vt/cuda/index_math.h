// Index math of the CUDA kernels, __host__ __device__ so the CPU tests check it against
// the CPU backend and the CPU decode driver: KV slots and page offsets, the decode-state
// advance, attention segments and causal bounds, RoPE angles and pairs, the argmax order.
#pragma once

#include <cstdint>

#include "vt/cuda/hd.h"

namespace vt::cuda {

// ---- paged KV ----

// slot = block_table[pos / block_size] * block_size + pos % block_size (DESIGN.md).
VT_HD int64_t slot_of(const int32_t* bt_row, int32_t pos, int block_size) {
  return static_cast<int64_t>(bt_row[pos / block_size]) * block_size + pos % block_size;
}

// One layer's page geometry (vt::cpu::KvLayerView's layouts):
//   K: [num_blocks][n_kv_heads][head_dim][block_size]
//   V: [num_blocks][n_kv_heads][block_size][head_dim]
struct KvGeom {
  int block_size;
  int n_kv_heads;
  int head_dim;
  VT_HD int64_t row() const { return static_cast<int64_t>(n_kv_heads) * head_dim; }
  VT_HD int64_t page() const { return row() * block_size; }  // elements per page, K or V
};

// Element offset of K[kv_head][d] of the token in `slot`.
VT_HD int64_t k_offset(const KvGeom& g, int64_t slot, int kv_head, int d) {
  return (slot / g.block_size) * g.page() +
         (static_cast<int64_t>(kv_head) * g.head_dim + d) * g.block_size + slot % g.block_size;
}

// Element offset of V[kv_head][d] of the token in `slot`.
VT_HD int64_t v_offset(const KvGeom& g, int64_t slot, int kv_head, int d) {
  return (slot / g.block_size) * g.page() +
         (static_cast<int64_t>(kv_head) * g.block_size + slot % g.block_size) * g.head_dim + d;
}

// ---- decode-state advance (the last op of a captured decode step) ----

// Row i of a padded decode batch moves to its next position: positions += 1, seq_lens += 1,
// slot recomputed from the row's block table. Padding rows (seq_len 0) stay put.
VT_HD void advance_row(int i, int32_t* positions, int32_t* seq_lens, int64_t* slots,
                       const int32_t* block_table, int32_t bt_width, int block_size) {
  if (seq_lens[i] == 0) return;
  const int32_t p = ++positions[i];
  ++seq_lens[i];
  slots[i] = slot_of(block_table + static_cast<int64_t>(i) * bt_width, p, block_size);
}

// ---- attention ----

// A token's keys 0..pos are cut into segments of kAttnSeg positions aligned to position 0.
// Each segment yields an exact softmax partial and partials are folded left to right, so a
// token's result depends on its own position alone, whichever kernel mode (one warp
// walking all segments, or one block per segment plus a merge) ran it.
constexpr int kAttnSeg = 256;

VT_HD int attn_num_segments(int32_t pos) { return pos / kAttnSeg + 1; }
VT_HD int attn_max_segments(int64_t max_model_len) {
  return static_cast<int>((max_model_len + kAttnSeg - 1) / kAttnSeg);
}

// Positions [p0, p1] of segment `seg` of a token at `pos` (requires seg < num_segments).
VT_HD void attn_segment_bounds(int seg, int32_t pos, int32_t* p0, int32_t* p1) {
  *p0 = seg * kAttnSeg;
  const int32_t end = *p0 + kAttnSeg - 1;
  *p1 = pos < end ? pos : end;
}

// Causal bound: the last key a token at `pos` sees. Keys of the same prefill chunk are in
// the cache before attention runs, so token i of a chunk starting at `chunk_start` sees
// keys [0, chunk_start + i] and nothing after it.
VT_HD int32_t attn_last_key(int32_t pos) { return pos; }

// Folds a segment partial (m, l) into the running (M, L); returns the factors a (for the
// running output) and b (for the partial's) with which the outputs combine:
// O = O * a + o * b. The one place partials meet, shared by both kernel modes.
struct AttnMerge {
  float a, b;
};
VT_HD AttnMerge attn_merge(float* M, float* L, float m, float l) {
  const float mn = *M > m ? *M : m;
  AttnMerge f;
#if defined(__CUDA_ARCH__)
  f.a = expf(*M - mn);
  f.b = expf(m - mn);
#else
  f.a = std::exp(*M - mn);
  f.b = std::exp(m - mn);
#endif
  *L = add_rn(mul_rn(*L, f.a), mul_rn(l, f.b));
  *M = mn;
  return f;
}
VT_HD float attn_merge_value(float O, float o, AttnMerge f) {
  return add_rn(mul_rn(O, f.a), mul_rn(o, f.b));
}

// ---- RoPE ----

// The angle of pair i at position pos, in float like HF's rotary tables.
VT_HD float rope_angle(int32_t pos, float inv_freq) {
  return mul_rn(static_cast<float>(pos), inv_freq);
}

// Elements rotated together by pair i of a head of 2 * half elements: (i, i + half) in the
// NeoX / HF layout, (2i, 2i + 1) interleaved (GGUF Llama, whose rows are permuted).
VT_HD void rope_pair(bool neox, int half, int i, int* a, int* b) {
  *a = neox ? i : 2 * i;
  *b = neox ? i + half : 2 * i + 1;
}

// (x_a, x_b) -> (x_a c - x_b s, x_b c + x_a s), each product rounded (as the CPU does).
VT_HD void rope_rotate(float* xa, float* xb, float c, float s) {
  const float a = *xa, b = *xb;
  *xa = sub_rn(mul_rn(a, c), mul_rn(b, s));
  *xb = add_rn(mul_rn(b, c), mul_rn(a, s));
}

// ---- argmax ----

// Whether (v, i) ranks before (bv, bi): numbers before NaNs, larger values first, the lower
// index among equals (and among NaNs). A total order, so any reduction tree finds what
// vt::cpu::argmax finds: the first index of the largest non-NaN value, 0 if all are NaN.
VT_HD bool argmax_better(float v, int32_t i, float bv, int32_t bi) {
  const bool vn = is_nan(v), bn = is_nan(bv);
  if (vn != bn) return bn;
  if (vn) return i < bi;
  return v > bv || (v == bv && i < bi);
}

}  // namespace vt::cuda
