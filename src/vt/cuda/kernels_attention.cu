// Paged KV writes and paged attention over fp32 / fp16 / bf16 pages.
//
// One warp computes one (token, query head). A token's keys 0..pos are cut into segments
// of kAttnSeg positions aligned to position 0 (index_math.h); each segment yields an exact
// softmax partial:
//   scores: lane j takes keys j, j + 32, ...; each score is one fused chain over d in order
//           (K pages are [kv_head][dim][slot]: for one d, consecutive slots are contiguous,
//           so the lanes' loads coalesce);
//   m = max, l = sum of exp(score - m) (lane-strided, then the butterfly);
//   o[d] = fused chain over the segment's keys in order (lane owns d = lane + 32c; V rows
//           are [kv_head][slot][dim] in a page, so the lanes' loads coalesce).
// Partials are folded left to right with attn_merge. Whole mode (one warp walks all
// segments) and split mode (one block per segment, then a merge kernel) run the same
// segment function and the same merge, so they give the same bits; neither depends on the
// other tokens of the launch.
#include "vt/cuda/block_decode.h"
#include "vt/cuda/kernels.h"
#include "vt/cuda/warp.cuh"

namespace vt::cuda {
namespace {

struct F16Elem {
  uint16_t bits;
};
struct Bf16Elem {
  uint16_t bits;
};

__device__ __forceinline__ float kv_load(const float* p) { return *p; }
__device__ __forceinline__ float kv_load(const F16Elem* p) { return fp16_to_fp32(p->bits); }
__device__ __forceinline__ float kv_load(const Bf16Elem* p) { return bf16_to_fp32(p->bits); }

__device__ __forceinline__ void kv_store(float* p, float x) { *p = x; }
__device__ __forceinline__ void kv_store(F16Elem* p, float x) { p->bits = fp32_to_fp16(x); }
__device__ __forceinline__ void kv_store(Bf16Elem* p, float x) { p->bits = fp32_to_bf16(x); }

template <class E>
__global__ void reshape_and_cache_kernel(const float* k, int64_t ldk, const float* v, int64_t ldv,
                                         const int64_t* slots, KvLayer kv) {
  const int64_t t = blockIdx.x;
  const int64_t slot = slots[t];
  if (slot < 0) return;  // padding
  const KvGeom g = kv.geom;
  E* kc = static_cast<E*>(kv.k);
  E* vc = static_cast<E*>(kv.v);
  for (int64_t i = threadIdx.x; i < g.row(); i += blockDim.x) {
    const int h = static_cast<int>(i / g.head_dim), d = static_cast<int>(i % g.head_dim);
    kv_store(kc + k_offset(g, slot, h, d), k[t * ldk + i]);
    kv_store(vc + v_offset(g, slot, h, d), v[t * ldv + i]);
  }
}

constexpr int kDc = kMaxHeadDim / 32;  // output elements per lane

struct SegmentPartial {
  float o[kDc];
  float m, l;
};

// The exact softmax partial of positions [p0, p1] for one query head (q in shared memory).
// `sc` is the warp's kAttnSeg-float score row in shared memory.
template <class E>
__device__ void attn_segment(const float* q_s, float* sc, const KvLayer& kv, const int32_t* bt,
                             int kvh, int32_t p0, int32_t p1, float scale, SegmentPartial& out) {
  const int lane = threadIdx.x % 32;
  const KvGeom g = kv.geom;
  const int D = g.head_dim;
  const int n = p1 - p0 + 1;
  const E* kc = static_cast<const E*>(kv.k);
  const E* vc = static_cast<const E*>(kv.v);
  float m = -INFINITY;
  for (int j = lane; j < n; j += 32) {
    const int64_t slot = slot_of(bt, p0 + j, g.block_size);
    const E* kp = kc + k_offset(g, slot, kvh, 0);
    float acc = 0.0f;
    for (int d = 0; d < D; ++d)
      acc = fma_rn(q_s[d], kv_load(kp + static_cast<int64_t>(d) * g.block_size), acc);
    const float s = mul_rn(acc, scale);
    sc[j] = s;
    m = fmaxf(m, s);
  }
  m = warp_max(m);
  float l = 0.0f;
  for (int j = lane; j < n; j += 32) {
    const float e = expf(sc[j] - m);
    sc[j] = e;
    l = add_rn(l, e);
  }
  l = warp_sum_broadcast(l);
  __syncwarp();
#pragma unroll
  for (int c = 0; c < kDc; ++c) out.o[c] = 0.0f;
  for (int j = 0; j < n; ++j) {
    const float pj = sc[j];
    const E* vp = vc + v_offset(g, slot_of(bt, p0 + j, g.block_size), kvh, 0);
#pragma unroll
    for (int c = 0; c < kDc; ++c) {
      const int d = lane + 32 * c;
      if (d < D) out.o[c] = fma_rn(pj, kv_load(vp + d), out.o[c]);
    }
  }
  __syncwarp();  // sc is rewritten by the next segment
  out.m = m;
  out.l = l;
}

struct TokenHead {
  int64_t t;
  int h, kvh;
  int32_t pos;
  const int32_t* bt;
};

__device__ __forceinline__ TokenHead token_head(const AttnArgs& a, const KvLayer& kv) {
  TokenHead th;
  th.h = blockIdx.x;
  th.t = blockIdx.y;
  th.kvh = th.h / (a.n_heads / kv.geom.n_kv_heads);
  th.pos = a.positions[th.t];
  th.bt = a.block_tables + static_cast<int64_t>(a.seq_of_token[th.t]) * a.bt_stride;
  return th;
}

__device__ __forceinline__ void load_q(const AttnArgs& a, const TokenHead& th, int D, float* q_s) {
  const float* q = a.q + th.t * a.ldq + static_cast<int64_t>(th.h) * D;
  for (int d = threadIdx.x % 32; d < D; d += 32) q_s[d] = q[d];
  __syncwarp();
}

__device__ __forceinline__ void fold(SegmentPartial& acc, const SegmentPartial& p, bool first) {
  if (first) {
    acc = p;
    return;
  }
  const AttnMerge f = attn_merge(&acc.m, &acc.l, p.m, p.l);
#pragma unroll
  for (int c = 0; c < kDc; ++c) acc.o[c] = attn_merge_value(acc.o[c], p.o[c], f);
}

__device__ __forceinline__ void write_out(const AttnArgs& a, const TokenHead& th, int D,
                                          const SegmentPartial& acc) {
  float* out = a.out + th.t * a.ldo + static_cast<int64_t>(th.h) * D;
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int c = 0; c < kDc; ++c) {
    const int d = lane + 32 * c;
    if (d < D) out[d] = div_rn(acc.o[c], acc.l);
  }
}

// Whole mode: grid (n_heads, n_tok), one warp.
template <class E>
__global__ void __launch_bounds__(32) attn_whole_kernel(AttnArgs a, KvLayer kv) {
  __shared__ float q_s[kMaxHeadDim];
  __shared__ float sc[kAttnSeg];
  const TokenHead th = token_head(a, kv);
  const int D = kv.geom.head_dim;
  load_q(a, th, D, q_s);
  SegmentPartial acc, part;
  const int nseg = attn_num_segments(th.pos);
  for (int s = 0; s < nseg; ++s) {
    int32_t p0, p1;
    attn_segment_bounds(s, th.pos, &p0, &p1);
    attn_segment<E>(q_s, sc, kv, th.bt, th.kvh, p0, p1, a.scale, part);
    fold(acc, part, s == 0);
  }
  write_out(a, th, D, acc);
}

// Split mode, pass 1: grid (n_heads, n_tok, max_segments), one warp per segment. A partial
// is stored as [o (head_dim) | m | l].
template <class E>
__global__ void __launch_bounds__(32)
    attn_split_kernel(AttnArgs a, KvLayer kv, float* partials, int max_segments) {
  __shared__ float q_s[kMaxHeadDim];
  __shared__ float sc[kAttnSeg];
  const TokenHead th = token_head(a, kv);
  const int s = blockIdx.z;
  if (s >= attn_num_segments(th.pos)) return;
  const int D = kv.geom.head_dim;
  load_q(a, th, D, q_s);
  int32_t p0, p1;
  attn_segment_bounds(s, th.pos, &p0, &p1);
  SegmentPartial part;
  attn_segment<E>(q_s, sc, kv, th.bt, th.kvh, p0, p1, a.scale, part);
  float* dst = partials + ((th.t * a.n_heads + th.h) * max_segments + s) * (D + 2);
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int c = 0; c < kDc; ++c) {
    const int d = lane + 32 * c;
    if (d < D) dst[d] = part.o[c];
  }
  if (lane == 0) {
    dst[D] = part.m;
    dst[D + 1] = part.l;
  }
}

