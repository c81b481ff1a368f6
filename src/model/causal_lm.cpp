// Loading (format detection, architecture lookup, weight binding) and the forward pass.
#include "model/causal_lm.h"

#include <sys/stat.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "model/family.h"
#include "model/fp8_weights.h"
#include "model/gguf.h"
#include "model/gguf_weights.h"
#include "model/load_error.h"
#include "model/rope_scaling.h"
#include "vt/cpu/matmul_half.h"
#include "vt/cpu/ops_extra.h"

namespace vllm::model {

namespace fs = std::filesystem;

namespace {
std::string layer_prefix(int64_t i) { return "model.layers." + std::to_string(i) + "."; }
}  // namespace

CausalLM::~CausalLM() = default;

const ModelFamily& CausalLM::family_of(const ModelConfig& c) {
  const ModelFamily* f = family_for_hf(c.architecture);
  if (!f)
    throw LoadError(c.source, "unsupported architecture '" + c.architecture +
                                  "' (supported: " + supported_hf_architectures() + ")");
  return *f;
}

std::unique_ptr<CausalLM> CausalLM::load(const std::string& path, vt::ThreadPool& pool,
                                         const LoadOptions& opts) {
  if (fs::is_directory(path)) {
    ModelConfig config = config_from_hf_dir(path, opts.hf_overrides);
    family_of(config);  // an unknown architecture is reported before the weights are read
    WeightStore store;
    load_safetensors_dir(path, store);
    return from_weights(path, std::move(config), std::move(store), pool, opts);
  }
  if (fs::is_regular_file(path)) {
    if (!opts.hf_overrides.empty())
      throw LoadError(path,
                      "--hf-overrides: applies to a Hugging Face folder's config.json; a GGUF's "
                      "metadata is used as it is");
    return from_gguf(GgufFile::open(path), pool, opts);
  }
  throw LoadError(path, "no such file or folder");
}

std::unique_ptr<CausalLM> CausalLM::from_gguf(std::unique_ptr<GgufFile> gguf, vt::ThreadPool& pool,
                                              const LoadOptions& opts) {
  auto m = std::unique_ptr<CausalLM>(new CausalLM());
  m->use_backend(opts);
  m->path_ = gguf->path();
  m->pool_ = &pool;
  m->gguf_ = std::move(gguf);
  m->config_ = config_from_gguf(*m->gguf_);
  const ModelFamily& family = family_of(m->config_);
  load_gguf_weights(*m->gguf_, family, m->store_);
  if (family.gguf_weights) family.gguf_weights(m->store_, m->config_);
  m->load_weights(family, opts);
  return m;
}

namespace {
// A checkpoint saved from the bare decoder (transformers' Qwen3Model, ...: embedding models such
// as Qwen3-Embedding) names its tensors without the "model." prefix and has no lm_head: its
// names get the prefix (the LM head then falls back to the embedding; a pooling model never
// reads it). vLLM's pooling loader accepts both layouts the same way.
void add_base_model_prefix(WeightStore& s) {
  if (s.has("model.embed_tokens.weight") || !s.has("embed_tokens.weight")) return;
  std::vector<std::string> names;
  for (const auto& [name, t] : s.all())
    if (name.rfind("model.", 0) != 0 && name.rfind("lm_head.", 0) != 0) names.push_back(name);
  for (const std::string& n : names) s.rename(n, "model." + n);
}
}  // namespace

std::unique_ptr<CausalLM> CausalLM::from_weights(const std::string& source, ModelConfig config,
                                                 WeightStore store, vt::ThreadPool& pool,
                                                 const LoadOptions& opts) {
  auto m = std::unique_ptr<CausalLM>(new CausalLM());
  m->use_backend(opts);
  m->path_ = source;
  m->pool_ = &pool;
  config.validate();
  m->config_ = std::move(config);
  m->store_ = std::move(store);
  const ModelFamily& family = family_of(m->config_);
  dequantize_fp8_weights(m->store_, m->config_);  // an FP8 checkpoint's weights, as BF16
  add_base_model_prefix(m->store_);
  if (family.hf_weights) family.hf_weights(m->store_, m->config_);
  m->load_weights(family, opts);
  return m;
}

void CausalLM::use_backend(const LoadOptions& opts) {
  backend_ = opts.backend ? opts.backend : std::shared_ptr<vt::Backend>(vt::make_cpu_backend());
  ws_.bind(*backend_);
  packed_.bind(*backend_);
}

void CausalLM::load_weights(const ModelFamily& family, const LoadOptions& opts) {
  const bool long_rope = use_longrope_factors(
      config_, opts.max_model_len,
      !config_.rope_scaling.long_factor.empty() || store_.has("rope_factors_long.weight"));
  if (opts.disable_sliding_window && config_.max_sliding_window() > 0) {
    int32_t w = config_.max_sliding_window();
    for (int32_t x : config_.sliding_window)
      if (x > 0) w = std::min(w, x);
    if (config_.max_position_embeddings > w)
      config_.max_len_note = "--disable-sliding-window caps the context at the sliding window";
    config_.max_position_embeddings = std::min<int64_t>(config_.max_position_embeddings, w);
    config_.sliding_window.clear();
  }
  const ModelConfig& c = config_;
  // The mapped files the kernels read unpacked weights from in place: the backend's storage
  // too (on the CPU a view; packing then releases the pages of what it copies).
  for (const auto& [f, begin] : weight_files())
    if (f->size() > begin)
      mapped_weights_.push_back(vt::StorageBuffer::adopt(
          *backend_, f->data() + begin, f->size() - begin, vt::StorageKind::Weights, f->path()));
  embed_ = store_.matrix("model.embed_tokens.weight", c.vocab_size, c.hidden_size);
  if (c.tie_word_embeddings || !store_.has("lm_head.weight"))
    lm_head_ = embed_;
  else
    lm_head_ = store_.matrix("lm_head.weight", c.vocab_size, c.hidden_size);
  final_norm_ = load_norm(store_, c, "model.norm.weight", c.hidden_size);
  if (c.layer_norm_bias) final_norm_bias_ = store_.vector_f32("model.norm.bias", c.hidden_size);
  if (c.lm_head_bias) lm_head_bias_ = store_.vector_f32("lm_head.bias", c.vocab_size);
  // Gemma's normalizer: sqrt(hidden_size) as a float (llama.cpp, and transformers in fp32;
  // transformers running bf16 weights rounds it to bf16).
  if (c.scale_embeddings) embed_scale_ = std::sqrt(static_cast<float>(c.hidden_size));
  if (c.embedding_multiplier > 0) embed_scale_ = static_cast<float>(c.embedding_multiplier);
  inv_freq_ = c.rope_inv_freq();
  if (c.rope_local_theta > 0) {  // the local layers' base, without the global rope scaling
    ModelConfig local = c;
    local.rope_theta = c.rope_local_theta;
    local.rope_scaling = RopeScaling{};
    inv_freq_local_ = local.rope_inv_freq();
  }
  // GGUF per-frequency divisors: llama3 scaling's rope_freqs, and longrope's short or long
  // factors (Phi-3.5: llama.cpp's rope_factors_short / _long; llama.cpp also takes the long
  // ones for a context past the original length).
  auto divide_frequencies = [&](const char* name) {
    const std::vector<float> f = store_.vector_f32(name, c.rope_dim() / 2);
    for (size_t i = 0; i < inv_freq_.size(); ++i) {
      if (!std::isfinite(f[i]) || !(f[i] > 0))
        throw LoadError(store_.find(name)->file,
                        std::string("tensor '") + name + "' element " + std::to_string(i) + " = " +
                            std::to_string(f[i]) + " (rope divisors must be finite and positive)");
      inv_freq_[i] /= f[i];
    }
  };
  if (long_rope && store_.has("rope_factors_long.weight"))
    divide_frequencies("rope_factors_long.weight");
  else if (c.rope_scaling.type == "longrope" && store_.has("rope_factors_short.weight"))
    divide_frequencies("rope_factors_short.weight");
  if (store_.has("rope_freqs.weight")) divide_frequencies("rope_freqs.weight");
  layers_.reserve(c.num_layers);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    layers_.push_back(family.load_layer(store_, c, i));
    layers_.back().attn.sliding_window = c.layer_window(i);
    layers_.back().attn.rope = c.layer_ropes(i);
  }
  // --dtype's activation rounding belongs to this model's weights (packing copies it), so
  // another model loaded in the same process keeps its own.
  if (opts.bf16_activations)
    for (vt::cpu::WeightView* w : weight_views()) w->round_act = *opts.bf16_activations ? 1 : 0;
  // A correction-biased router (GLM-4.5, MiniMax-M2, ERNIE 4.5) multiplies fp32 activations
  // whatever --dtype says, as vLLM's (an fp32 linear over the hidden states cast to fp32) and
  // transformers' (the router weight kept fp32).
  if (c.router_score_bias)
    for (LayerWeights& l : layers_)
      if (l.moe) l.experts.router.round_act = 0;
  // Reading the small tensors above (norms, rope divisors) faults in their neighbourhood: the
  // page cache hands out large folios, mapped whole, so each 4 KiB norm can bring 2 MiB of the
  // weights beside it into this process's RSS (280 MB of a 424 MB Q5_K_M file, on top of the
  // packed copy). Everything read so far is copied, so drop the mappings' pages before packing
  // and again after it (packing releases what it copies, rounded inward to pages). They are
  // clean file pages: a kernel that reads a weight in place faults them back when it needs them.
  release_mapped_weights();
  if (opts.pack_weights) pack_weights(opts);
  release_mapped_weights();
}

