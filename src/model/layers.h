// The shared decoder layers every architecture is built from: attention over the paged
// KV cache, the SwiGLU MLP and the sparse MoE block. Architectures differ only in which
// weights they load (bias, q/k norm, experts), not in code paths here.
#pragma once

#include <cstdint>
#include <vector>

#include "model/config.h"
#include "model/forward_batch.h"
#include "vt/cpu/kernels.h"
#include "vt/graph.h"
#include "vt/scratch.h"

namespace vllm::model {

struct LoraRefs;  // model/lora.h

struct AttentionWeights {
  std::vector<float> norm;       // input_layernorm (empty: none, OLMo 2)
  std::vector<float> norm_bias;  // its LayerNorm bias (empty: none; StableLM has one)
  vt::cpu::WeightView q, k, v, o;
  std::vector<float> q_bias, k_bias, v_bias;  // empty: no bias
  std::vector<float> q_norm, k_norm;          // empty: no per-head norm
  int32_t sliding_window = 0;                 // > 0: ModelConfig::sliding_window of the layer
  bool rope = true;                           // false: a NoPE layer (ModelConfig::no_rope)
  std::vector<float> post_norm;  // sandwich_norms: RMSNorm of the attention output (Gemma)
  std::vector<float> o_bias;     // ModelConfig::o_bias
  std::vector<float> sinks;      // ModelConfig::attention_sinks: one logit per query head
  // ModelConfig::mla: q is q_proj when q_lora_rank is 0; per head, k_b [kv_lora_rank x
  // qk_nope] takes q's nope part into the latent space and v_b [v_head_dim x kv_lora_rank] the
  // attention's latent output back out (kv_b's rows, absorbed).
  vt::cpu::WeightView q_a, q_b, kv_a;
  std::vector<vt::cpu::WeightView> k_b, v_b;
  std::vector<float> q_a_norm, kv_a_norm;
};

struct MlpWeights {
  std::vector<float>
      norm;  // post_attention_layernorm (Gemma: pre_feedforward_layernorm; empty: none)
  std::vector<float> norm_bias;           // its LayerNorm bias (empty: none)
  vt::cpu::WeightView gate, up, down;     // gate: empty with ModelConfig::ungated_mlp
  std::vector<float> up_bias, down_bias;  // ModelConfig::mlp_bias
  std::vector<float> post_norm;           // sandwich_norms: RMSNorm of the MLP output (Gemma)
};

struct MoeWeights {
  std::vector<float> norm;
  vt::cpu::WeightView router;
  std::vector<vt::cpu::WeightView> gate, up, down;  // one per expert
  // ModelConfig::moe_bias: the router's, and per expert its projections'.
  std::vector<float> router_bias;
  // ModelConfig::router_score_bias: the bias added to the scores that choose the experts only
  // (e_score_correction_bias).
  std::vector<float> router_score_bias;
  std::vector<std::vector<float>> gate_bias, up_bias, down_bias;
  // ModelConfig::shared_expert_intermediate_size > 0: the shared expert, added to the routed
  // experts' sum scaled by sigmoid(shared_expert_gate . x) (empty: unscaled).
  vt::cpu::WeightView shared_gate, shared_up, shared_down;
  std::vector<float> shared_expert_gate;
};

struct LayerWeights {
  AttentionWeights attn;
  bool moe = false;
  MlpWeights mlp;
  MoeWeights experts;
};

// Grow-only scratch for one forward pass; sized by the largest batch seen.
struct Workspace {
  vt::Scratch<float> x, h, q, k, v, attn, gate, up, act, tmp, router, rows;
  vt::Scratch<float> moe_in, moe_gate, moe_up, moe_out;
  vt::Scratch<float> mla_q, mla_kv, mla_stage;  // ModelConfig::mla: latents, q / v staging
  vt::Scratch<int32_t> moe_tokens;
  vt::Scratch<float> moe_weights;
  vt::Scratch<int32_t> topk_ids;
  vt::Scratch<float> topk_w;
  // Set while captured graphs point into the buffers: growing them then is an error.
  bool frozen = false;
  // The backend whose storage holds every buffer (before the first reserve).
  void bind(vt::Backend& be);
  void reserve(const ModelConfig& c, int64_t n_tok);
};

// x += Attention(rms_norm(x)) for every token of the batch, writing K/V to the cache; `lora`
// (null: none) adds the tokens' adapters to q / k / v / o.
void attention_block(const ModelConfig& c, const AttentionWeights& w, const float* inv_freq,
                     const ForwardBatch& b, const vt::cpu::KvLayerView& kv, Workspace& ws,
                     vt::ThreadPool& pool, vt::Exec& ex, const LoraRefs* lora = nullptr);
// x += MLP(rms_norm(x)); `lora` as attention_block's, to gate / up / down.
void mlp_block(const ModelConfig& c, const MlpWeights& w, int64_t n_tok, Workspace& ws,
               vt::ThreadPool& pool, vt::Exec& ex, const LoraRefs* lora = nullptr);
// x += MoE(rms_norm(x)): softmax router, top-k, optional renormalization, experts summed
// in ascending expert order (a fixed order per token, whatever the batch).
void moe_block(const ModelConfig& c, const MoeWeights& w, int64_t n_tok, Workspace& ws,
               vt::ThreadPool& pool, vt::Exec& ex);

}  // namespace vllm::model