// Split mode, pass 2: grid (n_heads, n_tok), one warp folds the token's partials in order.
__global__ void __launch_bounds__(32)
    attn_merge_kernel(AttnArgs a, KvLayer kv, const float* partials, int max_segments) {
  const TokenHead th = token_head(a, kv);
  const int D = kv.geom.head_dim;
  const int lane = threadIdx.x % 32;
  int nseg = attn_num_segments(th.pos);
  if (nseg > max_segments) nseg = max_segments;  // past max_model_len: refused upstream
  SegmentPartial acc, part;
  for (int s = 0; s < nseg; ++s) {
    const float* src = partials + ((th.t * a.n_heads + th.h) * max_segments + s) * (D + 2);
#pragma unroll
    for (int c = 0; c < kDc; ++c) {
      const int d = lane + 32 * c;
      part.o[c] = d < D ? src[d] : 0.0f;
    }
    part.m = src[D];
    part.l = src[D + 1];
    fold(acc, part, s == 0);
  }
  write_out(a, th, D, acc);
}

template <class E>
void launch_cache(cudaStream_t s, const float* k, int64_t ldk, const float* v, int64_t ldv,
                  int64_t n_tok, const int64_t* slots, const KvLayer& kv) {
  reshape_and_cache_kernel<E>
      <<<static_cast<unsigned>(n_tok), 128, 0, s>>>(k, ldk, v, ldv, slots, kv);
}

