// A loaded decoder-only language model: config, mapped weights, paged KV storage, and
// one forward pass over a mixed prefill/decode token batch.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/config.h"
#include "model/forward_batch.h"
#include "model/kv_cache.h"
#include "model/layers.h"
#include "model/lora.h"
#include "model/weight_packing.h"
#include "model/weight_store.h"
#include "vt/graph.h"
#include "vt/storage.h"

namespace vllm::model {

class GgufFile;

struct LoadOptions {
  // Repack weights for the SIMD kernels (the normal case). Off, every check still runs and the
  // model still runs on the stored layout: for fuzzing and validation tools.
  bool pack_weights = true;
  // A folder for packed copies of the weights (weight_packing.h): a later start maps the copy
  // instead of packing again. Empty: pack every time.
  std::string packed_cache_dir;
  // The backend whose storage holds the weights, the KV cache and the scratch (a CPU backend:
  // the forward pass here runs the CPU kernels). Null: the model makes its own. The executor
  // over the model supplies this backend (CpuModelExecutor::backend).
  std::shared_ptr<vt::Backend> backend;
  // The activations of this model's BF16 weight products (the CPU kernels' two contracts,
  // vt/cpu/matmul_half.h): true rounds them to bf16 (vdpbf16ps where the CPU has it), false
  // keeps fp32; other models in the process keep theirs. nullopt: the process default
  // (VT_BF16_ACTIVATIONS, else fp32).
  std::optional<bool> bf16_activations;
  // vLLM's --disable-sliding-window: every layer attends to its whole context, and the
  // context (max_position_embeddings) is capped at the smallest sliding window so that no
  // token ever sees more than the model was trained to.
  bool disable_sliding_window = false;
  // The context the engine will serve (vLLM's --max-model-len; 0: the model's own). Past
  // longrope's original length it selects the long factors (rope_scaling.h
  // use_longrope_factors); other models ignore it here (the engine checks it against theirs).
  int64_t max_model_len = 0;
  // vLLM's --hf-overrides: a JSON object whose fields replace config.json's top-level ones
  // (a Hugging Face folder; a GGUF is refused with it). Empty: none.
  std::string hf_overrides;
};

struct ModelFamily;

class CausalLM {
 public:
  // path: a Hugging Face folder (config.json + safetensors) or a .gguf file.
  static std::unique_ptr<CausalLM> load(const std::string& path,
                                        vt::ThreadPool& pool = vt::ThreadPool::global(),
                                        const LoadOptions& opts = {});
  // From an already parsed GGUF (GgufFile::open or GgufFile::parse on bytes in memory).
  static std::unique_ptr<CausalLM> from_gguf(std::unique_ptr<GgufFile> gguf,
                                             vt::ThreadPool& pool = vt::ThreadPool::global(),
                                             const LoadOptions& opts = {});
  // From a config and tensors read elsewhere (config_from_hf_json + load_safetensors_bytes).
  // `source` names the model in errors.
  static std::unique_ptr<CausalLM> from_weights(const std::string& source, ModelConfig config,
                                                WeightStore store,
                                                vt::ThreadPool& pool = vt::ThreadPool::global(),
                                                const LoadOptions& opts = {});
  ~CausalLM();

  const ModelConfig& config() const { return config_; }
  const std::string& path() const { return path_; }
  // Present only for GGUF models (tokenizer and chat template live in its metadata).
  const GgufFile* gguf() const { return gguf_.get(); }
  // How the packed weights were made this start (mapped from a cached copy, or packed).
  const std::string& packed_weights_note() const { return packed_.note(); }
  // Bytes of rewritten weights (gpt-oss's MXFP4 experts from a checkpoint) freed once packed.
  size_t converted_bytes_freed() const { return converted_freed_; }
  GgufFile* gguf_mut() { return gguf_.get(); }
  // Frees the GGUF vocabulary arrays once a tokenizer has been built from them.
  void drop_tokenizer_metadata();

  void init_kv_cache(int64_t num_blocks, int block_size, vt::DType dtype);
  int64_t kv_bytes_per_block(int block_size, vt::DType dtype) const;
  // --kv-cache-dtype auto: bf16 for bf16 checkpoints (judged by the stored embedding), fp16
  // for everything else.
  vt::DType default_kv_dtype() const {
    return embed_.dtype == vt::DType::BF16 ? vt::DType::BF16 : vt::DType::F16;
  }
  KvCache& kv_cache() { return kv_; }
  const KvCache& kv_cache() const { return kv_; }
  // The backend whose storage holds the weights, KV pages and scratch (LoadOptions::backend).
  vt::Backend& backend() const { return *backend_; }

