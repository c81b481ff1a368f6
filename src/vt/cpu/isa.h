// Instruction-set selection, decided once per process from CPU features.
#pragma once

namespace vt::cpu {

enum class Isa { kScalar, kAvx2, kAvx512 };

// AVX-512 means F+BW+VL+DQ+VNNI (+BF16 reported separately); AVX2 means AVX2+FMA+F16C.
// VT_ISA=avx2|scalar forces a lower level (read once).
Isa isa();
bool has_avx512_bf16();

}  // namespace vt::cpu
