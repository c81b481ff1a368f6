// The CUDA executor as the api layer builds it for `--device cuda`: a CudaModelExecutor that
// owns its CudaBackend (device checks first: no device, compute capability, memory), behind
// the engine's ModelExecutor interface. Only CUDA builds (VLLM_HAVE_CUDA) include this.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/model_executor.h"
#include "model/causal_lm.h"

namespace vt::cuda {

// Throws std::runtime_error naming the problem (no device, too old, too little memory, a model
// family or weight type the kernels do not cover). max_model_len 0: the model's own.
std::unique_ptr<vllm::engine::ModelExecutor> make_cuda_executor(const vllm::model::CausalLM& m,
                                                                int device, int64_t max_model_len);

}  // namespace vt::cuda