  // Read-only views of the loaded weights, for backends that copy them to their own memory
  // (the CUDA executor). Q8_0 / Q4_0 / Q4_1 views may be packed (vt::cpu::unpack_row reads
  // their rows back in GGUF block layout); lm_head_weight() is embed_weight() when tied.
  const vt::cpu::WeightView& embed_weight() const { return embed_; }
  const vt::cpu::WeightView& lm_head_weight() const { return lm_head_; }
  const std::vector<float>& final_norm_weight() const { return final_norm_; }
  // Rows of the LM head (the embedding when tied) as f32, [ids.size()][hidden]: vLLM's
  // classifier_from_token makes a sequence classifier of them. Throws std::out_of_range for
  // an id outside the vocabulary.
  std::vector<float> lm_head_rows(const std::vector<int32_t>& ids) const;
  // A *ForSequenceClassification checkpoint's classifier ("score.weight", [num_labels][hidden])
  // as f32; empty when the checkpoint has none. Throws LoadError for another shape.
  std::vector<float> score_head(int64_t num_labels) const;
  const std::vector<float>& rope_inv_freq() const { return inv_freq_; }
  const std::vector<LayerWeights>& layers() const { return layers_; }

  // Runs all layers over b's tokens, writing K/V into the cache, and writes
  // logits [b.n_logits][vocab] for the rows in b.logits_indices (and the final-normed hidden
  // states of b.hidden_indices to b.hidden_out).
  // Under capture (ex.capturing()) the ops are recorded, not run: every pointer in b must
  // then stay valid for the graph's lifetime.
  void forward(const ForwardBatch& b, float* logits, vt::Exec& ex = vt::Exec::eager());
  // Sizes the scratch for batches of up to n_tok tokens (done before any capture).
  void reserve_workspace(int64_t n_tok) { ws_.reserve(config_, n_tok); }

  // Reads a PEFT LoRA adapter folder (load_lora_adapter) as adapter `id` (> 0, not yet used):
  // forward adds it for the tokens whose ForwardBatch::lora_ids name it. Throws LoadError.
  // Not while a forward runs (the server loads its --lora-modules before serving).
  void add_lora(int32_t id, const std::string& name, const std::string& dir,
                const LoraLoadOptions& opts);
  bool has_loras() const { return !lora_refs_.empty(); }
  const LoraAdapter* lora(int32_t id) const {
    return id > 0 && id < static_cast<int32_t>(loras_.size()) ? loras_[id].get() : nullptr;
  }
  void freeze_workspace(bool frozen) { ws_.frozen = frozen; }

  // The family of a config (models/registry.cpp); throws LoadError listing the supported
  // architectures when there is none.
  static const ModelFamily& family_of(const ModelConfig& c);

 private:
  CausalLM() = default;
  void use_backend(const LoadOptions& opts);
  void load_weights(const ModelFamily& family, const LoadOptions& opts);
  void release_mapped_weights() const;  // drop the model files' mapped pages
  // The mapped model files, each with where its weights begin (a GGUF's data section; a
  // safetensors file from 0). Empty for a GGUF that is read, not mapped.
  std::vector<std::pair<const MappedFile*, size_t>> weight_files() const;
  void pack_weights(const LoadOptions& opts);
  // Frees the store's converted buffers (gpt-oss's rewritten experts) no view reads any more.
  void release_converted(const std::vector<vt::cpu::WeightView*>& views);
  // Every weight matrix of the model (tied embeddings twice), for packing and per-model flags.
  std::vector<vt::cpu::WeightView*> weight_views();
  std::string packed_cache_key(const std::vector<vt::cpu::WeightView*>& views) const;

