// DeviceModel: a CausalLM's weights copied to device memory, in their stored types (BF16
// stays BF16, Q8_0 / Q4_0 / Q4_1 / Q4_K / Q6_K stay quantized, F32 / F16 stay as they are),
// with norms, biases and the RoPE frequency table as f32 vectors. Construction checks
// every tensor (device_checks.h weight_problem) and the free device memory before copying,
// and refuses what the CUDA executor cannot run (MoE layers, head_dim > 256) by name.
#pragma once

#include <string>
#include <vector>

#include "model/causal_lm.h"
#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/device_memory.h"
#include "vt/cuda/kernels.h"

namespace vt::cuda {

struct DevLayer {
  DevWeight q, k, v, o, gate, up, down;
  const float* attn_norm = nullptr;
  const float* mlp_norm = nullptr;
  const float *q_bias = nullptr, *k_bias = nullptr, *v_bias = nullptr;  // null: no bias
  const float *q_norm = nullptr, *k_norm = nullptr;                     // null: no q/k norm
};

class DeviceModel {
 public:
  // `reserve`: device memory that must stay free beside the weights.
  DeviceModel(const vllm::model::CausalLM& m, CudaBackend& backend, size_t reserve);

  const vllm::model::ModelConfig& config() const { return config_; }
  const DevWeight& embed() const { return embed_; }
  const DevWeight& lm_head() const { return lm_head_; }
  const float* final_norm() const { return final_norm_; }
  const float* inv_freq() const { return inv_freq_; }
  const std::vector<DevLayer>& layers() const { return layers_; }
  size_t bytes() const { return arena_.bytes(); }
  bool all_bf16() const { return all_bf16_; }  // every layer matrix is BF16 (cuBLASLt path)

 private:
  vllm::model::ModelConfig config_;
  DeviceArena arena_;
  DevWeight embed_, lm_head_;
  const float* final_norm_ = nullptr;
  const float* inv_freq_ = nullptr;
  std::vector<DevLayer> layers_;
  bool all_bf16_ = false;
};

}  // namespace vt::cuda
