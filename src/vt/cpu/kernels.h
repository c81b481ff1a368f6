// CPU kernels: the contract the model layers are written against.
//
// Every kernel is deterministic and batch-invariant: the value computed for one token
// (one row of x) depends only on that row and the weights, never on how many tokens are
// in the call, where the token sits in the batch, or how many threads run. The reduction
// order of every dot product is fixed by the weight layout alone. The engine's
// batch-invariance and graph gates rely on this.
//
// Implementations pick AVX-512 (VNNI / BF16), AVX2 or scalar code once per process
// from CPU features. Kernels never throw and never allocate in steady state (scratch
// buffers grow once and are reused).
#pragma once

#include <cstdint>

#include "vt/dtype.h"
#include "vt/thread_pool.h"

namespace vt::cpu {

// A weight matrix of `rows` output features by `cols` input features; each row is
// stored contiguously in `dtype` (GGML block layout for quantized types).
// With `packed` set (the packable() types, made by pack_groups), rows are instead stored in
// groups of kPackRows interleaved (layouts in pack.cpp and matmul_half.h); row_stride is then a
// row's share of a group (the unpadded row, except that BF16 rounds the column count up to
// even) and group g starts at data + g * kPackRows * row_stride.
struct WeightView {
  DType dtype = DType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  size_t row_stride = 0;  // bytes from one row to the next
  bool packed = false;
  // BF16 weights: whether products round their activations to bf16 (1) or keep them fp32
  // (0), set per model (--dtype); -1: the process default, bf16_round_activations().
  int8_t round_act = -1;
};

// ---- packed weights (what the SIMD kernels multiply) ----
constexpr int64_t kPackRows = 16;
bool packable(DType t);  // Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q2_K, Q3_K, IQ4_XS, Q4_K,
                         // Q5_K, Q6_K, BF16, F16
// Bytes of the packed copy of w (rows rounded up to a whole group; padding rows are zero).
size_t packed_bytes(const WeightView& w);
// Writes groups [g0, g1) of w's packed copy into dst (packed_bytes(w) bytes, the same dst
// for every call), so a caller can pack a big matrix piece by piece.
void pack_groups(const WeightView& w, int64_t g0, int64_t g1, uint8_t* dst);
int64_t pack_group_count(const WeightView& w);
// The view of a packed copy made by pack_groups.
WeightView packed_view(const WeightView& w, const uint8_t* dst);
// Row r of a packed view in the original GGUF block bytes (row_bytes(dtype, cols) bytes).
void unpack_row(const WeightView& w, int64_t r, void* out);

// ---- reference conversions (scalar, exact GGML semantics) ----
float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);
float bf16_to_fp32(uint16_t h);
uint16_t fp32_to_bf16(float f);  // round to nearest even
// Dequantizes n elements (a multiple of the block size) of one row.
void dequantize_row(DType t, const void* src, float* dst, int64_t n);
// Quantizes n elements into `t` (reference quantizers, used by tests and tools).
void quantize_row(DType t, const float* src, void* dst, int64_t n);

// ---- products ----
// y[t * ldy + r] = sum_c W[r, c] * x[t * ldx + c]   for t < n_tok, r < w.rows.
void matmul(const WeightView& w, const float* x, int64_t ldx, int64_t n_tok, float* y, int64_t ldy,
            ThreadPool& pool);

// Several matrices applied to the same input in one parallel region (q/k/v, gate/up):
// one activation quantization, one barrier.
struct MatmulOut {
  const WeightView* w;
  float* y;
  int64_t ldy;
};
void matmul_multi(const MatmulOut* outs, int n_outs, const float* x, int64_t ldx, int64_t n_tok,
                  ThreadPool& pool);

// out[i * ld_out + c] = W[ids[i], c] as f32 (embedding lookup).
void get_rows(const WeightView& w, const int32_t* ids, int64_t n, float* out, int64_t ld_out);

// ---- elementwise and normalization ----
// y = x / sqrt(mean(x^2) + eps) * w, per row of `dim` elements. x and y may alias.
// LayerNorm without a bias (Cohere): y = (x - mean) / sqrt(var + eps) * w per row.
void layer_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
                float* y, int64_t ldy);
void rms_norm(const float* x, int64_t ldx, const float* w, int64_t n_rows, int64_t dim, float eps,
              float* y, int64_t ldy);
// out[i] = gelu_tanh(gate[i]) * up[i] (Gemma's GeGLU, torch's approximate="tanh"), computed
// as gate * sigmoid(2 sqrt(2/pi) (gate + 0.044715 gate^3)) with the shared exp.
void gelu_tanh_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up,
                   int64_t n_tok, int64_t dim, float* out, int64_t ld_out);