std::vector<float> CausalLM::lm_head_rows(const std::vector<int32_t>& ids) const {
  const int64_t E = config_.hidden_size;
  for (int32_t id : ids)
    if (id < 0 || id >= config_.vocab_size)
      throw std::out_of_range("token id " + std::to_string(id) + " is outside the vocabulary");
  std::vector<float> out(ids.size() * static_cast<size_t>(E));
  vt::cpu::get_rows(lm_head_, ids.data(), static_cast<int64_t>(ids.size()), out.data(), E);
  return out;
}

std::vector<float> CausalLM::score_head(int64_t num_labels) const {
  if (!store_.has("score.weight")) return {};
  const int64_t E = config_.hidden_size;
  const vt::cpu::WeightView w = store_.matrix("score.weight", num_labels, E);
  std::vector<int32_t> rows(static_cast<size_t>(num_labels));
  for (int64_t i = 0; i < num_labels; ++i) rows[i] = static_cast<int32_t>(i);
  std::vector<float> out(static_cast<size_t>(num_labels * E));
  vt::cpu::get_rows(w, rows.data(), num_labels, out.data(), E);
  return out;
}

void CausalLM::release_mapped_weights() const {
  for (const auto& [f, begin] : weight_files()) f->release(begin, f->size() - begin);
}

