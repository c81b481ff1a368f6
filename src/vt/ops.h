// Backend-neutral host ops the engine may call on host memory (the sampler's greedy pick),
// and the kernel ISA for reports.
// They dispatch to the CPU kernels; the engine includes this instead of vt/cpu, which is
// private to vt.
#pragma once

#include <cstdint>

namespace vt {

// Index of the largest element; the lowest index wins ties; NaNs never win unless every
// element is NaN (then 0). n must be > 0. Same answer as the in-graph argmax.
int64_t argmax(const float* x, int64_t n);

// The instruction set the kernels were chosen for ("avx512", "avx2" or "scalar"), for reports.
const char* active_isa();

}  // namespace vt
