// Scalar helpers declared in ops_extra.h.
#include "vt/cpu/ops_extra.h"

#include <algorithm>
#include <cmath>
#include <limits>

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

namespace {
// The k largest of p[0, n) in descending order, ties to the lower index (a repeated scan: k and
// n are small, <= 8 of <= 256 in practice).
void top_k(const float* p, int n, int k, int32_t* ids, float* vals) {
  uint64_t taken[16] = {};
  for (int j = 0; j < k; ++j) {
    int best = -1;
    for (int e = 0; e < n; ++e) {
      if (taken[e >> 6] >> (e & 63) & 1) continue;
      if (best < 0 || p[e] > p[best]) best = e;
    }
    taken[best >> 6] |= uint64_t{1} << (best & 63);
    ids[j] = best;
    vals[j] = p[best];
  }
}
}  // namespace

void topk_softmax(const float* logits, int n_experts, int k, bool renormalize, int32_t* ids,
                  float* weights) {
  float p[1024];
  for (int e = 0; e < n_experts; ++e) p[e] = logits[e];
  softmax_isa(Isa::kScalar, p, n_experts);
  top_k(p, n_experts, k, ids, weights);
  if (renormalize) {
    float s = 0.f;
    for (int j = 0; j < k; ++j) s += weights[j];
    for (int j = 0; j < k; ++j) weights[j] /= s;
  }
}

void topk_then_softmax(const float* logits, int n_experts, int k, int32_t* ids, float* weights) {
  top_k(logits, n_experts, k, ids, weights);
  softmax_isa(Isa::kScalar, weights, k);
}

void topk_softmax_biased(const float* logits, int n_experts, int k, const float* score_bias,
                         int32_t* ids, float* weights) {
  float p[1024], choice[1024];
  for (int e = 0; e < n_experts; ++e) p[e] = logits[e];
  softmax_isa(Isa::kScalar, p, n_experts);
  for (int e = 0; e < n_experts; ++e) choice[e] = p[e] + score_bias[e];
  top_k(choice, n_experts, k, ids, weights);
  float s = 0.f;
  for (int j = 0; j < k; ++j) s += weights[j] = p[ids[j]];
  for (int j = 0; j < k; ++j) weights[j] /= s;
}

void topk_sigmoid_grouped(const float* logits, int n_experts, int k, const float* score_bias,
                          int n_group, int topk_group, bool renormalize, float scale, int32_t* ids,
                          float* weights) {
  float s[1024], choice[1024];
  for (int e = 0; e < n_experts; ++e) {
    s[e] = 1.0f / (1.0f + std::exp(-logits[e]));
    choice[e] = score_bias ? s[e] + score_bias[e] : s[e];
  }
  if (topk_group < n_group) {
    const int gs = n_experts / n_group;
    float group_score[1024], vals[2];
    int32_t top[2];
    for (int g = 0; g < n_group; ++g) {
      top_k(choice + g * gs, gs, 2, top, vals);
      group_score[g] = vals[0] + vals[1];
    }
    int32_t kept[1024];
    float kept_score[1024];
    top_k(group_score, n_group, topk_group, kept, kept_score);
    bool keep[1024] = {};
    for (int j = 0; j < topk_group; ++j) keep[kept[j]] = true;
    for (int e = 0; e < n_experts; ++e)
      if (!keep[e / gs]) choice[e] = -std::numeric_limits<float>::infinity();
  }
  top_k(choice, n_experts, k, ids, weights);
  for (int j = 0; j < k; ++j) weights[j] = s[ids[j]];
  if (renormalize) {
    float sum = 0.f;
    for (int j = 0; j < k; ++j) sum += weights[j];
    sum += 1e-20f;
    for (int j = 0; j < k; ++j) weights[j] /= sum;
  }
  for (int j = 0; j < k; ++j) weights[j] *= scale;
}

void swiglu_oai(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n_tok,
                int64_t dim, float alpha, float limit, float* out, int64_t ld_out) {
  for (int64_t t = 0; t < n_tok; ++t) {
    const float* g = gate + t * ld_gate;
    const float* u = up + t * ld_up;
    float* o = out + t * ld_out;
    for (int64_t i = 0; i < dim; ++i) {
      const float gi = std::min(g[i], limit);
      const float ui = std::clamp(u[i], -limit, limit);
      const float glu = gi / (1.0f + std::exp(-(alpha * gi)));  // g * sigmoid(alpha g)
      o[i] = (ui + 1.0f) * glu;
    }
  }
}

}  // namespace vt::cpu
