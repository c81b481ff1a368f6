// The CUDA kernels' host entry points: each launches on the given stream and returns at
// once (nothing here synchronizes, allocates or copies, so every call may be recorded by a
// stream capture). Shapes are validated where the model is loaded, not here; a bad launch
// configuration surfaces at the caller's check_launch.
//
// Like vt::cpu's, every kernel is deterministic and batch-invariant: a token's outputs are
// computed in an order fixed by the shapes alone (block_decode.h, index_math.h), never by
// how many tokens share the launch or where the token sits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "vt/cuda/index_math.h"
#include "vt/dtype.h"

namespace vt::cuda {

// A weight matrix in device memory: `rows` rows of `cols` elements, each row contiguous in
// GGML's layout for `dtype` (cols a multiple of 32, or of 256 for Q4_K / Q6_K).
struct DevWeight {
  DType dtype = DType::F32;
  int64_t rows = 0, cols = 0;
  const void* data = nullptr;
  size_t row_stride = 0;  // bytes
};

// One output of a matmul: y[t * ldy + r] = W[r, :] . x[t, :] (+ bias[r]) (+ the old y when
// `accumulate`: the residual add, rounded as the CPU's separate add).
struct MatmulOut {
  DevWeight w;
  float* y = nullptr;
  int64_t ldy = 0;
  const float* bias = nullptr;
  bool accumulate = false;
};
constexpr int kMaxMatmulOuts = 3;

// Up to kMaxMatmulOuts matrices over the same activations x [n_tok][ldx] (q/k/v, gate/up):
// one launch per weight type among them. x must be 16-byte aligned with ldx % 4 == 0.
void matmul(cudaStream_t s, const MatmulOut* outs, int n_outs, const float* x, int64_t ldx,
            int64_t n_tok);

// out[i * ld + c] = W[ids[i], c] as f32 (embedding lookup).
void get_rows(cudaStream_t s, const DevWeight& w, const int32_t* ids, int64_t n, float* out,
              int64_t ld);

// y[r] = x[src(r)] / sqrt(mean(x^2) + eps) * w for n_rows rows of `dim`, where src(r) is
// rows[r] (gather; the final norm of the logit rows) or r when rows is null. x and y may
// alias when rows is null.
void rms_norm(cudaStream_t s, const float* x, int64_t ldx, const int32_t* rows, const float* w,
              int64_t n_rows, int64_t dim, float eps, float* y, int64_t ldy);

// out[i] = silu(gate[i]) * up[i] for n contiguous elements.
void silu_mul(cudaStream_t s, const float* gate, const float* up, int64_t n, float* out);

// Rotates the n_q heads at q + t * ldq and the n_k heads at k + t * ldk of every token in
// place; inv_freq has head_dim / 2 entries (scaling applied), angles from positions[t].
void rope(cudaStream_t s, float* q, int64_t ldq, int n_q, float* k, int64_t ldk, int n_k,
          int head_dim, int64_t n_tok, const int32_t* positions, const float* inv_freq, bool neox);

// fp32 -> bf16 (round to nearest even), for the cuBLASLt path.
void to_bf16(cudaStream_t s, const float* x, uint16_t* y, int64_t n);

// One layer's paged cache in device memory, in vt::cpu::KvLayerView's page layouts
// (index_math.h KvGeom), of F32, F16 or BF16 elements.
struct KvLayer {
  void* k = nullptr;
  void* v = nullptr;
  KvGeom geom{16, 0, 0};
  DType dtype = DType::F16;
};

// Token t's K and V rows (n_kv_heads * head_dim floats) go to slot slots[t]; negative slots
// (padding) are skipped. Values are rounded to the cache type to nearest even.
void reshape_and_cache(cudaStream_t s, const float* k, int64_t ldk, const float* v, int64_t ldv,
                       int64_t n_tok, const int64_t* slots, const KvLayer& kv);

constexpr int kMaxHeadDim = 256;

struct AttnArgs {
  const float* q = nullptr;  // [n_tok][ldq], head h at q + h * head_dim
  int64_t ldq = 0;
  int n_heads = 0;
  float* out = nullptr;  // same layout as q
  int64_t ldo = 0;
  int64_t n_tok = 0;
  const int32_t* positions = nullptr;  // token t attends keys 0..positions[t] of its sequence
  const int32_t* seq_of_token = nullptr;
  const int32_t* block_tables = nullptr;  // [n_seqs][bt_stride]
  int64_t bt_stride = 0;
  float scale = 1.0f;
};

// Floats of the partials buffer split mode needs.
size_t attention_partials_floats(int64_t n_tok, int n_heads, int head_dim, int max_segments);

// Paged attention over the keys each token may see (causal within its chunk). With
// `partials` (attention_partials_floats floats) one block per (token, head, segment) runs
// and a second kernel merges; without, one warp per (token, head) walks its segments. Both
// give the same bits. max_segments = attn_max_segments(max_model_len).
void paged_attention(cudaStream_t s, const AttnArgs& a, const KvLayer& kv, float* partials,
                     int max_segments);

// out[r] = the first index of the largest value of row r (x + r * ld, n values), NaNs
// never winning unless all are NaN (vt::cpu::argmax's answer).
void argmax_rows(cudaStream_t s, const float* x, int64_t n_rows, int64_t n, int64_t ld,
                 int32_t* out);

// The decode-state advance of a padded decode batch (index_math.h advance_row), as a kernel.
void decode_advance(cudaStream_t s, int32_t n_rows, int32_t* positions, int32_t* seq_lens,
                    int64_t* slots, const int32_t* block_table, int32_t bt_width, int block_size);

}  // namespace vt::cuda
