// Shared decoder layers.
#include "model/layers.h"

#include <algorithm>
#include <cmath>

namespace vllm::model {

using vt::cpu::MatmulOut;

void Workspace::reserve(const ModelConfig& c, int64_t n) {
  auto grow = [](auto& v, int64_t size) {
    if (static_cast<int64_t>(v.size()) < size) v.resize(size);
  };
  const int64_t E = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  const int64_t ff = std::max(c.intermediate_size, c.moe_intermediate_size);
  grow(x, n * E);
  grow(h, n * E);
  grow(tmp, n * E);
  grow(this->q, n * q);
  grow(k, n * kv);
  grow(v, n * kv);
  grow(attn, n * q);
  grow(gate, n * ff);
  grow(up, n * ff);
  grow(act, n * ff);
  if (c.num_experts > 0) {
    grow(router, n * c.num_experts);
    grow(moe_in, n * E);
    grow(moe_gate, n * c.moe_intermediate_size);
    grow(moe_up, n * c.moe_intermediate_size);
    grow(moe_out, n * E);
    grow(moe_tokens, n);
    grow(moe_weights, n);
    grow(topk_ids, n * c.num_experts_per_tok);
    grow(topk_w, n * c.num_experts_per_tok);
  }
}

namespace {
void add_bias(float* y, int64_t ld, int64_t n_tok, const std::vector<float>& bias) {
  if (bias.empty()) return;
  const int64_t d = static_cast<int64_t>(bias.size());
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t i = 0; i < d; ++i) y[t * ld + i] += bias[i];
}
}  // namespace

void attention_block(const ModelConfig& c, const AttentionWeights& w, const float* inv_freq,
                     const ForwardBatch& b, const vt::cpu::KvLayerView& kv, Workspace& ws,
                     vt::ThreadPool& pool) {
  const int64_t n = b.n_tok, E = c.hidden_size, D = c.head_dim;
  const int64_t qd = c.num_heads * D, kvd = c.num_kv_heads * D;
  vt::cpu::rms_norm(ws.x.data(), E, w.norm.data(), n, E, static_cast<float>(c.rms_norm_eps),
                    ws.h.data(), E);
  MatmulOut outs[3] = {{&w.q, ws.q.data(), qd}, {&w.k, ws.k.data(), kvd}, {&w.v, ws.v.data(), kvd}};
  vt::cpu::matmul_multi(outs, 3, ws.h.data(), E, n, pool);
  add_bias(ws.q.data(), qd, n, w.q_bias);
  add_bias(ws.k.data(), kvd, n, w.k_bias);
  add_bias(ws.v.data(), kvd, n, w.v_bias);
  if (!w.q_norm.empty()) {
    const float eps = static_cast<float>(c.rms_norm_eps);
    vt::cpu::rms_norm(ws.q.data(), D, w.q_norm.data(), n * c.num_heads, D, eps, ws.q.data(), D);
    vt::cpu::rms_norm(ws.k.data(), D, w.k_norm.data(), n * c.num_kv_heads, D, eps, ws.k.data(), D);
  }
  vt::cpu::rope(ws.q.data(), qd, n, static_cast<int>(c.num_heads), static_cast<int>(D), b.positions,
                inv_freq, c.rope_style);
  vt::cpu::rope(ws.k.data(), kvd, n, static_cast<int>(c.num_kv_heads), static_cast<int>(D),
                b.positions, inv_freq, c.rope_style);
  vt::cpu::reshape_and_cache(ws.k.data(), kvd, ws.v.data(), kvd, n, b.slot_mapping, kv);
  vt::cpu::AttnBatch ab;
  ab.n_tok = n;
  ab.positions = b.positions;
  ab.seq_of_token = b.seq_of_token;
  ab.block_tables = b.block_tables;
  ab.bt_stride = b.bt_stride;
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  vt::cpu::paged_attention(ws.q.data(), qd, static_cast<int>(c.num_heads), kv, ab, scale,
                           ws.attn.data(), qd, pool);
  vt::cpu::matmul(w.o, ws.attn.data(), qd, n, ws.tmp.data(), E, pool);
  vt::cpu::add_inplace(ws.x.data(), ws.tmp.data(), n * E);
}