  // First, so it is destroyed last: every StorageBuffer below was handed out by it.
  std::shared_ptr<vt::Backend> backend_;
  std::string path_;
  ModelConfig config_;
  std::unique_ptr<GgufFile> gguf_;
  WeightStore store_;
  vt::ThreadPool* pool_ = nullptr;
  std::vector<float> final_norm_;
  std::vector<float> final_norm_bias_;  // a LayerNorm family's final bias (StableLM); or empty
  std::vector<float> lm_head_bias_;     // ModelConfig::lm_head_bias (Phi-2); or empty
  std::vector<float> inv_freq_;
  std::vector<float> inv_freq_local_;  // the sliding-window layers' (rope_local_theta); or empty
  float embed_scale_ = 0;              // scale_embeddings: sqrt(hidden_size); 0: none
  vt::cpu::WeightView embed_, lm_head_;
  PackedWeights packed_;
  size_t converted_freed_ = 0;
  std::vector<LayerWeights> layers_;
  std::vector<vt::StorageBuffer> mapped_weights_;  // the mapped files, read in place
  KvCache kv_;
  Workspace ws_;
  std::vector<std::unique_ptr<const LoraAdapter>> loras_;  // by id; [0] and gaps null
  // Per layer, per adapter id: its LoraLayer (null: none) and the refs forward hands the blocks.
  std::vector<std::vector<const LoraLayer*>> lora_layers_;
  std::vector<LoraRefs> lora_refs_;
};

// Pieces the families (models/*.cpp) share.
// A norm's weight as the forward applies it: plus ModelConfig::norm_weight_offset (Hugging Face
// Gemma stores w - 1).
std::vector<float> load_norm(const WeightStore& s, const ModelConfig& c, const std::string& name,
                             int64_t n);
// load_attention / load_mlp read the input norms through load_norm, and their biases when
// ModelConfig::layer_norm_bias; load_attention q/k/v from separate matrices or from a fused
// qkv_proj (rows q | k | v, read as row ranges: Phi-3, Phi-2's older GGUFs; its bias split the
// same way), the o_proj bias with ModelConfig::o_bias;
// load_mlp no norm in a parallel block, no gate_proj with ModelConfig::ungated_mlp and the
// up / down biases with ModelConfig::mlp_bias.
AttentionWeights load_attention(const WeightStore& s, const ModelConfig& c, int64_t i);
MlpWeights load_mlp(const WeightStore& s, const ModelConfig& c, int64_t i);
// Rows [first, first + n) of a stored matrix, as a matrix of their own (fused projections:
// rows are whole blocks in every type, so a range packs like any weight).
vt::cpu::WeightView rows_of(const vt::cpu::WeightView& w, int64_t first, int64_t n);
// A dense MLP whose gate and up projections are fused in one matrix, rows gate | up (Phi-3,
// GLM-4: mlp.gate_up_proj; llama.cpp's ffn_up of 2 x feed_forward_length rows, which the shared
// GGUF table names mlp.up_proj); `norm` names the RMSNorm before it.
MlpWeights load_fused_gate_up_mlp(const WeightStore& s, const ModelConfig& c, int64_t i,
                                  const std::string& norm);
// A layer that normalizes its blocks' outputs instead of their inputs (OLMo 2, EXAONE 4.0):
// q/k/v/o, q_norm / k_norm (over the whole projection when c.qk_norm_whole, else per head),
// post_attention_layernorm, the dense MLP, post_feedforward_layernorm; no input norms.
LayerWeights load_output_norm_layer(const WeightStore& s, const ModelConfig& c, int64_t i);
// The plain Llama decoder layer: load_attention, then load_moe on the sparse layers
// (ModelConfig::layer_is_moe) and a dense load_mlp on the others (Llama / Mixtral, Qwen2,
// InternLM2, Granite / GraniteMoE; the base of OLMoE's and Qwen2-MoE's layers).
LayerWeights load_llama_layer(const WeightStore& s, const ModelConfig& c, int64_t i);
// A sparse MoE block under the shared names: mlp.gate (the router) and the experts' SwiGLU
// matrices, per expert (mlp.experts.E.gate_proj, ...), stacked in one 3-D tensor per
// projection (mlp.experts.gate_proj, GGUF's ffn_gate_exps), or with gate and up stacked fused
// (mlp.experts.gate_up_proj [experts, 2F, hidden], rows gate | up).
MoeWeights load_moe(const WeightStore& s, const ModelConfig& c, int64_t i);
// Mixtral's expert names (model.layers.N.block_sparse_moe.gate, experts.E.w1 / w3 / w2) renamed
// to the shared ones that load_moe reads (mlp.gate, mlp.experts.E.gate_proj / up_proj /
// down_proj), on every layer; names a checkpoint lacks are left alone (Mixtral, MiniMax-M2).
void rename_block_sparse_moe(WeightStore& s, const ModelConfig& c);
// The shared expert of a sparse layer (c.shared_expert_intermediate_size wide):
// `prefix`gate_proj / up_proj / down_proj.weight into m.shared_* (Qwen2-MoE's
// mlp.shared_expert., GLM-4.5's and ERNIE 4.5's mlp.shared_experts.).
void load_shared_expert(const WeightStore& s, const ModelConfig& c, const std::string& prefix,
                        MoeWeights& m);

}  // namespace vllm::model