std::vector<std::pair<const MappedFile*, size_t>> CausalLM::weight_files() const {
  std::vector<std::pair<const MappedFile*, size_t>> files;
  if (gguf_) {
    if (const MappedFile* f = gguf_->mapped()) files.emplace_back(f, gguf_->data_start());
  } else {
    for (const auto& f : store_.files()) files.emplace_back(f.get(), 0);
  }
  return files;
}

// What a cached packed copy must have been made from: the source files (path, size, mtime,
// inode) and every matrix's type, shape and place, in packing order. Empty when a source is not
// a file. (A copy in another layout is caught by PackedWeights::adopt_cache.)
std::string CausalLM::packed_cache_key(const std::vector<vt::cpu::WeightView*>& views) const {
  auto stamp = [](const std::string& path) -> std::string {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return {};
    return path + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + " " + std::to_string(st.st_ino) + "\n";
  };
  std::string key = "vllm.cpp packed weights 1\n";
  std::vector<const MappedFile*> files;
  for (const auto& [f, begin] : weight_files()) files.push_back(f);
  if (files.empty()) return {};  // a GGUF read, not mapped
  for (const MappedFile* f : files) {
    std::error_code ec;
    const std::string s = stamp(fs::canonical(f->path(), ec).string());
    if (ec || s.empty()) return {};
    key += "source " + s;
  }
  for (const auto* w : views) {
    key += std::to_string(static_cast<int>(w->dtype)) + " " + std::to_string(w->rows) + "x" +
           std::to_string(w->cols) + "/" + std::to_string(w->row_stride) + " @";
    const auto* p = static_cast<const uint8_t*>(w->data);
    std::string at = "memory";
    for (size_t i = 0; i < files.size(); ++i)
      if (p >= files[i]->data() && p < files[i]->data() + files[i]->size())
        at = std::to_string(i) + ":" + std::to_string(p - files[i]->data());
    key += at + "\n";
  }
  return key;
}

