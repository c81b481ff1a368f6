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
// GPT-OSS's routing: the k largest logits in descending order (ties to the lower index), then
// the softmax over those k alone (HF GptOssTopKRouter). Same requirements.
void topk_then_softmax(const float* logits, int n_experts, int k, int32_t* ids, float* weights);
// GLM-4.5's routing (HF DeepseekV3TopkRouter): s = sigmoid(logits); the choice c = s +
// score_bias (null: none); with topk_group < n_group the experts split into n_group equal
// groups, each scored by the sum of its two largest c, and every expert outside the topk_group
// best groups is left out; then the k largest c in descending order (ties to the
// lower index) with weights s of those experts, divided by their sum + 1e-20 with renormalize,
// times scale. Requires 0 < k <= n_experts <= 1024, n_group dividing n_experts, groups of at
// least 2 when topk_group < n_group, and k <= topk_group x the group size.
// ERNIE 4.5's routing (HF Ernie4_5_MoeTopKRouter): p = softmax(logits) as topk_softmax's, the k
// largest p + score_bias in descending order (ties to the lower index), weights those experts'
// p divided by their sum. Same requirements as topk_softmax.
void topk_softmax_biased(const float* logits, int n_experts, int k, const float* score_bias,
                         int32_t* ids, float* weights);
void topk_sigmoid_grouped(const float* logits, int n_experts, int k, const float* score_bias,
                          int n_group, int topk_group, bool renormalize, float scale, int32_t* ids,
                          float* weights);

// GPT-OSS's clamped SwiGLU for n_tok rows of dim: out = (clamp(up, -limit, limit) + 1) * g *
// sigmoid(alpha * g) with g = min(gate, limit), HF GptOssExperts._apply_gate's steps. The same
// scalar code on every ISA. In place (out == gate) is allowed.
void swiglu_oai(const float* gate, int64_t ld_gate, const float* up, int64_t ld_up, int64_t n_tok,
                int64_t dim, float alpha, float limit, float* out, int64_t ld_out);

}  // namespace vt::cpu
