// Shared decoder layers. Every data-touching step goes through Exec::op so a decode step
// can be captured as a graph: lambdas capture pointers and sizes by value, never the
// ForwardBatch or other host objects, and host code between ops never reads data.
#include "model/layers.h"

#include <algorithm>
#include <cmath>

#include "model/lora.h"
#include "vt/cpu/ops_extra.h"

namespace vllm::model {

using vt::cpu::MatmulOut;
using vt::cpu::WeightView;

void Workspace::bind(vt::Backend& be) {
  for (auto* f : {&x,      &h,       &q,           &k,      &v,     &attn,   &gate,
                  &up,     &act,     &tmp,         &router, &rows,  &moe_in, &moe_gate,
                  &moe_up, &moe_out, &moe_weights, &topk_w, &mla_q, &mla_kv, &mla_stage})
    f->bind(be);
  for (auto* i : {&moe_tokens, &topk_ids}) i->bind(be);
}

void Workspace::reserve(const ModelConfig& c, int64_t n) {
  auto grow = [this](auto& v, int64_t size) {
    if (static_cast<int64_t>(v.size()) < size) {
      if (frozen) throw std::logic_error("workspace growth while graphs reference it");
      v.reserve(static_cast<size_t>(size));
    }
  };
  const int64_t E = c.hidden_size, q = c.num_heads * c.head_dim, kv = c.num_kv_heads * c.head_dim;
  const int64_t ff =
      std::max({c.intermediate_size, c.moe_intermediate_size, c.shared_expert_intermediate_size});
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
  grow(rows, n * E);
  if (c.mla) {
    grow(mla_q, n * c.q_lora_rank);
    grow(mla_kv, n * (c.kv_lora_rank + c.rope_dim()));
    grow(mla_stage, n * c.num_heads * std::max(c.qk_nope_head_dim + c.rope_dim(), c.v_head_dim));
  }
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
// The element-wise steps between the products (norms, rope, the cache write, silu, the
// residual add) act on each token alone, so a batch of tokens is shared out to the pool by
// token ranges: every token's result is the same bits whichever thread computes it. Run on
// the calling thread alone they left the other threads waiting (Qwen3-0.6B-shape prefill of
// 128 tokens: about a tenth of the second thread's time).
constexpr int64_t kTokensPerThread = 8;
template <class F>
void per_token(vt::ThreadPool& pool, int64_t n, F&& fn) {
  if (pool.size() > 1 && n >= 2 * kTokensPerThread)
    pool.parallel_for(n, fn);
  else
    fn(int64_t{0}, n);
}

// The block's input, token by token: RMSNorm(x) with `w` (LayerNorm when `ln`: Cohere), or x
// itself when the block has no input norm (an empty `w`: OLMo 2 normalizes the blocks' outputs
// instead).
void input_norm(vt::ThreadPool& pool, const float* x, const std::vector<float>& w, int64_t n,
                int64_t E, float eps, float* h, bool ln, const std::vector<float>& bias = {}) {
  per_token(pool, n, [=, &w, &bias](int64_t t0, int64_t t1) {
    if (w.empty())
      std::copy(x + t0 * E, x + t1 * E, h + t0 * E);
    else if (ln)
      vt::cpu::layer_norm(x + t0 * E, E, w.data(), t1 - t0, E, eps, h + t0 * E, E);
    else
      vt::cpu::rms_norm(x + t0 * E, E, w.data(), t1 - t0, E, eps, h + t0 * E, E);
    if (!bias.empty()) vt::cpu::add_bias(h + t0 * E, E, t1 - t0, bias.data(), E);
  });
}

// Llama 4's attention temperature (ModelConfig::attn_temperature_scale): token t's q row times
// 1 + scale ln(1 + floor(position / length)), as transformers' get_llama_4_attn_scale.
void apply_attn_temperature(float* q, int64_t ld, const int32_t* pos, int64_t t0, int64_t t1,
                            float scale, int64_t length) {
  for (int64_t t = t0; t < t1; ++t) {
    const float f = 1.0f + scale * std::log(1.0f + std::floor(static_cast<float>(pos[t]) /
                                                              static_cast<float>(length)));
    if (f != 1.0f) vt::cpu::scale_inplace(q + t * ld, f, ld);
  }
}

// The paged attention's view of the batch for one layer: its window, Gemma 2's soft-capping,
// GPT-OSS's sinks.
vt::cpu::AttnBatch attn_batch(const ModelConfig& c, const AttentionWeights& w,
                              const ForwardBatch& b) {
  vt::cpu::AttnBatch ab;
  ab.n_tok = b.n_tok;
  ab.positions = b.positions;
  ab.seq_of_token = b.seq_of_token;
  ab.block_tables = b.block_tables;
  ab.bt_stride = b.bt_stride;
  ab.window = w.sliding_window;
  ab.softcap = static_cast<float>(c.attn_logit_softcap);
  if (c.attention_sinks) ab.sinks = w.sinks.data();
  return ab;
}

// DeepSeek's multi-head latent attention (ModelConfig::mla) in its absorbed form: the cache
// keeps one latent head per token, [rotated key part | RMSNorm-ed kv latent] (head_dim
// qk_rope + kv_lora_rank), as K and again as V. Each query head becomes [its rotated part |
// its nope part times k_b] (k_b: kv_b's k rows of the head, transposed), whose product with the
// latent head equals the expanded heads' q.k; the paged attention runs it as multi-query
// attention, and each head's output past the rotated dims, a latent, goes through v_b (kv_b's
// v rows of the head) to o_proj.
void mla_attention_block(const ModelConfig& c, const AttentionWeights& w, const float* inv_freq,
                         const ForwardBatch& b, const vt::cpu::KvLayerView& kv, Workspace& ws,
                         vt::ThreadPool& pool, vt::Exec& ex) {
  const int64_t n = b.n_tok, E = c.hidden_size, D = c.head_dim, H = c.num_heads;
  const int64_t R = c.rope_dim(), NP = c.qk_nope_head_dim, VD = c.v_head_dim;
  const int64_t QL = c.q_lora_rank, KL = c.kv_lora_rank, KA = KL + R;
  const int64_t qd = H * D, qhd = NP + R;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const auto style = c.rope_style;
  const float mscale = static_cast<float>(c.rope_scaling.attention_factor);
  float *x = ws.x.data(), *h = ws.h.data(), *q = ws.q.data(), *k = ws.k.data();
  float *attn = ws.attn.data(), *tmp = ws.tmp.data();
  // stg: q's heads as projected ([nope | rope] each), later the heads' v outputs.
  float *lq = ws.mla_q.data(), *lkv = ws.mla_kv.data(), *stg = ws.mla_stage.data();
  const float temp = static_cast<float>(c.attn_temperature_scale);
  const int64_t temp_len = c.attn_temperature_length;
  const AttentionWeights* wp = &w;
  vt::ThreadPool* pp = &pool;
  const int32_t* pos = b.positions;
  const int64_t* slots = b.slot_mapping;
  const vt::cpu::AttnBatch ab = attn_batch(c, w, b);
  const float scale = c.attention_scale();
  const float rmul = static_cast<float>(c.residual_multiplier);

  ex.op([=] { input_norm(*pp, x, wp->norm, n, E, eps, h, false); });
  ex.op([=] {
    if (QL > 0) {
      MatmulOut outs[2] = {{&wp->q_a, lq, QL}, {&wp->kv_a, lkv, KA}};
      vt::cpu::matmul_multi(outs, 2, h, E, n, *pp);
    } else {
      MatmulOut outs[2] = {{&wp->q, stg, H * qhd}, {&wp->kv_a, lkv, KA}};
      vt::cpu::matmul_multi(outs, 2, h, E, n, *pp);
    }
    per_token(*pp, n, [=](int64_t t0, int64_t t1) {
      if (QL > 0)
        vt::cpu::rms_norm(lq + t0 * QL, QL, wp->q_a_norm.data(), t1 - t0, QL, eps, lq + t0 * QL,
                          QL);
      vt::cpu::rms_norm(lkv + t0 * KA, KA, wp->kv_a_norm.data(), t1 - t0, KL, eps, lkv + t0 * KA,
                        KA);
      // The shared rotated key part: one head of R dims after the latent.
      vt::cpu::rope(lkv + t0 * KA + KL, KA, t1 - t0, 1, static_cast<int>(R), pos + t0, inv_freq,
                    style, static_cast<int>(R), mscale);
    });
  });
  ex.op([=] {
    if (QL > 0) vt::cpu::matmul(wp->q_b, lq, QL, n, stg, H * qhd, *pp);
    // Each head's nope part into the latent space, after the head's rotated dims in q.
    for (int64_t hh = 0; hh < H; ++hh)
      vt::cpu::matmul(wp->k_b[hh], stg + hh * qhd, H * qhd, n, q + hh * D + R, qd, *pp);
  });
  ex.op([=] {
    per_token(*pp, n, [=](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        for (int64_t hh = 0; hh < H; ++hh)
          std::copy_n(stg + t * H * qhd + hh * qhd + NP, R, q + t * qd + hh * D);
        const float* l = lkv + t * KA;
        std::copy_n(l + KL, R, k + t * D);
        std::copy_n(l, KL, k + t * D + R);
      }
      const int64_t m = t1 - t0;
      vt::cpu::rope(q + t0 * qd, qd, m, static_cast<int>(H), static_cast<int>(D), pos + t0,
                    inv_freq, style, static_cast<int>(R), mscale);
      if (temp > 0) apply_attn_temperature(q, qd, pos, t0, t1, temp, temp_len);
      // The latent head is the value too: the same rows go to both halves of the cache.
      vt::cpu::reshape_and_cache(k + t0 * D, D, k + t0 * D, D, m, slots + t0, kv);
    });
  });
  ex.op(
      [=] { vt::cpu::paged_attention(q, qd, static_cast<int>(H), kv, ab, scale, attn, qd, *pp); });
  ex.op([=] {
    for (int64_t hh = 0; hh < H; ++hh)
      vt::cpu::matmul(wp->v_b[hh], attn + hh * D + R, qd, n, stg + hh * VD, H * VD, *pp);
    vt::cpu::matmul(wp->o, stg, H * VD, n, tmp, E, *pp);
    per_token(*pp, n, [=](int64_t t0, int64_t t1) {
      if (rmul != 0) vt::cpu::scale_inplace(tmp + t0 * E, rmul, (t1 - t0) * E);
      vt::cpu::add_inplace(x + t0 * E, tmp + t0 * E, (t1 - t0) * E);
    });
  });
}
}  // namespace