void mlp_block(const ModelConfig& c, const MlpWeights& w, int64_t n, Workspace& ws,
               vt::ThreadPool& pool) {
  const int64_t E = c.hidden_size, F = c.intermediate_size;
  vt::cpu::rms_norm(ws.x.data(), E, w.norm.data(), n, E, static_cast<float>(c.rms_norm_eps),
                    ws.h.data(), E);
  MatmulOut outs[2] = {{&w.gate, ws.gate.data(), F}, {&w.up, ws.up.data(), F}};
  vt::cpu::matmul_multi(outs, 2, ws.h.data(), E, n, pool);
  vt::cpu::silu_mul(ws.gate.data(), F, ws.up.data(), F, n, F, ws.act.data(), F);
  vt::cpu::matmul(w.down, ws.act.data(), F, n, ws.tmp.data(), E, pool);
  vt::cpu::add_inplace(ws.x.data(), ws.tmp.data(), n * E);
}

void moe_block(const ModelConfig& c, const MoeWeights& w, int64_t n, Workspace& ws,
               vt::ThreadPool& pool) {
  const int64_t E = c.hidden_size, F = c.moe_intermediate_size, X = c.num_experts,
                K = c.num_experts_per_tok;
  vt::cpu::rms_norm(ws.x.data(), E, w.norm.data(), n, E, static_cast<float>(c.rms_norm_eps),
                    ws.h.data(), E);
  vt::cpu::matmul(w.router, ws.h.data(), E, n, ws.router.data(), X, pool);
  // Routing: softmax over experts, top-k (ties to the lower index), optional renorm.
  std::vector<int32_t> order(X);
  for (int64_t t = 0; t < n; ++t) {
    float* r = ws.router.data() + t * X;
    vt::cpu::softmax(r, X);
    for (int64_t e = 0; e < X; ++e) order[e] = static_cast<int32_t>(e);
    std::partial_sort(order.begin(), order.begin() + K, order.end(),
                      [&](int32_t a, int32_t b) { return r[a] > r[b] || (r[a] == r[b] && a < b); });
    float sum = 0;
    for (int64_t k = 0; k < K; ++k) sum += r[order[k]];
    for (int64_t k = 0; k < K; ++k) {
      ws.topk_ids[t * K + k] = order[k];
      ws.topk_w[t * K + k] = c.norm_topk_prob ? r[order[k]] / sum : r[order[k]];
    }
  }
  std::fill(ws.moe_out.begin(), ws.moe_out.begin() + n * E, 0.0f);
  for (int64_t e = 0; e < X; ++e) {
    int64_t m = 0;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t k = 0; k < K; ++k)
        if (ws.topk_ids[t * K + k] == e) {
          ws.moe_tokens[m] = static_cast<int32_t>(t);
          ws.moe_weights[m] = ws.topk_w[t * K + k];
          std::copy_n(ws.h.data() + t * E, E, ws.moe_in.data() + m * E);
          ++m;
        }
    if (m == 0) continue;
    MatmulOut outs[2] = {{&w.gate[e], ws.moe_gate.data(), F}, {&w.up[e], ws.moe_up.data(), F}};
    vt::cpu::matmul_multi(outs, 2, ws.moe_in.data(), E, m, pool);
    vt::cpu::silu_mul(ws.moe_gate.data(), F, ws.moe_up.data(), F, m, F, ws.moe_gate.data(), F);
    vt::cpu::matmul(w.down[e], ws.moe_gate.data(), F, m, ws.tmp.data(), E, pool);
    for (int64_t i = 0; i < m; ++i) {
      float* dst = ws.moe_out.data() + ws.moe_tokens[i] * E;
      const float* src = ws.tmp.data() + i * E;
      const float wt = ws.moe_weights[i];
      for (int64_t j = 0; j < E; ++j) dst[j] += src[j] * wt;
    }
  }
  vt::cpu::add_inplace(ws.x.data(), ws.moe_out.data(), n * E);
}

}  // namespace vllm::model
