// CudaModelExecutor: KV cache, scratch, batch staging, and the forward pass as launches.
#include "vt/cuda/cuda_model_executor.h"
#include "vt/cuda/cuda_check.h"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "model/kv_cache.h"
#include "vt/cuda/device_checks.h"

namespace vt::cuda {

using vllm::model::ForwardBatch;

struct CudaModelExecutor::Scratch {
  int64_t cap = 0;  // tokens per forward the buffers below hold
  bool frozen = false;
  StorageBuffer x, h, q, k, v, attn, gate, up, act, rows, xbf16, partials;
  StorageBuffer batch, logits;  // eager steps only: staged batch arrays, logits before download
  std::vector<uint8_t> host_batch;
};

struct CudaModelExecutor::DevBatch {
  int64_t n_tok = 0, n_seqs = 0, bt_stride = 0, n_logits = 0;
  const int32_t *ids = nullptr, *pos = nullptr, *seq = nullptr, *bt = nullptr, *rows = nullptr;
  const int64_t* slots = nullptr;
};

namespace {
// What the CUDA kernels do not implement, refused before any weight is uploaded.
const vllm::model::CausalLM& supported_on_cuda(const vllm::model::CausalLM& m) {
  const auto& c = m.config();
  if (c.hidden_act != vllm::model::Activation::kSilu || c.sandwich_norms || c.scale_embeddings ||
      c.query_pre_attn_scalar > 0 || c.rope_local_theta > 0 || c.attn_logit_softcap > 0 ||
      c.final_logit_softcap > 0 || c.embedding_multiplier > 0 || c.attention_multiplier > 0 ||
      c.residual_multiplier > 0 || c.logits_scaling > 0 || c.qk_norm_whole ||
      c.qk_norm_after_rope || c.rope_scaling.type == "longrope" || c.rope_scaling.type == "yarn" ||
      c.rope_dim() != c.head_dim || c.layer_norm || c.parallel_block || c.o_bias || c.ungated_mlp ||
      c.mlp_bias || c.lm_head_bias || c.mla || c.attn_temperature_scale > 0 || c.attention_sinks ||
      c.moe_bias || c.topk_before_softmax || c.swiglu_limit > 0 ||
      c.shared_expert_intermediate_size > 0 || c.router_sigmoid || c.router_score_bias)
    throw std::runtime_error(
        c.source + ": " + c.architecture +
        " (Gemma's GeGLU, sandwich norms, scaled embeddings and attention; "
        "Granite's multipliers; OLMo 2's norms; Hunyuan's norms after RoPE; longrope, YaRN, "
        "partial rotary; Cohere's "
        "LayerNorm and parallel block; GPT-OSS's attention sinks, biases and clamped SwiGLU; "
        "Qwen2-MoE's and GLM-4.5's shared experts, correction-biased routers; Phi-2's and "
        "StarCoder2's biases and ungated MLP; DeepSeek's latent attention; Ministral 3's "
        "attention temperature) is "
        "not "
        "implemented "
        "by the CUDA executor; run "
        "it on the CPU");
  if (c.max_sliding_window() > 0)
    throw std::runtime_error(
        m.config().source +
        ": sliding-window attention (config.json sliding_window) is not implemented by the CUDA "
        "executor; run it on the CPU, or pass --disable-sliding-window to cap the context at the "
        "window");
  return m;
}
}  // namespace

CudaModelExecutor::CudaModelExecutor(const vllm::model::CausalLM& m, CudaBackend& backend,
                                     CudaExecutorOptions opts)
    : backend_(backend),
      opts_(opts),
      model_(supported_on_cuda(m), backend, opts.reserve_bytes),
      default_kv_(m.default_kv_dtype()),
      scratch_(std::make_unique<Scratch>()) {
  const int64_t len =
      opts_.max_model_len > 0 ? opts_.max_model_len : model_.config().max_position_embeddings;
  max_segments_ = attn_max_segments(len);
  if (opts_.cublas_min_tokens > 0 && model_.all_bf16()) cublas_ = std::make_unique<CublasLtGemm>();
}

CudaModelExecutor::~CudaModelExecutor() = default;

int32_t CudaModelExecutor::vocab_size() const {
  return static_cast<int32_t>(model_.config().vocab_size);
}
int32_t CudaModelExecutor::max_model_len() const {
  return static_cast<int32_t>(model_.config().max_position_embeddings);
}
DType CudaModelExecutor::default_kv_cache_dtype() const { return default_kv_; }

int64_t CudaModelExecutor::kv_bytes_per_block(int block_size, DType dtype) const {
  const auto& c = model_.config();
  return vllm::model::KvCache::bytes_per_block(c.num_layers, block_size,
                                               static_cast<int>(c.num_kv_heads),
                                               static_cast<int>(c.head_dim), dtype);
}

std::optional<int64_t> CudaModelExecutor::device_memory_available() const {
  const DeviceFacts f = query_device(backend_.device());
  const size_t free = f.free_bytes > opts_.reserve_bytes ? f.free_bytes - opts_.reserve_bytes : 0;
  return static_cast<int64_t>(free);
}

void CudaModelExecutor::init_kv_cache(int64_t num_blocks, int block_size, DType dtype) {
  if (backend_.capturing()) throw std::logic_error("init_kv_cache during a graph capture");
  const auto& c = model_.config();
  const int64_t per_block = kv_bytes_per_block(block_size, dtype);  // rejects other dtypes
  kv_.clear();
  kv_mem_.reset();
  const DeviceFacts f = query_device(backend_.device());
  const std::string problem =
      kv_memory_problem(num_blocks, per_block, f.free_bytes, opts_.reserve_bytes);
  if (!problem.empty()) throw std::runtime_error(problem);
  const size_t total = static_cast<size_t>(num_blocks) * static_cast<size_t>(per_block);
  kv_mem_ = StorageBuffer(backend_, total, StorageKind::KvCache, "the KV cache");
  // Zeroed so that padding rows of a decode batch (which read page 0) see finite values.
  check(cudaMemsetAsync(kv_mem_.get(), 0, total, backend_.stream()), "cudaMemsetAsync (KV)");
  const int64_t layer_bytes = per_block * num_blocks / (2 * c.num_layers);
  for (int64_t l = 0; l < c.num_layers; ++l) {
    KvLayer kv;
    kv.k = kv_mem_.as<uint8_t>() + 2 * l * layer_bytes;
    kv.v = kv_mem_.as<uint8_t>() + (2 * l + 1) * layer_bytes;
    kv.geom = KvGeom{block_size, static_cast<int>(c.num_kv_heads), static_cast<int>(c.head_dim)};
    kv.dtype = dtype;
    kv_.push_back(kv);
  }
}

void CudaModelExecutor::reserve(int64_t n) {
  Scratch& s = *scratch_;
  if (n <= s.cap) return;
  if (s.frozen || backend_.capturing())
    throw std::logic_error("CUDA executor: a step of " + std::to_string(n) +
                           " tokens needs more scratch than the " + std::to_string(s.cap) +
                           " tokens reserved while graphs reference it (prepare_graphs must "
                           "cover every step)");
  const auto& c = model_.config();
  const int64_t E = c.hidden_size, qd = c.num_heads * c.head_dim;
  const int64_t kvd = c.num_kv_heads * c.head_dim, F = c.intermediate_size;
  auto f32 = [&](int64_t elems, const char* what) {
    return StorageBuffer(backend_, static_cast<size_t>(elems) * sizeof(float), StorageKind::Scratch,
                         what);
  };
  s = Scratch{};  // frees the old buffers first
  s.x = f32(n * E, "scratch x");
  s.h = f32(n * E, "scratch h");
  s.q = f32(n * qd, "scratch q");
  s.k = f32(n * kvd, "scratch k");
  s.v = f32(n * kvd, "scratch v");
  s.attn = f32(n * qd, "scratch attention output");
  s.gate = f32(n * F, "scratch gate");
  s.up = f32(n * F, "scratch up");
  s.act = f32(n * F, "scratch activation");
  s.rows = f32(n * E, "scratch logit rows");
  if (cublas_)
    s.xbf16 = StorageBuffer(backend_, static_cast<size_t>(n * std::max({E, qd, F})) * 2,
                            StorageKind::Scratch, "scratch bf16");
  const int64_t split = std::min(n, opts_.attn_split_max_tokens);
  if (split > 0)
    s.partials =
        f32(static_cast<int64_t>(attention_partials_floats(
                split, static_cast<int>(c.num_heads), static_cast<int>(c.head_dim), max_segments_)),
            "attention partials");
  s.cap = n;
}

void CudaModelExecutor::prepare_graphs(int64_t max_tokens) {
  reserve(max_tokens);
  scratch_->frozen = true;
}

CudaModelExecutor::DevBatch CudaModelExecutor::stage_batch(const ForwardBatch& b, bool capturing) {
  DevBatch d;
  d.n_tok = b.n_tok;
  d.n_seqs = b.n_seqs;
  d.bt_stride = b.bt_stride;
  d.n_logits = b.n_logits;
  const void* host[6] = {b.token_ids,    b.positions,
                         b.seq_of_token, b.block_tables,
                         b.slot_mapping, d.n_logits > 0 ? b.logits_indices : nullptr};
  void* dev[6];
  int given = 0, resolved = 0;
  for (int i = 0; i < 6; ++i) {
    dev[i] = host[i] ? backend_.device_address(host[i]) : nullptr;
    given += host[i] != nullptr;
    resolved += dev[i] != nullptr;
  }
  if (resolved != 0 && resolved != given)
    throw std::logic_error(
        "CUDA executor: a ForwardBatch mixes graph-state buffers and host arrays (all of its "
        "arrays must be one or the other)");
  if (resolved == 0 && given > 0) {
    if (capturing)
      throw std::logic_error(
          "CUDA executor under capture: the ForwardBatch arrays are host memory; a captured "
          "step must read graph state (CudaBackend buffers) so replays need no copies");
    // One counted copy for the whole batch.
    const size_t sizes[6] = {
        static_cast<size_t>(d.n_tok) * 4, static_cast<size_t>(d.n_tok) * 4,
        static_cast<size_t>(d.n_tok) * 4, static_cast<size_t>(d.n_seqs * d.bt_stride) * 4,
        static_cast<size_t>(d.n_tok) * 8, static_cast<size_t>(d.n_logits) * 4};
    size_t off[6], total = 0;
    for (int i = 0; i < 6; ++i) {
      off[i] = total;
      total += DeviceArena::round(sizes[i]);
    }
    Scratch& s = *scratch_;
    if (s.batch.bytes() < total)
      s.batch = StorageBuffer(backend_, total * 2, StorageKind::Scratch, "staged batch arrays");
    s.host_batch.resize(total);
    for (int i = 0; i < 6; ++i)
      if (host[i] && sizes[i]) std::memcpy(s.host_batch.data() + off[i], host[i], sizes[i]);
    backend_.upload(s.batch.get(), s.host_batch.data(), total);
    for (int i = 0; i < 6; ++i) dev[i] = host[i] ? s.batch.as<uint8_t>() + off[i] : nullptr;
  }
  d.ids = static_cast<const int32_t*>(dev[0]);
  d.pos = static_cast<const int32_t*>(dev[1]);
  d.seq = static_cast<const int32_t*>(dev[2]);
  d.bt = static_cast<const int32_t*>(dev[3]);
  d.slots = static_cast<const int64_t*>(dev[4]);
  d.rows = static_cast<const int32_t*>(dev[5]);
  return d;
}

void CudaModelExecutor::execute(const ForwardBatch& batch, float* logits) {
  execute(batch, logits, Exec::eager());
}

void CudaModelExecutor::execute(const ForwardBatch& batch, float* logits, Exec& ex) {
  if (kv_.empty()) throw std::logic_error("CUDA executor: init_kv_cache before execute");
  const bool capturing = ex.capturing();
  if (capturing && !ex.passes_through())
    throw std::logic_error(
        "CUDA executor under a recording Exec: capture through CudaBackend::begin_capture, "
        "which records the kernel launches (Exec pass-through)");
  if (capturing != backend_.capturing())
    throw std::logic_error("CUDA executor: the Exec and the backend disagree about capturing");
  if (batch.n_tok <= 0) return;
  reserve(batch.n_tok);
  const DevBatch d = stage_batch(batch, capturing);
  const int64_t V = model_.config().vocab_size;
  float* dl = nullptr;
  bool to_host = false;
  if (d.n_logits > 0) {
    dl = static_cast<float*>(backend_.device_address(logits));
    if (!dl) {
      if (capturing)
        throw std::logic_error(
            "CUDA executor under capture: the logits pointer is host memory, not graph state");
      const size_t bytes = static_cast<size_t>(d.n_logits * V) * sizeof(float);
      if (scratch_->logits.bytes() < bytes)
        scratch_->logits = StorageBuffer(backend_, bytes, StorageKind::Scratch, "logits");
      dl = scratch_->logits.as<float>();
      to_host = true;
    }
  }
  forward(d, dl);
  check_launch("the forward pass");
  if (to_host) backend_.download(logits, dl, static_cast<size_t>(d.n_logits * V) * sizeof(float));
}

void CudaModelExecutor::project(const MatmulOut* outs, int n, const float* x, int64_t ldx,
                                int64_t n_tok) {
  const cudaStream_t st = backend_.stream();
  bool bf16 = cublas_ && n_tok >= opts_.cublas_min_tokens && ldx == outs[0].w.cols;
  for (int i = 0; i < n; ++i) bf16 &= outs[i].w.dtype == DType::BF16;
  if (!bf16) return matmul(st, outs, n, x, ldx, n_tok);
  uint16_t* xb = scratch_->xbf16.as<uint16_t>();
  to_bf16(st, x, xb, n_tok * ldx);
  for (int i = 0; i < n; ++i) {
    const MatmulOut& o = outs[i];
    cublas_->gemm(st, static_cast<const uint16_t*>(o.w.data), o.w.rows, o.w.cols, xb, n_tok, o.y,
                  o.ldy, o.bias, o.accumulate);
  }
}

void CudaModelExecutor::forward(const DevBatch& b, float* logits) {
  const auto& c = model_.config();
  const cudaStream_t st = backend_.stream();
  Scratch& s = *scratch_;
  const int64_t n = b.n_tok, E = c.hidden_size, D = c.head_dim, F = c.intermediate_size;
  const int nh = static_cast<int>(c.num_heads), nkv = static_cast<int>(c.num_kv_heads);
  const int64_t qd = nh * D, kvd = nkv * D;
  const float eps = static_cast<float>(c.rms_norm_eps);
  const bool neox = c.rope_style == vt::cpu::RopeStyle::kNeox;
  float *x = s.x.as<float>(), *h = s.h.as<float>(), *q = s.q.as<float>(), *k = s.k.as<float>();
  float *v = s.v.as<float>(), *attn = s.attn.as<float>(), *gate = s.gate.as<float>();
  float *up = s.up.as<float>(), *act = s.act.as<float>(), *rows = s.rows.as<float>();
  float* partials = n <= opts_.attn_split_max_tokens ? s.partials.as<float>() : nullptr;

  AttnArgs aa;
  aa.q = q;
  aa.ldq = qd;
  aa.n_heads = nh;
  aa.out = attn;
  aa.ldo = qd;
  aa.n_tok = n;
  aa.positions = b.pos;
  aa.seq_of_token = b.seq;
  aa.block_tables = b.bt;
  aa.bt_stride = b.bt_stride;
  aa.scale = model_.config().attention_scale();

  get_rows(st, model_.embed(), b.ids, n, x, E);
  for (size_t l = 0; l < model_.layers().size(); ++l) {
    const DevLayer& w = model_.layers()[l];
    rms_norm(st, x, E, nullptr, w.attn_norm, n, E, eps, h, E);
    MatmulOut qkv[3];
    qkv[0] = {w.q, q, qd, w.q_bias, false};
    qkv[1] = {w.k, k, kvd, w.k_bias, false};
    qkv[2] = {w.v, v, kvd, w.v_bias, false};
    project(qkv, 3, h, E, n);
    if (w.q_norm) {
      rms_norm(st, q, D, nullptr, w.q_norm, n * nh, D, eps, q, D);
      rms_norm(st, k, D, nullptr, w.k_norm, n * nkv, D, eps, k, D);
    }
    rope(st, q, qd, nh, k, kvd, nkv, static_cast<int>(D), n, b.pos, model_.inv_freq(), neox);
    reshape_and_cache(st, k, kvd, v, kvd, n, b.slots, kv_[l]);
    paged_attention(st, aa, kv_[l], partials, max_segments_);
    const MatmulOut o = {w.o, x, E, nullptr, true};  // x += o_proj(attention)
    project(&o, 1, attn, qd, n);
    rms_norm(st, x, E, nullptr, w.mlp_norm, n, E, eps, h, E);
    MatmulOut gu[2];
    gu[0] = {w.gate, gate, F, nullptr, false};
    gu[1] = {w.up, up, F, nullptr, false};
    project(gu, 2, h, E, n);
    silu_mul(st, gate, up, n * F, act);
    const MatmulOut down = {w.down, x, E, nullptr, true};  // x += down_proj(act)
    project(&down, 1, act, F, n);
  }
  if (b.n_logits == 0) return;
  rms_norm(st, x, E, b.rows, model_.final_norm(), b.n_logits, E, eps, rows, E);
  const MatmulOut head = {model_.lm_head(), logits, c.vocab_size, nullptr, false};
  project(&head, 1, rows, E, b.n_logits);
}

}  // namespace vt::cuda
