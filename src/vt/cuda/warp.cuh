// Warp reductions shared by the kernels (device code only). Every reduction is a fixed
// butterfly, so its result depends on the 32 lane values alone; the kernels keep lane 0's.
#pragma once

#include <cstdint>

#include "vt/cuda/hd.h"
#include "vt/cuda/index_math.h"

namespace vt::cuda {

constexpr unsigned kFullMask = 0xffffffffu;

__device__ __forceinline__ float warp_sum(float v) {
  for (int off = 16; off >= 1; off /= 2) v = add_rn(v, __shfl_xor_sync(kFullMask, v, off));
  return v;  // lane 0 holds butterfly_sum_host's value
}

__device__ __forceinline__ float warp_max(float v) {
  for (int off = 16; off >= 1; off /= 2) v = fmaxf(v, __shfl_xor_sync(kFullMask, v, off));
  return v;  // exact: the same in every lane
}

// Lane 0's value of warp_sum, in every lane.
__device__ __forceinline__ float warp_sum_broadcast(float v) {
  return __shfl_sync(kFullMask, warp_sum(v), 0);
}

__device__ __forceinline__ void warp_argmax(float* v, int32_t* i) {
  for (int off = 16; off >= 1; off /= 2) {
    const float ov = __shfl_xor_sync(kFullMask, *v, off);
    const int32_t oi = __shfl_xor_sync(kFullMask, *i, off);
    if (argmax_better(ov, oi, *v, *i)) *v = ov, *i = oi;
  }
}

}  // namespace vt::cuda
