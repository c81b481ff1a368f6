// Scalar helpers declared in ops_extra.h.
#include "vt/cpu/ops_extra.h"

#include <immintrin.h>

#include <cmath>

#include "vt/cpu/isa.h"
#include "vt/cpu/ops.h"

namespace vt::cpu {

namespace {
// Two passes: the maximum (NaN never wins: max_ps keeps the accumulator when x is NaN),
// then the first index holding it. Same answer as the scalar scan below.
__attribute__((target("avx512f"))) int64_t argmax_avx512(const float* x, int64_t n) {
  __m512 acc = _mm512_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) acc = _mm512_max_ps(_mm512_loadu_ps(x + i), acc);
  float m = _mm512_reduce_max_ps(acc);
  for (; i < n; ++i)
    if (x[i] > m) m = x[i];
  const __m512 mv = _mm512_set1_ps(m);
  for (i = 0; i + 16 <= n; i += 16) {
    const __mmask16 eq = _mm512_cmpeq_ps_mask(_mm512_loadu_ps(x + i), mv);
    if (eq) return i + __builtin_ctz(eq);
  }
  for (; i < n; ++i)
    if (x[i] == m) return i;
  return 0;  // every value is NaN
}

// The same two passes, 8 lanes wide.
__attribute__((target("avx2"))) int64_t argmax_avx2(const float* x, int64_t n) {
  __m256 acc = _mm256_set1_ps(-INFINITY);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_max_ps(_mm256_loadu_ps(x + i), acc);
  __m128 h = _mm_max_ps(_mm256_castps256_ps128(acc), _mm256_extractf128_ps(acc, 1));
  h = _mm_max_ps(h, _mm_movehl_ps(h, h));
  h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
  float m = _mm_cvtss_f32(h);
  for (; i < n; ++i)
    if (x[i] > m) m = x[i];
  const __m256 mv = _mm256_set1_ps(m);
  for (i = 0; i + 8 <= n; i += 8) {
    const int eq = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), mv, _CMP_EQ_OQ));
    if (eq) return i + __builtin_ctz(eq);
  }
  for (; i < n; ++i)
    if (x[i] == m) return i;
  return 0;  // every value is NaN
}
}  // namespace

int64_t argmax(const float* x, int64_t n) {
  if (n >= 64 && isa() == Isa::kAvx512) return argmax_avx512(x, n);
  if (n >= 64 && isa() == Isa::kAvx2) return argmax_avx2(x, n);
  int64_t best = 0;
  float bv = x[0];
  for (int64_t i = 1; i < n; ++i) {
    if (x[i] > bv || (std::isnan(bv) && !std::isnan(x[i]))) {
      bv = x[i];
      best = i;
    }
  }
  return best;
}

void add_bias(float* y, int64_t ld, int64_t n_tok, const float* bias, int64_t dim) {
  for (int64_t t = 0; t < n_tok; ++t) add_inplace(y + t * ld, bias, dim);
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