template <class E>
void launch_attention(cudaStream_t s, const AttnArgs& a, const KvLayer& kv, float* partials,
                      int max_segments) {
  const dim3 grid(static_cast<unsigned>(a.n_heads), static_cast<unsigned>(a.n_tok));
  if (partials) {
    attn_split_kernel<E><<<dim3(grid.x, grid.y, static_cast<unsigned>(max_segments)), 32, 0, s>>>(
        a, kv, partials, max_segments);
    attn_merge_kernel<<<grid, 32, 0, s>>>(a, kv, partials, max_segments);
  } else {
    attn_whole_kernel<E><<<grid, 32, 0, s>>>(a, kv);
  }
}

}  // namespace

void reshape_and_cache(cudaStream_t s, const float* k, int64_t ldk, const float* v, int64_t ldv,
                       int64_t n_tok, const int64_t* slots, const KvLayer& kv) {
  if (n_tok <= 0) return;
  if (kv.dtype == DType::F16)
    launch_cache<F16Elem>(s, k, ldk, v, ldv, n_tok, slots, kv);
  else if (kv.dtype == DType::BF16)
    launch_cache<Bf16Elem>(s, k, ldk, v, ldv, n_tok, slots, kv);
  else
    launch_cache<float>(s, k, ldk, v, ldv, n_tok, slots, kv);
}

size_t attention_partials_floats(int64_t n_tok, int n_heads, int head_dim, int max_segments) {
  return static_cast<size_t>(n_tok) * n_heads * max_segments * (head_dim + 2);
}

void paged_attention(cudaStream_t s, const AttnArgs& a, const KvLayer& kv, float* partials,
                     int max_segments) {
  if (a.n_tok <= 0) return;
  if (kv.dtype == DType::F16)
    launch_attention<F16Elem>(s, a, kv, partials, max_segments);
  else if (kv.dtype == DType::BF16)
    launch_attention<Bf16Elem>(s, a, kv, partials, max_segments);
  else
    launch_attention<float>(s, a, kv, partials, max_segments);
}

}  // namespace vt::cuda
