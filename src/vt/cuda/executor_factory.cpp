#include "vt/cuda/executor_factory.h"

#include "vt/cuda/cuda_backend.h"
#include "vt/cuda/cuda_model_executor.h"

namespace vt::cuda {
namespace {

// The backend must exist before the executor that holds a reference to it, and outlive it:
// a base class constructed first and destroyed last.
struct BackendHolder {
  explicit BackendHolder(int device) : owned_backend(std::make_unique<CudaBackend>(device)) {}
  std::unique_ptr<CudaBackend> owned_backend;
};

class OwningCudaExecutor : private BackendHolder, public CudaModelExecutor {
 public:
  OwningCudaExecutor(const vllm::model::CausalLM& m, int device, CudaExecutorOptions opts)
      : BackendHolder(device), CudaModelExecutor(m, *owned_backend, opts) {}
};

}  // namespace

std::unique_ptr<vllm::engine::ModelExecutor> make_cuda_executor(const vllm::model::CausalLM& m,
                                                                int device, int64_t max_model_len) {
  CudaExecutorOptions opts;
  opts.max_model_len = max_model_len;
  return std::make_unique<OwningCudaExecutor>(m, device, opts);
}

}  // namespace vt::cuda
