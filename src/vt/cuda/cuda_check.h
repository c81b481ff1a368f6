// CUDA runtime errors at the backend's boundaries become exceptions that say which call
// failed and why (kernels themselves never throw; their launch errors are checked here).
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace vt::cuda {

inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("CUDA error in ") + what + ": " + cudaGetErrorName(e) +
                             " (" + cudaGetErrorString(e) + ")");
}

// After a group of kernel launches: reports a bad launch configuration at once (it does not
// wait for the kernels, so it is safe under stream capture).
inline void check_launch(const char* what) { check(cudaGetLastError(), what); }

}  // namespace vt::cuda