std::vector<vt::cpu::WeightView*> CausalLM::weight_views() {
  std::vector<vt::cpu::WeightView*> views = {&embed_, &lm_head_};
  for (LayerWeights& l : layers_) {
    for (auto* w : {&l.attn.q, &l.attn.k, &l.attn.v, &l.attn.o, &l.attn.q_a, &l.attn.q_b,
                    &l.attn.kv_a, &l.mlp.gate, &l.mlp.up, &l.mlp.down, &l.experts.router,
                    &l.experts.shared_gate, &l.experts.shared_up, &l.experts.shared_down})
      views.push_back(w);
    for (auto* v : {&l.experts.gate, &l.experts.up, &l.experts.down, &l.attn.k_b, &l.attn.v_b})
      for (auto& w : *v) views.push_back(&w);
  }
  return views;
}

void CausalLM::pack_weights(const LoadOptions& opts) {
  std::vector<vt::cpu::WeightView*> views = weight_views();
  // One arena for all copies (tied embeddings counted once).
  std::set<const void*> seen;
  size_t total = 0;
  for (const auto* w : views)
    if (seen.insert(w->data).second) total += PackedWeights::arena_bytes(*w);
  std::string key, file;
  if (!opts.packed_cache_dir.empty() && total > 0) {
    key = packed_cache_key(views);
    file = PackedWeights::cache_file(opts.packed_cache_dir, path_);
    std::vector<const MappedFile*> sources;
    for (const auto& [f, begin] : weight_files()) sources.push_back(f);
    if (!key.empty() && packed_.map_cache(file, key, total, views, *pool_, sources)) {
      release_converted(views);
      return;
    }
  }
  packed_.reserve(total);
  for (auto* w : views)
    packed_.pack(*w, gguf_ ? gguf_->mapped() : store_.file_containing(w->data), *pool_);
  if (!key.empty()) packed_.write_cache(file, key);
  release_converted(views);
}

void CausalLM::release_converted(const std::vector<vt::cpu::WeightView*>& views) {
  std::vector<const void*> in_use;
  for (const auto* w : views) in_use.push_back(w->data);
  converted_freed_ += store_.release_converted(in_use);
}

void CausalLM::drop_tokenizer_metadata() {
  if (!gguf_) return;
  for (const char* k : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges",
                        "tokenizer.ggml.token_type", "tokenizer.ggml.scores"})
    gguf_->drop(k);
  // The header was parsed into owned values; its pages (mostly the vocabulary, ~2 MB for a
  // 50k vocabulary) need not stay resident. They are clean file pages, so this only drops
  // them from memory; weights start at data_start() and are never touched here.
  if (const MappedFile* f = gguf_->mapped()) f->release(0, gguf_->data_start());
}

int64_t CausalLM::kv_bytes_per_block(int block_size, vt::DType dtype) const {
  return KvCache::bytes_per_block(config_.num_layers, block_size,
                                  static_cast<int>(config_.num_kv_heads),
                                  static_cast<int>(config_.head_dim), dtype);
}

void CausalLM::init_kv_cache(int64_t num_blocks, int block_size, vt::DType dtype) {
  kv_.init(*backend_, config_.num_layers, num_blocks, block_size,
           static_cast<int>(config_.num_kv_heads), static_cast<int>(config_.head_dim), dtype);
}

