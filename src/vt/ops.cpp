// vt/ops.h over the CPU kernels.
#include "vt/ops.h"

#include "vt/cpu/ops_extra.h"

namespace vt {

int64_t argmax(const float* x, int64_t n) { return cpu::argmax(x, n); }

}  // namespace vt
