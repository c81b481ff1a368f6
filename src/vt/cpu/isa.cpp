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

Isa detect() {
  __builtin_cpu_init();
  Isa best = Isa::kScalar;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && cpuid_f16c())
    best = Isa::kAvx2;
  if (best == Isa::kAvx2 && __builtin_cpu_supports("avx512f") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vnni"))
    best = Isa::kAvx512;
  if (const char* env = std::getenv("VT_ISA")) {
    if (std::strcmp(env, "scalar") == 0) best = Isa::kScalar;
    if (std::strcmp(env, "avx2") == 0 && best == Isa::kAvx512) best = Isa::kAvx2;
  }
  return best;
}
}  // namespace

Isa isa() {
  static const Isa chosen = detect();
  return chosen;
}

bool has_avx512_bf16() {
  static const bool has = isa() == Isa::kAvx512 && cpuid_avx512_bf16();
  return has;
}

const char* active_isa() {
  switch (isa()) {
    case Isa::kAvx512:
      return "avx512";
    case Isa::kAvx2:
      return "avx2";
    default:
      return "scalar";
  }
}

}  // namespace vt::cpu