void CausalLM::forward(const ForwardBatch& b, float* logits, vt::Exec& ex) {
  const ModelConfig& c = config_;
  const int64_t n = b.n_tok, E = c.hidden_size, V = c.vocab_size, n_logits = b.n_logits;
  ws_.reserve(c, n);
  float *x = ws_.x.data(), *rows = ws_.rows.data();
  const vt::cpu::WeightView* embed = &embed_;
  const vt::cpu::WeightView* head = &lm_head_;
  const float* final_norm = final_norm_.data();
  const float* final_bias = final_norm_bias_.empty() ? nullptr : final_norm_bias_.data();
  const float* head_bias = lm_head_bias_.empty() ? nullptr : lm_head_bias_.data();
  const float eps = static_cast<float>(c.rms_norm_eps);
  const int32_t *ids = b.token_ids, *logit_idx = b.logits_indices;
  vt::ThreadPool* pool = pool_;
  const float escale = embed_scale_;
  ex.op([=] {
    vt::cpu::get_rows(*embed, ids, n, x, E);
    if (escale != 0) vt::cpu::scale_inplace(x, escale, n * E);
  });
  for (int64_t l = 0; l < c.num_layers; ++l) {
    const LayerWeights& lw = layers_[l];
    const float* inv_freq = lw.attn.sliding_window > 0 && !inv_freq_local_.empty()
                                ? inv_freq_local_.data()
                                : inv_freq_.data();
    LoraRefs lr;
    const LoraRefs* lora = nullptr;
    if (b.lora_ids && !lora_refs_.empty()) {
      lr = lora_refs_[l];
      lr.ids = b.lora_ids;
      lora = &lr;
    }
    attention_block(c, lw.attn, inv_freq, b, kv_.layer(l), ws_, *pool_, ex, lora);
    if (lw.moe)
      moe_block(c, lw.experts, n, ws_, *pool_, ex);
    else
      mlp_block(c, lw.mlp, n, ws_, *pool_, ex, lora);
  }
  const bool ln = c.layer_norm;
  // The final norm of x's rows idx[0..n) into out [n][E]: the pooled hidden states, or the LM
  // head's input.
  auto final_rows = [=](const int32_t* idx, int64_t n_rows, float* out) {
    for (int64_t i = 0; i < n_rows; ++i) std::copy_n(x + idx[i] * E, E, out + i * E);
    if (ln) {
      vt::cpu::layer_norm(out, E, final_norm, n_rows, E, eps, out, E);
      if (final_bias) vt::cpu::add_bias(out, E, n_rows, final_bias, E);
    } else
      vt::cpu::rms_norm(out, E, final_norm, n_rows, E, eps, out, E);
  };
  if (b.n_hidden > 0) {
    const int64_t n_hidden = b.n_hidden;
    const int32_t* hidden_idx = b.hidden_indices;
    float* hidden = b.hidden_out;
    ex.op([=] { final_rows(hidden_idx, n_hidden, hidden); });
  }
  if (n_logits == 0) return;
  const float cap = static_cast<float>(c.final_logit_softcap);
  const float inv_logits_scale =
      c.logits_scaling > 0 ? static_cast<float>(1.0 / c.logits_scaling) : 0.0f;
  ex.op([=] {
    final_rows(logit_idx, n_logits, rows);
    vt::cpu::matmul(*head, rows, E, n_logits, logits, V, *pool);
    if (head_bias) vt::cpu::add_bias(logits, V, n_logits, head_bias, V);
    if (cap > 0) vt::cpu::softcap(logits, n_logits * V, cap);  // Gemma 2's final soft-capping
    if (inv_logits_scale != 0) vt::cpu::scale_inplace(logits, inv_logits_scale, n_logits * V);
  });
}

void CausalLM::add_lora(int32_t id, const std::string& name, const std::string& dir,
                        const LoraLoadOptions& opts) {
  if (id <= 0) throw std::invalid_argument("LoRA adapter ids start at 1");
  if (lora(id)) throw std::invalid_argument("LoRA adapter id " + std::to_string(id) + " is taken");
  auto a =
      std::make_unique<const LoraAdapter>(load_lora_adapter(name, dir, config_, layers_, opts));
  if (static_cast<int32_t>(loras_.size()) <= id) loras_.resize(static_cast<size_t>(id) + 1);
  loras_[id] = std::move(a);
  const int64_t L = config_.num_layers;
  lora_layers_.assign(static_cast<size_t>(L), std::vector<const LoraLayer*>(loras_.size()));
  lora_refs_.assign(static_cast<size_t>(L), LoraRefs{});
  for (int64_t l = 0; l < L; ++l) {
    for (size_t i = 1; i < loras_.size(); ++i)
      if (loras_[i]) lora_layers_[l][i] = &loras_[i]->layers[l];
    lora_refs_[l].by_id = lora_layers_[l].data();
    lora_refs_[l].n_ids = static_cast<int32_t>(loras_.size());
  }
}

std::vector<float> load_norm(const WeightStore& s, const ModelConfig& c, const std::string& name,
                             int64_t n) {
  std::vector<float> w = s.vector_f32(name, n);
  for (float& x : w) x += c.norm_weight_offset;
  return w;
}