void attention_block(const ModelConfig& c, const AttentionWeights& w, const float* inv_freq,
                     const ForwardBatch& b, const vt::cpu::KvLayerView& kv, Workspace& ws,
                     vt::ThreadPool& pool, vt::Exec& ex, const LoraRefs* lora) {
  if (c.mla) return mla_attention_block(c, w, inv_freq, b, kv, ws, pool, ex);
  const int64_t n = b.n_tok, E = c.hidden_size, D = c.head_dim;
  const int64_t qd = c.num_heads * D, kvd = c.num_kv_heads * D;
  const int nh = static_cast<int>(c.num_heads), nkv = static_cast<int>(c.num_kv_heads);
  const float eps = static_cast<float>(c.rms_norm_eps);
  const auto style = c.rope_style;
  const int rd = static_cast<int>(c.rope_dim());
  // The sliding-window layers of a family with a local rope base rotate without the global
  // rope scaling (CausalLM's inv_freq_local_), so without its attention factor too (OLMo 3's
  // YaRN on the full layers only; Gemma 3's linear scaling has none).
  const float mscale = w.sliding_window > 0 && c.rope_local_theta > 0
                           ? 1.0f
                           : static_cast<float>(c.rope_scaling.attention_factor);
  float *x = ws.x.data(), *h = ws.h.data(), *q = ws.q.data(), *k = ws.k.data(), *v = ws.v.data();
  float *attn = ws.attn.data(), *tmp = ws.tmp.data();
  const AttentionWeights* wp = &w;
  vt::ThreadPool* pp = &pool;
  const int32_t* pos = b.positions;
  const int64_t* slots = b.slot_mapping;
  const vt::cpu::AttnBatch ab = attn_batch(c, w, b);
  const bool o_bias = c.o_bias;
  const float scale = c.attention_scale();
  const bool post = !w.post_norm.empty();
  const bool rope = w.rope;
  const float rmul = static_cast<float>(c.residual_multiplier);
  const bool ln = c.layer_norm;
  const float temp = static_cast<float>(c.attn_temperature_scale);
  const int64_t temp_len = c.attn_temperature_length;
  const bool adapted = lora != nullptr;
  const LoraRefs lr = adapted ? *lora : LoraRefs{};
  // Per-head q / k RMSNorm of tokens [t0, t0 + m): before RoPE (Qwen3, Gemma 3), or after it
  // (Hunyuan), in the rope op.
  const bool head_norms = c.qk_norm && !c.qk_norm_whole;
  const bool norm_after_rope = head_norms && c.qk_norm_after_rope;
  auto norm_heads = [=](int64_t t0, int64_t m) {
    float *qt = q + t0 * qd, *kt = k + t0 * kvd;
    vt::cpu::rms_norm(qt, D, wp->q_norm.data(), m * nh, D, eps, qt, D);
    vt::cpu::rms_norm(kt, D, wp->k_norm.data(), m * nkv, D, eps, kt, D);
  };

  ex.op([=] { input_norm(*pp, x, wp->norm, n, E, eps, h, ln, wp->norm_bias); });
  ex.op([=] {
    MatmulOut outs[3] = {{&wp->q, q, qd}, {&wp->k, k, kvd}, {&wp->v, v, kvd}};
    vt::cpu::matmul_multi(outs, 3, h, E, n, *pp);
    if (adapted) {
      lora_apply(lr, &LoraLayer::q, h, E, q, qd, n, *pp);
      lora_apply(lr, &LoraLayer::k, h, E, k, kvd, n, *pp);
      lora_apply(lr, &LoraLayer::v, h, E, v, kvd, n, *pp);
    }
  });
  if (c.attention_bias)  // the family flag, not a sniffed weight
    ex.op([=] {
      vt::cpu::add_bias(q, qd, n, wp->q_bias.data(), qd);
      vt::cpu::add_bias(k, kvd, n, wp->k_bias.data(), kvd);
      vt::cpu::add_bias(v, kvd, n, wp->v_bias.data(), kvd);
    });
  if (c.qk_norm && c.qk_norm_whole)  // OLMo 2: one RMSNorm over all of q, one over all of k
    ex.op([=] {
      per_token(*pp, n, [=](int64_t t0, int64_t t1) {
        float *qt = q + t0 * qd, *kt = k + t0 * kvd;
        vt::cpu::rms_norm(qt, qd, wp->q_norm.data(), t1 - t0, qd, eps, qt, qd);
        vt::cpu::rms_norm(kt, kvd, wp->k_norm.data(), t1 - t0, kvd, eps, kt, kvd);
      });
    });
  else if (head_norms && !norm_after_rope)
    ex.op([=] { per_token(*pp, n, [=](int64_t t0, int64_t t1) { norm_heads(t0, t1 - t0); }); });
  ex.op([=] {
    per_token(*pp, n, [=](int64_t t0, int64_t t1) {
      const int64_t m = t1 - t0;
      if (rope) {
        vt::cpu::rope(q + t0 * qd, qd, m, nh, static_cast<int>(D), pos + t0, inv_freq, style, rd,
                      mscale);
        vt::cpu::rope(k + t0 * kvd, kvd, m, nkv, static_cast<int>(D), pos + t0, inv_freq, style, rd,
                      mscale);
      }
      if (norm_after_rope) norm_heads(t0, m);  // Hunyuan: the norms see the rotated q, k
      if (temp > 0) apply_attn_temperature(q, qd, pos, t0, t1, temp, temp_len);
      vt::cpu::reshape_and_cache(k + t0 * kvd, kvd, v + t0 * kvd, kvd, m, slots + t0, kv);
    });
  });
  ex.op([=] { vt::cpu::paged_attention(q, qd, nh, kv, ab, scale, attn, qd, *pp); });
  ex.op([=] {
    vt::cpu::matmul(wp->o, attn, qd, n, tmp, E, *pp);
    if (adapted) lora_apply(lr, &LoraLayer::o, attn, qd, tmp, E, n, *pp);
    per_token(*pp, n, [=](int64_t t0, int64_t t1) {
      if (o_bias) vt::cpu::add_bias(tmp + t0 * E, E, t1 - t0, wp->o_bias.data(), E);
      if (post)
        vt::cpu::rms_norm(tmp + t0 * E, E, wp->post_norm.data(), t1 - t0, E, eps, tmp + t0 * E, E);
      if (rmul != 0) vt::cpu::scale_inplace(tmp + t0 * E, rmul, (t1 - t0) * E);
      vt::cpu::add_inplace(x + t0 * E, tmp + t0 * E, (t1 - t0) * E);
    });
  });
}