// x[i] = gelu_tanh(x[i]) in place for every token row (the ungated MLPs' gelu_new /
// gelu_pytorch_tanh: Phi-2, StarCoder2): gelu_tanh_mul times an exact 1, the same bits.
void gelu_tanh(float* x, int64_t ld, int64_t n_tok, int64_t dim);
// x[i] = cap * tanh(x[i] / cap) (Gemma 2's logit soft-capping), with the shared exp.
void softcap(float* x, int64_t n, float cap);
// out[i] = silu(gate[i]) * up[i] for every token row.
void silu_mul(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n_tok,
              int64_t dim, float* out, int64_t ld_out);
// y[i] += x[i]
void add_inplace(float* y, const float* x, int64_t n);
// In-place softmax over n elements.
void softmax(float* x, int64_t n);

enum class RopeStyle {
  kNeox,        // rotate halves: pairs (i, i + d/2)   (HF layout, Qwen GGUF)
  kInterleaved  // adjacent pairs (2i, 2i + 1)        (GGUF Llama, rows permuted)
};
// Rotates n_heads heads of head_dim per token in place; token t's heads start at
// x + t * ld. Only each head's first rot_dim dims rotate (partial rotary: Phi-4-mini,
// transformers' partial_rotary_factor; 0: all head_dim), the rest pass through. inv_freq has
// rot_dim / 2 entries (rope scaling already applied).
// Angle = float(positions[t]) * inv_freq[i], cos/sin evaluated in float like HF and multiplied
// by mscale (longrope's and YaRN's attention factor: HF scales its cos / sin tables, so only
// the rotated dims grow).
void rope(float* x, int64_t ld, int64_t n_tok, int n_heads, int head_dim, const int32_t* positions,
          const float* inv_freq, RopeStyle style, int rot_dim = 0, float mscale = 1.0f);

// ---- paged KV cache and attention ----
// One layer's cache, num_blocks pages of block_size slots for K and for V:
//   K: [num_blocks][n_kv_heads][head_dim][block_size]  (transposed inside each page, so the
//      keys of one page are contiguous per dim: attention scores keys in vector lanes)
//   V: [num_blocks][n_kv_heads][block_size][head_dim]  (one head_dim row per slot and head;
//      a kv head's rows of one page are contiguous, so attention streams them)
// Both hold block_size * n_kv_heads * head_dim elements per page of `dtype`: F16 / BF16 (auto:
// bf16 checkpoints get BF16, others F16; rounded to nearest even on write, widened on read) or
// F32 (this view's default: --kv-cache-dtype float32, for the fp32 reference gates).
struct KvLayerView {
  void* k = nullptr;
  void* v = nullptr;
  int block_size = 16;
  int n_kv_heads = 0;
  int head_dim = 0;
  DType dtype = DType::F32;
};
// Writes token t's K and V rows (n_kv_heads * head_dim floats each) to slot_mapping[t]
// (slot = block * block_size + offset), in the layouts above: V as row `slot`, K scattered
// to element [block][head][dim][offset]. Negative slots are skipped (padding).
void reshape_and_cache(const float* k, int64_t ldk, const float* v, int64_t ldv, int64_t n_tok,
                       const int64_t* slot_mapping, const KvLayerView& cache);

// Token t (query heads at q + t * ldq) attends causally to positions [0, positions[t]] of
// its sequence, whose pages are block_tables[seq_of_token[t] * bt_stride + j].
// GQA: query head h reads kv head h / (n_heads / n_kv_heads). The result for a token
// is independent of the other tokens in the call and of how its sequence was chunked.
struct AttnBatch {
  int64_t n_tok = 0;
  const int32_t* positions = nullptr;
  const int32_t* seq_of_token = nullptr;
  const int32_t* block_tables = nullptr;
  int64_t bt_stride = 0;
  // > 0: a sliding window, each token attends to its last `window` positions (keys p with
  // pos - window < p <= pos, Hugging Face's and llama.cpp's rule); 0: to all of 0..pos.
  int32_t window = 0;
  // > 0: scores soft-capped to softcap * tanh(score / softcap) before the softmax (Gemma 2).
  float softcap = 0;
  // Attention sinks (GPT-OSS): per query head a learned logit that joins the softmax's
  // denominator only, exp(sink - max) added to the sum, with no value row. Null: none.
  const float* sinks = nullptr;
};
void paged_attention(const float* q, int64_t ldq, int n_heads, const KvLayerView& cache,
                     const AttnBatch& batch, float scale, float* out, int64_t ldo,
                     ThreadPool& pool);

// Which instruction set the dispatcher chose: "avx512", "avx2" or "scalar".
// VT_ISA=avx2|scalar (read once) forces a lower one, for tests and benchmarks.
const char* active_isa();

}  // namespace vt::cpu
