// CPU feature detection for kernel dispatch.
#include "vt/cpu/isa.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>

#include "vt/cpu/kernels.h"

namespace vt::cpu {

namespace {
// Features __builtin_cpu_supports does not name in every compiler (clang 14 knows neither),
// read from CPUID: F16C is leaf 1 ECX bit 29, AVX512-BF16 leaf 7 sub-leaf 1 EAX bit 5.
bool cpuid_f16c() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
}
bool cpuid_avx512_bf16() {
  unsigned a, b, c, d;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a & (1u << 5));
}

Isa detect_hardware() {
  __builtin_cpu_init();
  Isa best = Isa::kScalar;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpuid_f16c())
    best = Isa::kAvx2;
  if (best == Isa::kAvx2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni"))
    best = Isa::kAvx512;
  return best;
}

Isa detect() {
  Isa best = hardware_isa();
  if (const char* env = std::getenv("VT_ISA")) {
    if (std::strcmp(env, "scalar") == 0) best = Isa::kScalar;
    if (std::strcmp(env, "avx2") == 0 && best == Isa::kAvx512) best = Isa::kAvx2;
  }
  return best;
}
}  // namespace

Isa hardware_isa() {
  static const Isa hw = detect_hardware();
  return hw;
}

bool hardware_avx512_bf16() {
  static const bool has = hardware_isa() == Isa::kAvx512 && cpuid_avx512_bf16();
  return has;
}

const char* isa_name(Isa i) {
  return i == Isa::kAvx512 ? "avx512" : i == Isa::kAvx2 ? "avx2" : "scalar";
}

Isa isa() {
  static const Isa chosen = detect();
  return chosen;
}

bool has_avx512_bf16() {
  static const bool has = isa() == Isa::kAvx512 && hardware_avx512_bf16();
  return has;
}

const char* active_isa() { return isa_name(isa()); }

}  // namespace vt::cpu
