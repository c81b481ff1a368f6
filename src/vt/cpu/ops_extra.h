// Small helper kernels the model layers need besides the kernels.h contract: argmax for
// greedy sampling checks, q/k/v bias (Qwen2), MoE routing (softmax + top-k) and expert
// combination. Scalar on purpose (they touch a few thousand floats per step), except argmax,
// which scans a vocabulary per greedy row: argmax_isa (ops.h) per ISA.
#pragma once

#include <cstdint>

namespace vt::cpu {

// Index of the largest element; the lowest index wins ties. NaNs are never selected
// unless every element is NaN (then 0). n must be > 0.
int64_t argmax(const float* x, int64_t n);

// y[t * ld + i] += bias[i] for t < n_tok, i < dim.
void add_bias(float* y, int64_t ld, int64_t n_tok, const float* bias, int64_t dim);

// y[i] += a * x[i]. The product is rounded before the add (as torch's `y + x * a`).
void scale_add(float* y, const float* x, float a, int64_t n);

// x[i] *= a.
void scale_inplace(float* x, float a, int64_t n);

// MoE routing for one token: p = softmax(logits) over n_experts (in float, like HF's
// softmax(dtype=float)), then the k largest p in descending order, ties broken by the
// lower expert index. With renormalize, weights are divided by their sum (HF
// norm_topk_prob). Writes k ids and k weights. Requires 0 < k <= n_experts <= 1024.
void topk_softmax(const float* logits, int n_experts, int k, bool renormalize, int32_t* ids,
                  float* weights);

}  // namespace vt::cpu
