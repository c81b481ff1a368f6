// Asks the CUDA runtime about a device, for the start-up checks of device_checks.h.
#include <cuda_runtime_api.h>

#include <stdexcept>

#include "vt/cuda/device_checks.h"

namespace vt::cuda {

DeviceFacts query_device(int ordinal) {
  DeviceFacts f;
  f.ordinal = ordinal;
  const cudaError_t e = cudaGetDeviceCount(&f.device_count);
  if (e != cudaSuccess) {
    f.runtime_error = cudaGetErrorString(e);
    f.device_count = 0;
    cudaGetLastError();  // clear the sticky-free error so later calls report their own
    return f;
  }
  if (ordinal < 0 || ordinal >= f.device_count) return f;
  cudaDeviceProp p{};
  if (cudaGetDeviceProperties(&p, ordinal) == cudaSuccess) {
    f.name = p.name;
    f.cc_major = p.major;
    f.cc_minor = p.minor;
    f.total_bytes = p.totalGlobalMem;
  }
  int prev = 0;
  cudaGetDevice(&prev);
  if (cudaSetDevice(ordinal) == cudaSuccess) cudaMemGetInfo(&f.free_bytes, &f.total_bytes);
  cudaSetDevice(prev);
  return f;
}

void require_device(int ordinal) {
  const std::string problem = device_problem(query_device(ordinal));
  if (!problem.empty()) throw std::runtime_error(problem);
}

}  // namespace vt::cuda
