// Device arrays for the GPU kernel tests (plain cudaMalloc / cudaMemcpy on the legacy
// stream; the tests synchronize after each launch).
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "vt/cuda/cuda_check.h"

namespace vllm::cuda_testing {

template <class T>
class Dev {
 public:
  explicit Dev(size_t n) : n_(n) {
    vt::cuda::check(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<size_t>(n, 1) * sizeof(T)),
                    "cudaMalloc (test)");
    vt::cuda::check(cudaMemset(p_, 0, std::max<size_t>(n, 1) * sizeof(T)), "cudaMemset (test)");
  }
  explicit Dev(const std::vector<T>& v) : Dev(v.size()) {
    vt::cuda::check(cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice),
                    "cudaMemcpy (test upload)");
  }
  ~Dev() { cudaFree(p_); }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  T* get() const { return p_; }
  std::vector<T> host() const {
    std::vector<T> v(n_);
    vt::cuda::check(cudaDeviceSynchronize(), "kernel (test)");
    vt::cuda::check(cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost),
                    "cudaMemcpy (test download)");
    return v;
  }

 private:
  T* p_ = nullptr;
  size_t n_;
};

}  // namespace vllm::cuda_testing