void mlp_block(const ModelConfig& c, const MlpWeights& w, int64_t n, Workspace& ws,
               vt::ThreadPool& pool, vt::Exec& ex, const LoraRefs* lora) {
  const int64_t E = c.hidden_size, F = c.intermediate_size;
  const float eps = static_cast<float>(c.rms_norm_eps);
  float *x = ws.x.data(), *h = ws.h.data(), *gate = ws.gate.data(), *up = ws.up.data();
  float *act = ws.act.data(), *tmp = ws.tmp.data();
  const MlpWeights* wp = &w;
  vt::ThreadPool* pp = &pool;
  const bool gelu = c.hidden_act == Activation::kGeluTanh;
  const bool post = !w.post_norm.empty();
  const float rmul = static_cast<float>(c.residual_multiplier);
  const bool ln = c.layer_norm;
  const bool bias = c.mlp_bias;
  const bool adapted = lora != nullptr;
  const LoraRefs lr = adapted ? *lora : LoraRefs{};
  // A parallel block's MLP reads what the attention read: h, which the attention left intact.
  if (!c.parallel_block)
    ex.op([=] { input_norm(*pp, x, wp->norm, n, E, eps, h, ln, wp->norm_bias); });
  if (c.ungated_mlp)  // act = relu(up h + b)^2 (exact on every ISA) or gelu_tanh(up h + b)
    ex.op([=] {
      vt::cpu::matmul(wp->up, h, E, n, act, F, *pp);
      if (adapted) lora_apply(lr, &LoraLayer::up, h, E, act, F, n, *pp);
      per_token(*pp, n, [=](int64_t t0, int64_t t1) {
        if (bias) vt::cpu::add_bias(act + t0 * F, F, t1 - t0, wp->up_bias.data(), F);
        if (gelu) {
          vt::cpu::gelu_tanh(act + t0 * F, F, t1 - t0, F);
          return;
        }
        for (float *a = act + t0 * F, *e = act + t1 * F; a < e; ++a) {
          const float r = *a > 0.0f ? *a : 0.0f;
          *a = r * r;
        }
      });
    });
  else
    ex.op([=] {
      MatmulOut outs[2] = {{&wp->gate, gate, F}, {&wp->up, up, F}};
      vt::cpu::matmul_multi(outs, 2, h, E, n, *pp);
      if (adapted) {
        lora_apply(lr, &LoraLayer::gate, h, E, gate, F, n, *pp);
        lora_apply(lr, &LoraLayer::up, h, E, up, F, n, *pp);
      }
      per_token(*pp, n, [=](int64_t t0, int64_t t1) {
        if (gelu)
          vt::cpu::gelu_tanh_mul(gate + t0 * F, F, up + t0 * F, F, t1 - t0, F, act + t0 * F, F);
        else
          vt::cpu::silu_mul(gate + t0 * F, F, up + t0 * F, F, t1 - t0, F, act + t0 * F, F);
      });
    });
  ex.op([=] {
    vt::cpu::matmul(wp->down, act, F, n, tmp, E, *pp);
    if (adapted) lora_apply(lr, &LoraLayer::down, act, F, tmp, E, n, *pp);
    per_token(*pp, n, [=](int64_t t0, int64_t t1) {
      if (bias) vt::cpu::add_bias(tmp + t0 * E, E, t1 - t0, wp->down_bias.data(), E);
      if (post)
        vt::cpu::rms_norm(tmp + t0 * E, E, wp->post_norm.data(), t1 - t0, E, eps, tmp + t0 * E, E);
      if (rmul != 0) vt::cpu::scale_inplace(tmp + t0 * E, rmul, (t1 - t0) * E);
      vt::cpu::add_inplace(x + t0 * E, tmp + t0 * E, (t1 - t0) * E);
    });
  });
}

