// Row-wise kernels: embedding lookup, RMSNorm (plain, gathered, per head), SwiGLU, RoPE,
// and the bf16 cast for cuBLASLt. Each row is reduced by a fixed-size block in a fixed
// order, so a row's result never depends on the batch it arrives in.
#include "vt/cuda/block_decode.h"
#include "vt/cuda/kernels.h"
#include "vt/cuda/warp.cuh"

namespace vt::cuda {
namespace {

constexpr int kRowThreads = 128;

template <DType DT>
__global__ void get_rows_kernel(DevWeight w, const int32_t* ids, int64_t n, float* out,
                                int64_t ld) {
  const int64_t upr = units_per_row(w.cols);
  const int64_t idx = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (idx >= n * upr) return;
  const int64_t i = idx / upr, u = idx % upr;
  const uint8_t* row = static_cast<const uint8_t*>(w.data) + ids[i] * w.row_stride;
  float v[kUnit];
  decode_unit<DT>(row, u, v);
  float* o = out + i * ld + u * kUnit;
#pragma unroll
  for (int j = 0; j < kUnit; ++j) o[j] = v[j];
}

__global__ void __launch_bounds__(kRowThreads)
    rms_norm_kernel(const float* x, int64_t ldx, const int32_t* rows, const float* w, int64_t dim,
                    float eps, float* y, int64_t ldy) {
  __shared__ float part[kRowThreads / 32];
  __shared__ float total;
  const int64_t r = blockIdx.x;
  const float* xr = x + (rows ? static_cast<int64_t>(rows[r]) : r) * ldx;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < dim; i += kRowThreads) ss = fma_rn(xr[i], xr[i], ss);
  ss = warp_sum(ss);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = ss;
  __syncthreads();
  if (threadIdx.x == 0) {
    float t = part[0];
    for (int i = 1; i < kRowThreads / 32; ++i) t = add_rn(t, part[i]);
    total = t;
  }
  __syncthreads();
  // HF: x * rsqrt(mean(x^2) + eps), then weight * that (two roundings, as the CPU).
  const float inv = div_rn(1.0f, sqrtf(add_rn(div_rn(total, static_cast<float>(dim)), eps)));
  float* yr = y + r * ldy;
  for (int64_t i = threadIdx.x; i < dim; i += kRowThreads) yr[i] = mul_rn(w[i], mul_rn(xr[i], inv));
}

__global__ void silu_mul_kernel(const float* gate, const float* up, int64_t n, float* out) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  out[i] = mul_rn(div_rn(g, add_rn(1.0f, expf(-g))), up[i]);
}

__global__ void rope_kernel(float* q, int64_t ldq, int n_q, float* k, int64_t ldk, int n_k,
                            int head_dim, const int32_t* positions, const float* inv_freq,
                            bool neox) {
  __shared__ float cs[kMaxHeadDim / 2], sn[kMaxHeadDim / 2];
  const int64_t t = blockIdx.x;
  const int half = head_dim / 2;
  const int32_t pos = positions[t];
  for (int i = threadIdx.x; i < half; i += blockDim.x) {
    const float a = rope_angle(pos, inv_freq[i]);
    sincosf(a, &sn[i], &cs[i]);  // the accurate versions (no fast math in this build)
  }
  __syncthreads();
  const int total = (n_q + n_k) * half;
  for (int idx = threadIdx.x; idx < total; idx += blockDim.x) {
    const int h = idx / half, i = idx % half;
    float* xh = h < n_q ? q + t * ldq + static_cast<int64_t>(h) * head_dim
                        : k + t * ldk + static_cast<int64_t>(h - n_q) * head_dim;
    int a, b;
    rope_pair(neox, half, i, &a, &b);
    rope_rotate(xh + a, xh + b, cs[i], sn[i]);
  }
}

__global__ void to_bf16_kernel(const float* x, uint16_t* y, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fp32_to_bf16(x[i]);
}

template <DType DT>
void launch_get_rows(cudaStream_t s, unsigned grid, const DevWeight& w, const int32_t* ids,
                     int64_t n, float* out, int64_t ld) {
  get_rows_kernel<DT><<<grid, 128, 0, s>>>(w, ids, n, out, ld);
}

unsigned blocks_for(int64_t n, int threads) {
  return static_cast<unsigned>((n + threads - 1) / threads);
}

}  // namespace

void get_rows(cudaStream_t s, const DevWeight& w, const int32_t* ids, int64_t n, float* out,
              int64_t ld) {
  const int64_t total = n * units_per_row(w.cols);
  if (total <= 0) return;
  const unsigned g = blocks_for(total, 128);
  switch (w.dtype) {
    case DType::F32:
      return launch_get_rows<DType::F32>(s, g, w, ids, n, out, ld);
    case DType::F16:
      return launch_get_rows<DType::F16>(s, g, w, ids, n, out, ld);
    case DType::BF16:
      return launch_get_rows<DType::BF16>(s, g, w, ids, n, out, ld);
    case DType::Q8_0:
      return launch_get_rows<DType::Q8_0>(s, g, w, ids, n, out, ld);
    case DType::Q4_0:
      return launch_get_rows<DType::Q4_0>(s, g, w, ids, n, out, ld);
    case DType::Q4_1:
      return launch_get_rows<DType::Q4_1>(s, g, w, ids, n, out, ld);
    case DType::Q4_K:
      return launch_get_rows<DType::Q4_K>(s, g, w, ids, n, out, ld);
    case DType::Q6_K:
      return launch_get_rows<DType::Q6_K>(s, g, w, ids, n, out, ld);
    default:
      return;  // rejected at upload
  }
}

void rms_norm(cudaStream_t s, const float* x, int64_t ldx, const int32_t* rows, const float* w,
              int64_t n_rows, int64_t dim, float eps, float* y, int64_t ldy) {
  if (n_rows <= 0) return;
  rms_norm_kernel<<<static_cast<unsigned>(n_rows), kRowThreads, 0, s>>>(x, ldx, rows, w, dim, eps,
                                                                        y, ldy);
}

void silu_mul(cudaStream_t s, const float* gate, const float* up, int64_t n, float* out) {
  if (n <= 0) return;
  silu_mul_kernel<<<blocks_for(n, 256), 256, 0, s>>>(gate, up, n, out);
}

void rope(cudaStream_t s, float* q, int64_t ldq, int n_q, float* k, int64_t ldk, int n_k,
          int head_dim, int64_t n_tok, const int32_t* positions, const float* inv_freq, bool neox) {
  if (n_tok <= 0) return;
  rope_kernel<<<static_cast<unsigned>(n_tok), 128, 0, s>>>(q, ldq, n_q, k, ldk, n_k, head_dim,
                                                           positions, inv_freq, neox);
}

void to_bf16(cudaStream_t s, const float* x, uint16_t* y, int64_t n) {
  if (n <= 0) return;
  to_bf16_kernel<<<blocks_for(n, 256), 256, 0, s>>>(x, y, n);
}

}  // namespace vt::cuda
