// What this build is: its version (version.h) and the devices it can run on.
#include "api/version.h"

namespace vllm::api {

const char* devices() {
#if VLLM_HAVE_CUDA
  return "cpu, cuda";
#else
  return "cpu";
#endif
}

}  // namespace vllm::api