AttentionWeights load_attention(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = layer_prefix(i);
  const int64_t E = c.hidden_size, qd = c.num_heads * c.head_dim, kvd = c.num_kv_heads * c.head_dim;
  AttentionWeights a;
  a.norm = load_norm(s, c, p + "input_layernorm.weight", E);
  if (c.layer_norm_bias) a.norm_bias = s.vector_f32(p + "input_layernorm.bias", E);
  a.o = s.matrix(p + "self_attn.o_proj.weight", E, qd);
  if (c.o_bias) a.o_bias = s.vector_f32(p + "self_attn.o_proj.bias", E);
  if (s.has(p + "self_attn.qkv_proj.weight")) {  // fused, rows q | k | v, and so its bias
    const vt::cpu::WeightView qkv = s.matrix(p + "self_attn.qkv_proj.weight", qd + 2 * kvd, E);
    a.q = rows_of(qkv, 0, qd);
    a.k = rows_of(qkv, qd, kvd);
    a.v = rows_of(qkv, qd + kvd, kvd);
    if (c.attention_bias) {
      const std::vector<float> b = s.vector_f32(p + "self_attn.qkv_proj.bias", qd + 2 * kvd);
      a.q_bias.assign(b.begin(), b.begin() + qd);
      a.k_bias.assign(b.begin() + qd, b.begin() + qd + kvd);
      a.v_bias.assign(b.begin() + qd + kvd, b.end());
    }
    return a;
  }
  a.q = s.matrix(p + "self_attn.q_proj.weight", qd, E);
  a.k = s.matrix(p + "self_attn.k_proj.weight", kvd, E);
  a.v = s.matrix(p + "self_attn.v_proj.weight", kvd, E);
  if (c.attention_bias) {
    a.q_bias = s.vector_f32(p + "self_attn.q_proj.bias", qd);
    a.k_bias = s.vector_f32(p + "self_attn.k_proj.bias", kvd);
    a.v_bias = s.vector_f32(p + "self_attn.v_proj.bias", kvd);
  }
  return a;
}

MlpWeights load_mlp(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = layer_prefix(i);
  const int64_t E = c.hidden_size, F = c.intermediate_size;
  MlpWeights m;
  if (!c.parallel_block) {  // a parallel block's MLP reads the attention's normalized input
    m.norm = load_norm(s, c, p + "post_attention_layernorm.weight", E);
    if (c.layer_norm_bias) m.norm_bias = s.vector_f32(p + "post_attention_layernorm.bias", E);
  }
  if (!c.ungated_mlp) m.gate = s.matrix(p + "mlp.gate_proj.weight", F, E);
  m.up = s.matrix(p + "mlp.up_proj.weight", F, E);
  m.down = s.matrix(p + "mlp.down_proj.weight", E, F);
  if (c.mlp_bias) {
    m.up_bias = s.vector_f32(p + "mlp.up_proj.bias", F);
    m.down_bias = s.vector_f32(p + "mlp.down_proj.bias", E);
  }
  return m;
}

vt::cpu::WeightView rows_of(const vt::cpu::WeightView& w, int64_t first, int64_t n) {
  vt::cpu::WeightView v = w;
  v.rows = n;
  v.data = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(first) * w.row_stride;
  return v;
}

MlpWeights load_fused_gate_up_mlp(const WeightStore& s, const ModelConfig& c, int64_t i,
                                  const std::string& norm) {
  const std::string p = layer_prefix(i);
  const int64_t E = c.hidden_size, F = c.intermediate_size;
  MlpWeights m;
  m.norm = s.vector_f32(p + norm, E);
  const vt::cpu::WeightView gu =
      s.matrix(p + (c.from_gguf ? "mlp.up_proj.weight" : "mlp.gate_up_proj.weight"), 2 * F, E);
  m.gate = rows_of(gu, 0, F);
  m.up = rows_of(gu, F, F);
  m.down = s.matrix(p + "mlp.down_proj.weight", E, F);
  return m;
}

