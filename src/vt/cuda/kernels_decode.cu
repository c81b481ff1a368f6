// The ops a captured decode step ends with: the greedy next token of every row (argmax),
// then the decode-state advance, so a steady-state replay needs no host write.
#include <climits>

#include "vt/cuda/index_math.h"
#include "vt/cuda/kernels.h"
#include "vt/cuda/warp.cuh"

namespace vt::cuda {
namespace {

constexpr int kArgmaxThreads = 256;

// Thread-strided scan, each warp's butterfly, then the warps in order, all with
// argmax_better: the answer is vt::cpu::argmax's (a total order; see index_math.h).
__global__ void __launch_bounds__(kArgmaxThreads)
    argmax_kernel(const float* x, int64_t n, int64_t ld, int32_t* out) {
  __shared__ float wv[kArgmaxThreads / 32];
  __shared__ int32_t wi[kArgmaxThreads / 32];
  const float* row = x + static_cast<int64_t>(blockIdx.x) * ld;
  float bv = NAN;
  int32_t bi = INT_MAX;
  for (int64_t i = threadIdx.x; i < n; i += kArgmaxThreads) {
    const float v = row[i];
    if (argmax_better(v, static_cast<int32_t>(i), bv, bi)) bv = v, bi = static_cast<int32_t>(i);
  }
  warp_argmax(&bv, &bi);
  if (threadIdx.x % 32 == 0) wv[threadIdx.x / 32] = bv, wi[threadIdx.x / 32] = bi;
  __syncthreads();
  if (threadIdx.x != 0) return;
  bv = wv[0];
  bi = wi[0];
  for (int w = 1; w < kArgmaxThreads / 32; ++w)
    if (argmax_better(wv[w], wi[w], bv, bi)) bv = wv[w], bi = wi[w];
  out[blockIdx.x] = bi == INT_MAX ? 0 : bi;
}

__global__ void advance_kernel(int32_t n_rows, int32_t* positions, int32_t* seq_lens,
                               int64_t* slots, const int32_t* block_table, int32_t bt_width,
                               int block_size) {
  const int i = static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n_rows) advance_row(i, positions, seq_lens, slots, block_table, bt_width, block_size);
}

}  // namespace

void argmax_rows(cudaStream_t s, const float* x, int64_t n_rows, int64_t n, int64_t ld,
                 int32_t* out) {
  if (n_rows <= 0) return;
  argmax_kernel<<<static_cast<unsigned>(n_rows), kArgmaxThreads, 0, s>>>(x, n, ld, out);
}

void decode_advance(cudaStream_t s, int32_t n_rows, int32_t* positions, int32_t* seq_lens,
                    int64_t* slots, const int32_t* block_table, int32_t bt_width, int block_size) {
  if (n_rows <= 0) return;
  advance_kernel<<<(n_rows + 127) / 128, 128, 0, s>>>(n_rows, positions, seq_lens, slots,
                                                      block_table, bt_width, block_size);
}

}  // namespace vt::cuda