namespace {
// Routing and expert products as one op: which tokens reach which expert is data, so it is
// decided inside the op, never by host code around it.
void moe_op(const ModelConfig* cp, const MoeWeights* w, int64_t n, Workspace* wsp,
            vt::ThreadPool* pool) {
  const ModelConfig& c = *cp;
  Workspace& ws = *wsp;
  const int64_t E = c.hidden_size, F = c.moe_intermediate_size, X = c.num_experts,
                K = c.num_experts_per_tok;
  vt::cpu::matmul(w->router, ws.h.data(), E, n, ws.router.data(), X, *pool);
  if (c.moe_bias) vt::cpu::add_bias(ws.router.data(), X, n, w->router_bias.data(), X);
  for (int64_t t = 0; t < n; ++t)
    if (c.topk_before_softmax)
      vt::cpu::topk_then_softmax(ws.router.data() + t * X, static_cast<int>(X), static_cast<int>(K),
                                 ws.topk_ids.data() + t * K, ws.topk_w.data() + t * K);
    else if (!c.router_sigmoid && !w->router_score_bias.empty())  // ERNIE 4.5
      vt::cpu::topk_softmax_biased(ws.router.data() + t * X, static_cast<int>(X),
                                   static_cast<int>(K), w->router_score_bias.data(),
                                   ws.topk_ids.data() + t * K, ws.topk_w.data() + t * K);
    else if (c.router_sigmoid)
      vt::cpu::topk_sigmoid_grouped(
          ws.router.data() + t * X, static_cast<int>(X), static_cast<int>(K),
          w->router_score_bias.empty() ? nullptr : w->router_score_bias.data(),
          static_cast<int>(c.n_group), static_cast<int>(c.topk_group), c.norm_topk_prob,
          static_cast<float>(c.routed_scaling_factor), ws.topk_ids.data() + t * K,
          ws.topk_w.data() + t * K);
    else {
      vt::cpu::topk_softmax(ws.router.data() + t * X, static_cast<int>(X), static_cast<int>(K),
                            c.norm_topk_prob, ws.topk_ids.data() + t * K, ws.topk_w.data() + t * K);
      if (c.routed_scaling_factor != 1.0)  // DeepSeek-V2's softmax router
        for (int64_t k = 0; k < K; ++k)
          ws.topk_w[t * K + k] *= static_cast<float>(c.routed_scaling_factor);
    }
  const float alpha = static_cast<float>(c.swiglu_alpha),
              limit = static_cast<float>(c.swiglu_limit);
  std::fill(ws.moe_out.data(), ws.moe_out.data() + n * E, 0.0f);
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
    MatmulOut outs[2] = {{&w->gate[e], ws.moe_gate.data(), F}, {&w->up[e], ws.moe_up.data(), F}};
    vt::cpu::matmul_multi(outs, 2, ws.moe_in.data(), E, m, *pool);
    if (c.moe_bias) {
      vt::cpu::add_bias(ws.moe_gate.data(), F, m, w->gate_bias[e].data(), F);
      vt::cpu::add_bias(ws.moe_up.data(), F, m, w->up_bias[e].data(), F);
    }
    if (limit > 0)
      vt::cpu::swiglu_oai(ws.moe_gate.data(), F, ws.moe_up.data(), F, m, F, alpha, limit,
                          ws.moe_gate.data(), F);
    else
      vt::cpu::silu_mul(ws.moe_gate.data(), F, ws.moe_up.data(), F, m, F, ws.moe_gate.data(), F);
    vt::cpu::matmul(w->down[e], ws.moe_gate.data(), F, m, ws.tmp.data(), E, *pool);
    if (c.moe_bias) vt::cpu::add_bias(ws.tmp.data(), E, m, w->down_bias[e].data(), E);
    // Expert outputs are summed in ascending expert order: a fixed order per token.
    for (int64_t i = 0; i < m; ++i) {
      float* dst = ws.moe_out.data() + ws.moe_tokens[i] * E;
      const float* src = ws.tmp.data() + i * E;
      const float wt = ws.moe_weights[i];
      for (int64_t j = 0; j < E; ++j) dst[j] += src[j] * wt;
    }
  }
  if (c.shared_expert_intermediate_size > 0) {
    // The shared expert over every token (gate and up into the dense MLP's buffers), then
    // moe_out += sigmoid(shared_expert_gate . h) * its output (Qwen2-MoE), or its output as it
    // is (GLM-4.5: no gate), as HF adds it to the routed sum.
    const int64_t Fs = c.shared_expert_intermediate_size;
    MatmulOut outs[2] = {{&w->shared_gate, ws.gate.data(), Fs}, {&w->shared_up, ws.up.data(), Fs}};
    vt::cpu::matmul_multi(outs, 2, ws.h.data(), E, n, *pool);
    vt::cpu::silu_mul(ws.gate.data(), Fs, ws.up.data(), Fs, n, Fs, ws.gate.data(), Fs);
    vt::cpu::matmul(w->shared_down, ws.gate.data(), Fs, n, ws.tmp.data(), E, *pool);
    const float* gw = w->shared_expert_gate.empty() ? nullptr : w->shared_expert_gate.data();
    for (int64_t t = 0; t < n; ++t) {
      float* dst = ws.moe_out.data() + t * E;
      const float* src = ws.tmp.data() + t * E;
      if (!gw) {
        vt::cpu::add_inplace(dst, src, E);
        continue;
      }
      const float* h = ws.h.data() + t * E;
      float g = 0;
      for (int64_t j = 0; j < E; ++j) g += gw[j] * h[j];
      const float s = 1.0f / (1.0f + std::exp(-g));
      for (int64_t j = 0; j < E; ++j) dst[j] += s * src[j];
    }
  }
  if (c.residual_multiplier != 0)
    vt::cpu::scale_inplace(ws.moe_out.data(), static_cast<float>(c.residual_multiplier), n * E);
  vt::cpu::add_inplace(ws.x.data(), ws.moe_out.data(), n * E);
}
}  // namespace

void moe_block(const ModelConfig& c, const MoeWeights& w, int64_t n, Workspace& ws,
               vt::ThreadPool& pool, vt::Exec& ex) {
  const int64_t E = c.hidden_size;
  const float eps = static_cast<float>(c.rms_norm_eps);
  float *x = ws.x.data(), *h = ws.h.data();
  const MoeWeights* wp = &w;
  const ModelConfig* cp = &c;
  Workspace* wsp = &ws;
  vt::ThreadPool* pp = &pool;
  const bool ln = c.layer_norm;
  ex.op([=] { input_norm(*pp, x, wp->norm, n, E, eps, h, ln); });
  ex.op([=] { moe_op(cp, wp, n, wsp, pp); });
}

}  // namespace vllm::model
