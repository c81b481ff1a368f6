// The scalar reference's Q8_0-family chain (matmul_internal.h's numerics contract), shared
// by matmul_scalar.cpp (Q8_0 / Q4_0 / Q4_1) and matmul_zoo_scalar.cpp (Q5_0 / Q5_1 / IQ4_NL /
// MXFP4).
#pragma once

#include <cmath>
#include <cstdint>

#include "vt/cpu/matmul_internal.h"

namespace vt::cpu {

// One (row, token): `decode(b, w)` writes block b's 32 weight integers to w and returns its
// {d_w, m_w}; m_w feeds the second (mins) chain when kMins.
struct Block32Scales {
  float d = 0, m = 0;
};
template <bool kMins, class Decode>
float q8_0_chain(const ActView& a, int64_t t, Decode decode) {
  const int64_t nb = a.cols / kQK;
  const int8_t* xq = a.qs + t * a.cols;
  const float* xd = a.d + t * nb;
  const float* xs = a.s + t * nb;
  float acc = 0, macc = 0;
  int w[kQK];
  for (int64_t b = 0; b < nb; ++b) {
    const Block32Scales s = decode(b, w);
    int idot = 0;
    for (int j = 0; j < kQK; ++j) idot += w[j] * xq[b * kQK + j];
    acc = std::fma(s.d * xd[b], static_cast<float>(idot), acc);
    if constexpr (kMins) macc = std::fma(s.m, xs[b], macc);
  }
  return kMins ? acc + macc : acc;
}

}  // namespace vt::cpu
