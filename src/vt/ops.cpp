// vt/ops.h over the CPU kernels.
#include "vt/ops.h"

#include "vt/cpu/kernels.h"
#include "vt/cpu/ops_extra.h"

namespace vt {

int64_t argmax(const float* x, int64_t n) { return cpu::argmax(x, n); }

const char* active_isa() { return cpu::active_isa(); }

}  // namespace vt
