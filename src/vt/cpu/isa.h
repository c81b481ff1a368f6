// Instruction-set selection, decided once per process from CPU features.
#pragma once

namespace vt::cpu {

enum class Isa { kScalar, kAvx2, kAvx512 };

// AVX-512 means F+BW+VL+DQ+VNNI (+BF16 reported separately); AVX2 means AVX2+FMA+F16C.
// VT_ISA=avx2|scalar forces a lower level (read once).
Isa isa();
bool has_avx512_bf16();
// What the CPU can run whatever VT_ISA says (the tests compare every path the hardware has).
Isa hardware_isa();
bool hardware_avx512_bf16();
const char* isa_name(Isa i);  // "scalar", "avx2", "avx512"

}  // namespace vt::cpu