LayerWeights load_output_norm_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = layer_prefix(i);
  const int64_t E = c.hidden_size, F = c.intermediate_size, D = c.head_dim;
  const int64_t qd = c.num_heads * D, kvd = c.num_kv_heads * D;
  LayerWeights w;
  w.attn.q = s.matrix(p + "self_attn.q_proj.weight", qd, E);
  w.attn.k = s.matrix(p + "self_attn.k_proj.weight", kvd, E);
  w.attn.v = s.matrix(p + "self_attn.v_proj.weight", kvd, E);
  w.attn.o = s.matrix(p + "self_attn.o_proj.weight", E, qd);
  w.attn.q_norm = s.vector_f32(p + "self_attn.q_norm.weight", c.qk_norm_whole ? qd : D);
  w.attn.k_norm = s.vector_f32(p + "self_attn.k_norm.weight", c.qk_norm_whole ? kvd : D);
  w.attn.post_norm = s.vector_f32(p + "post_attention_layernorm.weight", E);
  w.mlp.gate = s.matrix(p + "mlp.gate_proj.weight", F, E);
  w.mlp.up = s.matrix(p + "mlp.up_proj.weight", F, E);
  w.mlp.down = s.matrix(p + "mlp.down_proj.weight", E, F);
  w.mlp.post_norm = s.vector_f32(p + "post_feedforward_layernorm.weight", E);
  return w;
}

LayerWeights load_llama_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w;
  w.attn = load_attention(s, c, i);
  if (c.layer_is_moe(i)) {
    w.moe = true;
    w.experts = load_moe(s, c, i);
  } else {
    w.mlp = load_mlp(s, c, i);
  }
  return w;
}

MoeWeights load_moe(const WeightStore& s, const ModelConfig& c, int64_t i) {
  const std::string p = layer_prefix(i) + "mlp.";
  const int64_t E = c.hidden_size, F = c.moe_intermediate_size, X = c.num_experts;
  MoeWeights m;
  m.norm = s.vector_f32(layer_prefix(i) + "post_attention_layernorm.weight", E);
  m.router = s.matrix(p + "gate.weight", X, E);
  const bool stacked = s.has(p + "experts.gate_proj.weight");
  const bool fused = s.has(p + "experts.gate_up_proj.weight");
  for (int64_t e = 0; e < X; ++e) {
    if (fused) {  // rows gate | up of each expert (GraniteMoE's input_linear)
      const vt::cpu::WeightView gu =
          s.matrix_slice(p + "experts.gate_up_proj.weight", e, X, 2 * F, E);
      m.gate.push_back(rows_of(gu, 0, F));
      m.up.push_back(rows_of(gu, F, F));
      m.down.push_back(s.matrix_slice(p + "experts.down_proj.weight", e, X, E, F));
    } else if (stacked) {
      m.gate.push_back(s.matrix_slice(p + "experts.gate_proj.weight", e, X, F, E));
      m.up.push_back(s.matrix_slice(p + "experts.up_proj.weight", e, X, F, E));
      m.down.push_back(s.matrix_slice(p + "experts.down_proj.weight", e, X, E, F));
    } else {
      const std::string ep = p + "experts." + std::to_string(e) + ".";
      m.gate.push_back(s.matrix(ep + "gate_proj.weight", F, E));
      m.up.push_back(s.matrix(ep + "up_proj.weight", F, E));
      m.down.push_back(s.matrix(ep + "down_proj.weight", E, F));
    }
  }
  return m;
}

void rename_block_sparse_moe(WeightStore& s, const ModelConfig& c) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string from = layer_prefix(i) + "block_sparse_moe.";
    const std::string to = layer_prefix(i) + "mlp.";
    s.rename(from + "gate.weight", to + "gate.weight");
    for (int64_t e = 0; e < c.num_experts; ++e) {
      const std::string ef = from + "experts." + std::to_string(e) + ".";
      const std::string et = to + "experts." + std::to_string(e) + ".";
      s.rename(ef + "w1.weight", et + "gate_proj.weight");
      s.rename(ef + "w3.weight", et + "up_proj.weight");
      s.rename(ef + "w2.weight", et + "down_proj.weight");
    }
  }
}

void load_shared_expert(const WeightStore& s, const ModelConfig& c, const std::string& prefix,
                        MoeWeights& m) {
  const int64_t E = c.hidden_size, F = c.shared_expert_intermediate_size;
  m.shared_gate = s.matrix(prefix + "gate_proj.weight", F, E);
  m.shared_up = s.matrix(prefix + "up_proj.weight", F, E);
  m.shared_down = s.matrix(prefix + "down_proj.weight", E, F);
}

}  // namespace vllm::model
