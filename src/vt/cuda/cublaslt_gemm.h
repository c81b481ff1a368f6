// bf16 GEMM through cuBLASLt (fp32 accumulate, fp32 output): the tensor-core path for large
// prefill chunks over bf16 weights. Not batch-invariant (cuBLASLt picks tiles and split-K
// by shape), so the executor uses it only when asked (CudaExecutorOptions::cublas_min_tokens).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

namespace vt::cuda {

class CublasLtGemm {
 public:
  explicit CublasLtGemm(size_t workspace_bytes = size_t{32} << 20);
  ~CublasLtGemm();
  CublasLtGemm(const CublasLtGemm&) = delete;
  CublasLtGemm& operator=(const CublasLtGemm&) = delete;

  // y[t * ldy + r] = sum_c W[r, c] * x[t, c] (+ bias[r]) (+ the old y when accumulate), for
  // W bf16 [rows][cols] row-major, x bf16 [n_tok][cols], y fp32. Capturable: descriptors
  // and algorithms are chosen on the host and cached per shape.
  void gemm(cudaStream_t s, const uint16_t* w, int64_t rows, int64_t cols, const uint16_t* x,
            int64_t n_tok, float* y, int64_t ldy, const float* bias, bool accumulate);

 private:
  struct Plan;
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, bool>;
  Plan& plan(int64_t rows, int64_t cols, int64_t n_tok, int64_t ldy, bool bias);

  void* handle_ = nullptr;  // cublasLtHandle_t
  void* workspace_ = nullptr;
  size_t workspace_bytes_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace vt::cuda
