// CudaModelExecutor: engine::ModelExecutor for dense CausalLM families (Llama / Mistral /
// SmolLM, Qwen2, Qwen3) on one CUDA device.
//
// It copies the weights at construction (DeviceModel), owns the device KV cache and the
// scratch, and runs a forward pass as kernel launches on the backend's stream, so the same
// call is either eager or recorded by CudaBackend's stream capture (Exec pass-through).
//
// ForwardBatch arrays and the logits pointer may be host memory (an eager step: the arrays
// go up in one counted copy, the logits come back before execute returns) or point into
// CudaBackend state buffers' host views (graph state: the kernels read and write the device
// side, nothing is copied, the caller reads results with CudaBackend::download*). Under
// capture everything must be graph state: a host array would need a copy in the graph.
#pragma once

#include <memory>

#include "engine/model_executor.h"
#include "model/causal_lm.h"
#include "vt/cuda/cublaslt_gemm.h"
#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/device_memory.h"
#include "vt/cuda/device_model.h"
#include "vt/cuda/kernels.h"

namespace vt::cuda {

struct CudaExecutorOptions {
  // > 0: matmuls of at least this many tokens over BF16 weights go through cuBLASLt (tensor
  // cores; faster prefill, but results then depend on the chunking: not batch-invariant).
  int64_t cublas_min_tokens = 0;
  // Attention launches of at most this many tokens split each token's keys over blocks
  // (more parallelism at small batch); the result is the same bits either way.
  int64_t attn_split_max_tokens = 32;
  // Context length the split-attention scratch is sized for (0: the model's).
  int64_t max_model_len = 0;
  // Device memory kept free beside weights and KV (scratch, cuBLASLt, the CUDA context).
  size_t reserve_bytes = size_t{512} << 20;
};

class CudaModelExecutor : public vllm::engine::ModelExecutor {
 public:
  CudaModelExecutor(const vllm::model::CausalLM& m, CudaBackend& backend,
                    CudaExecutorOptions opts = {});
  ~CudaModelExecutor() override;

  int32_t vocab_size() const override;
  int32_t max_model_len() const override;
  void init_kv_cache(int64_t num_blocks, int block_size, DType dtype) override;
  DType default_kv_cache_dtype() const override;
  int64_t kv_bytes_per_block(int block_size, DType dtype) const override;
  // The device's free memory now, less reserve_bytes (what --gpu-memory-utilization divides).
  std::optional<int64_t> device_memory_available() const override;
  void execute(const vllm::model::ForwardBatch& batch, float* logits) override;
  bool supports_graphs() const override { return true; }
  void execute(const vllm::model::ForwardBatch& batch, float* logits, Exec& ex) override;
  void prepare_graphs(int64_t max_tokens) override;

  CudaBackend& backend() { return backend_; }
  const DeviceModel& model() const { return model_; }

 private:
  struct Scratch;
  struct DevBatch;
  void reserve(int64_t n_tok);
  DevBatch stage_batch(const vllm::model::ForwardBatch& b, bool capturing);
  void forward(const DevBatch& b, float* logits);
  void project(const MatmulOut* outs, int n, const float* x, int64_t ldx, int64_t n_tok);

  CudaBackend& backend_;
  CudaExecutorOptions opts_;
  DeviceModel model_;
  DType default_kv_;
  std::vector<KvLayer> kv_;
  StorageBuffer kv_mem_;
  std::unique_ptr<Scratch> scratch_;
  std::unique_ptr<CublasLtGemm> cublas_;
  int max_segments_ = 1;
};

}  // namespace vt::cuda
