// Scalar helpers declared in ops_extra.h.
#include "vt/cpu/ops_extra.h"

#include <cmath>

#include "vt/cpu/isa.h"
#include "vt/cpu/ops.h"

namespace vt::cpu {

int64_t argmax(const float* x, int64_t n) { return argmax_isa(isa(), x, n); }

void add_bias(float* y, int64_t ld, int64_t n_tok, const float* bias, int64_t dim) {
  for (int64_t t = 0; t < n_tok; ++t) add_inplace(y + t * ld, bias, dim);
}

void scale_inplace(float* x, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= a;
}

void scale_add(float* y, const float* x, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float p = x[i] * a;
    y[i] += p;
  }
}

void topk_softmax(const float* logits, int n_experts, int k, bool renormalize, int32_t* ids,
                  float* weights) {
  float p[1024];
  for (int e = 0; e < n_experts; ++e) p[e] = logits[e];
  softmax_isa(Isa::kScalar, p, n_experts);
  // Selection by repeated scan: k and n_experts are small (<= 8 of <= 256 in practice).
  uint64_t taken[16] = {};
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int e = 0; e < n_experts; ++e) {
      if (taken[e >> 6] >> (e & 63) & 1) continue;
      if (best < 0 || p[e] > p[best]) best = e;
    }
    taken[best >> 6] |= uint64_t{1} << (best & 63);
    ids[j] = best;
    weights[j] = p[best];
  }
  if (renormalize) {
    float s = 0.f;
    for (int j = 0; j < k; ++j) s += weights[j];
    for (int j = 0; j < k; ++j) weights[j] /= s;
  }
}

}  // namespace vt::cpu
