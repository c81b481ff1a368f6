// Matmul kernels over every weight type, decoding GGML blocks in registers.
//
// One warp per output row; a block of kWarps warps covers kWarps rows for up to T tokens.
// Lane l decodes units l, l + 32, ... of the row once and dots each with the T tokens'
// activations (weight-stationary: batched decode reads the weights once per T tokens). The
// per-output order (unit dots, lane accumulation, butterfly; block_decode.h) is fixed by
// the row length, so an output's bits never depend on T, the grid, or the other tokens.
#include <algorithm>
#include <stdexcept>

#include "vt/cuda/block_decode.h"
#include "vt/cuda/kernels.h"
#include "vt/cuda/warp.cuh"

namespace vt::cuda {
namespace {

constexpr int kWarps = 4;

struct OutDev {
  const uint8_t* w;
  size_t row_stride;
  int64_t rows;
  float* y;
  int64_t ldy;
  const float* bias;
  int accumulate;
};

struct Params {
  OutDev outs[kMaxMatmulOuts];
  int n_outs;
  const float* x;
  int64_t ldx;
  int64_t n_tok;
  int64_t cols;
};

// dot_unit with 16-byte activation loads: the same fused chain in element order.
__device__ __forceinline__ float dot_unit_x4(const float* w, const float* x) {
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kUnit / 4; ++i) {
    const float4 v = x4[i];
    s = fma_rn(w[4 * i + 0], v.x, s);
    s = fma_rn(w[4 * i + 1], v.y, s);
    s = fma_rn(w[4 * i + 2], v.z, s);
    s = fma_rn(w[4 * i + 3], v.w, s);
  }
  return s;
}

template <DType DT, int T>
__global__ void __launch_bounds__(kWarps * 32) matmul_kernel(Params p) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  int64_t r = static_cast<int64_t>(blockIdx.x) * kWarps + warp;
  // Which output this warp's row belongs to (rows of outs[0], then outs[1], ...).
  OutDev o = p.outs[0];
  if (r >= o.rows && p.n_outs > 1) {
    r -= o.rows;
    o = p.outs[1];
    if (r >= o.rows && p.n_outs > 2) {
      r -= o.rows;
      o = p.outs[2];
    }
  }
  if (r >= o.rows) return;  // whole warp: past the last row
  const int64_t t0 = static_cast<int64_t>(blockIdx.y) * T;
  const int nt = static_cast<int>(min(static_cast<int64_t>(T), p.n_tok - t0));
  const uint8_t* row = o.w + r * o.row_stride;
  const int64_t nu = units_per_row(p.cols);
  float acc[T];
#pragma unroll
  for (int t = 0; t < T; ++t) acc[t] = 0.0f;
  for (int64_t u = lane; u < nu; u += 32) {
    float w[kUnit];
    decode_unit<DT>(row, u, w);
#pragma unroll
    for (int t = 0; t < T; ++t)
      if (t < nt) acc[t] = add_rn(acc[t], dot_unit_x4(w, p.x + (t0 + t) * p.ldx + u * kUnit));
  }
#pragma unroll
  for (int t = 0; t < T; ++t) acc[t] = warp_sum(acc[t]);
  if (lane != 0) return;
#pragma unroll
  for (int t = 0; t < T; ++t) {
    if (t >= nt) break;
    float v = acc[t];
    if (o.bias) v = add_rn(v, o.bias[r]);
    float* yp = o.y + (t0 + t) * o.ldy + r;
    if (o.accumulate) v = add_rn(*yp, v);
    *yp = v;
  }
}

template <DType DT>
void launch_typed(cudaStream_t s, const Params& p, int64_t total_rows) {
  const unsigned gx = static_cast<unsigned>((total_rows + kWarps - 1) / kWarps);
  // T only groups tokens for weight reuse; it never changes an output's arithmetic.
  if (p.n_tok == 1) {
    matmul_kernel<DT, 1><<<dim3(gx, 1), kWarps * 32, 0, s>>>(p);
  } else {
    constexpr int T = 8;
    const unsigned gy = static_cast<unsigned>((p.n_tok + T - 1) / T);
    matmul_kernel<DT, T><<<dim3(gx, gy), kWarps * 32, 0, s>>>(p);
  }
}

void launch(cudaStream_t s, const Params& p, int64_t total_rows, DType t) {
  switch (t) {
    case DType::F32:
      return launch_typed<DType::F32>(s, p, total_rows);
    case DType::F16:
      return launch_typed<DType::F16>(s, p, total_rows);
    case DType::BF16:
      return launch_typed<DType::BF16>(s, p, total_rows);
    case DType::Q8_0:
      return launch_typed<DType::Q8_0>(s, p, total_rows);
    case DType::Q4_0:
      return launch_typed<DType::Q4_0>(s, p, total_rows);
    case DType::Q4_1:
      return launch_typed<DType::Q4_1>(s, p, total_rows);
    case DType::Q4_K:
      return launch_typed<DType::Q4_K>(s, p, total_rows);
    case DType::Q6_K:
      return launch_typed<DType::Q6_K>(s, p, total_rows);
    default:
      break;  // rejected at upload (device_checks.h weight_problem)
  }
}

}  // namespace

void matmul(cudaStream_t s, const MatmulOut* outs, int n_outs, const float* x, int64_t ldx,
            int64_t n_tok) {
  if (n_tok <= 0 || n_outs <= 0) return;
  // Outputs of one weight type and width share a launch; the rest get their own.
  bool done[kMaxMatmulOuts] = {};
  for (int i = 0; i < n_outs; ++i) {
    if (done[i]) continue;
    Params p{};
    p.x = x;
    p.ldx = ldx;
    p.n_tok = n_tok;
    p.cols = outs[i].w.cols;
    int64_t total = 0;
    for (int j = i; j < n_outs; ++j) {
      if (done[j] || outs[j].w.dtype != outs[i].w.dtype || outs[j].w.cols != outs[i].w.cols)
        continue;
      const MatmulOut& o = outs[j];
      p.outs[p.n_outs++] = {static_cast<const uint8_t*>(o.w.data),
                            o.w.row_stride,
                            o.w.rows,
                            o.y,
                            o.ldy,
                            o.bias,
                            o.accumulate ? 1 : 0};
      total += o.w.rows;
      done[j] = true;
    }
    launch(s, p, total, outs[i].w.dtype);
  }
}

}  // namespace vt::cuda
