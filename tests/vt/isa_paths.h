// The ISA paths the kernel tests compare.
#pragma once

#include <vector>

#include "vt/cpu/ops.h"

namespace vt::cpu {

// Every path the hardware runs, lowest first, whatever VT_ISA selected for the process (so
// forcing an ISA cannot quietly turn a cross-ISA comparison off).
inline std::vector<Isa> hardware_isas() {
  Isa a[3];
  const int n = available_isas(a);
  return std::vector<Isa>(a, a + n);
}

}  // namespace vt::cpu
