// ModelConfig: the hyperparameters of a decoder-only model, read from a Hugging Face
// config.json (+ generation_config.json) or from GGUF metadata.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vt/cpu/kernels.h"

namespace vllm::model {

class GgufFile;

// Bounds every configuration is checked against before anything is sized from it
// (docs/MODEL_FILES.md). Each is far above any released model and low enough that the
// products the loader and the engine form (vocab x hidden, heads x head_dim, tokens x width)
// stay inside int64, and counts the engine keeps as int32 fit.
namespace limits {
constexpr int64_t kMaxVocab = int64_t{1} << 24;         // ids; largest released ~262k
constexpr int64_t kMaxHidden = int64_t{1} << 16;        // largest released ~25k
constexpr int64_t kMaxIntermediate = int64_t{1} << 20;  // MLP and expert widths
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxHeads = 1024;
constexpr int64_t kMaxHeadDim = 1024;
constexpr int64_t kMaxContext = int64_t{1} << 24;  // max_position_embeddings (~16.7M)
// vt::cpu::topk_softmax keeps one router row of at most 1024 experts on the stack.
constexpr int64_t kMaxExperts = 1024;
constexpr double kMaxRopeTheta = 1e12;
constexpr double kMaxRopeFactor = 1e6;
}  // namespace limits

struct RopeScaling {
  std::string type;  // "" (none), "llama3", "linear", "longrope", "yarn"
  double factor = 1.0;
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
  // longrope (Phi-3.5, Phi-3-*-128k): the short factors divide the frequencies while the
  // served context stays within original_max_position_embeddings (the default: the context is
  // capped there); a longer --max-model-len (LoadOptions::max_model_len) selects the long
  // factors for every position, vLLM's rule (`use_long`), and restores the checkpoint's whole
  // context (long_max_position_embeddings). Either way cos / sin are scaled by
  // attention_factor (so the attention scores by its square).
  std::vector<float> short_factor;
  std::vector<float> long_factor;            // config.json; a GGUF's are a tensor
  int64_t long_max_position_embeddings = 0;  // the context before the cap
  bool use_long = false;
  double attention_factor = 1.0;  // longrope and yarn
  // yarn: the dimensions between the correction range of beta_fast and beta_slow rotations
  // blend interpolated (/ factor) and original frequencies.
  double beta_fast = 32, beta_slow = 1;
  bool truncate = true;
};

// The MLP's activation: kSilu / kGeluTanh gate the up projection (SwiGLU: Llama, Qwen,
// Mistral; GeGLU: Gemma's gelu_pytorch_tanh). An ungated MLP (ModelConfig::ungated_mlp: no gate
// weight) is down(act(up x)): kRelu2 relu(.)^2 (Arcee's AFM), kGeluTanh the tanh GELU
// (Phi-2's gelu_new, StarCoder2's gelu_pytorch_tanh).
enum class Activation { kSilu, kGeluTanh, kRelu2 };

struct ModelConfig {
  std::string architecture;  // Hugging Face class name (config.json "architectures"[0])
  std::string source;        // the file or folder it came from (for messages)
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  // The rotated prefix of each head: head_dim x partial_rotary_factor (Phi-4-mini 0.75) or the
  // GGUF's rope.dimension_count; 0 means the whole head. See rope_dim().
  int64_t rotary_dim = 0;
  double rms_norm_eps = 1e-6;
  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  vt::cpu::RopeStyle rope_style = vt::cpu::RopeStyle::kNeox;
  int64_t max_position_embeddings = 2048;
  bool tie_word_embeddings = false;
  // Family flags (ModelFamily in model/family.h sets them; the shared forward reads them).
  bool attention_bias = false;  // q/k/v bias
  bool qk_norm = false;         // per-head RMSNorm on q and k
  // Mixture of experts; num_experts == 0 means dense.
  int64_t num_experts = 0;
  int64_t num_experts_per_tok = 0;
  int64_t moe_intermediate_size = 0;
  int64_t decoder_sparse_step = 1;
  std::vector<int64_t> mlp_only_layers;
  bool norm_topk_prob = false;
  // A shared expert of this width on every sparse layer (0: none): Qwen2-MoE's, scaled by
  // sigmoid(shared_expert_gate . x); GLM-4.5's (moe_intermediate_size x n_shared_experts),
  // added as it is (MoeWeights::shared_expert_gate empty).
  int64_t shared_expert_intermediate_size = 0;
  // GLM-4.5's router (DeepSeek-V3's): expert scores sigmoid(logit) instead of a softmax; the
  // top-k chosen on score + a per-expert correction bias (MoeWeights::router_score_bias), only
  // among the topk_group of n_group equal expert groups whose two best biased scores sum
  // highest; the chosen experts weigh their unbiased scores, renormalized with norm_topk_prob,
  // times routed_scaling_factor.
  bool router_sigmoid = false;
  // The router chooses on its scores plus a per-expert correction bias
  // (MoeWeights::router_score_bias: GLM-4.5, MiniMax-M2, and ERNIE 4.5's softmax router, whose
  // weights are the chosen experts' unbiased softmax probabilities, renormalized), and runs in
  // fp32 whatever --dtype says, as vLLM's and transformers' do for these models.
  bool router_score_bias = false;
  // quantization_config fp8 with weight_block_size [rows, cols] (0: not an FP8 checkpoint): the
  // F8_E4M3 weights are dequantized to BF16 at load (model/fp8_weights.h).
  int64_t fp8_block_rows = 0, fp8_block_cols = 0;
  int64_t n_group = 1;
  int64_t topk_group = 1;
  double routed_scaling_factor = 1.0;
  // GPT-OSS: a bias on the router and on every expert's three projections, the softmax taken
  // over the top-k router logits (the same weights as renormalizing, other roundings), and the
  // experts' clamped SwiGLU: (clamp(up, -limit, limit) + 1) * g * sigmoid(alpha * g), g = min(gate,
  // limit) (swiglu_limit 0: the plain SiLU-gated product).
  bool moe_bias = false;
  bool topk_before_softmax = false;  // the router's softmax over its top-k logits only
  double swiglu_alpha = 0;
  double swiglu_limit = 0;
  // GPT-OSS: a bias on o_proj, and a learned sink logit per query head in every softmax
  // (vt::cpu::AttnBatch::sinks).
  bool o_bias = false;
  bool attention_sinks = false;
  // The dense MLP is down(act(up x)) with no gate (ModelFamily::ungated_mlp: Arcee, Phi-2,
  // StarCoder2), and its up / down projections may carry biases (mlp.up_proj.bias,
  // mlp.down_proj.bias: Phi-2, StarCoder2).
  bool ungated_mlp = false;
  bool mlp_bias = false;
  // DeepSeek's multi-head latent attention (mla): q from q_proj, or q_a_proj -> RMSNorm ->
  // q_b_proj (q_lora_rank > 0), heads of qk_nope_head_dim + qk_rope_head_dim; k and v from one
  // latent, kv_a_proj_with_mqa -> [kv_lora_rank | qk_rope_head_dim], the first part RMSNorm-ed and
  // expanded per head by kv_b_proj into [qk_nope_head_dim | v_head_dim], the second rotated once
  // and shared by every head. The cache keeps the latent instead (kv_b absorbed into q and the
  // output: layers.cpp's mla_attention_block): num_kv_heads = 1, head_dim = qk_rope +
  // kv_lora_rank (the rotated dims first). rotary_dim = qk_rope_head_dim.
  bool mla = false;
  int64_t q_lora_rank = 0;
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t v_head_dim = 0;
  bool lm_head_bias = false;  // lm_head.bias added to the logits (Phi-2)
  // Llama 4's attention temperature (Ministral 3: rope_parameters' llama_4_scaling_beta; GGUF
  // attention.temperature_scale): q times 1 + scale ln(1 + floor(position / length)) after
  // RoPE, length the rope's original_max_position_embeddings (0: none).
  double attn_temperature_scale = 0;
  int64_t attn_temperature_length = 0;
  // Tokens.
  int64_t bos_token_id = -1;
  std::vector<int64_t> eos_token_ids;  // config + generation_config, deduplicated
  Activation hidden_act = Activation::kSilu;
  // Gemma's extras (a family sets them; 0 / false: the Llama block's behaviour).
  double query_pre_attn_scalar = 0;  // attention scale query_pre_attn_scalar^-0.5 (0: head_dim)
  bool scale_embeddings = false;     // embeddings times sqrt(hidden_size)
  double rope_local_theta = 0;       // rope base of the sliding-window layers (0: rope_theta)
  float norm_weight_offset = 0;      // RMSNorm weights stored as w - 1 (HF Gemma): added back
  // Cohere: LayerNorm (weight only; eps in rms_norm_eps) wherever RMSNorm would be, and a
  // parallel block (the MLP reads the attention's normalized input; x += attn + mlp).
  bool layer_norm = false;
  bool layer_norm_bias = false;  // StableLM: every LayerNorm also adds a bias (`<name>.bias`)
  bool parallel_block = false;
  bool sandwich_norms = false;  // a norm after attention and after the MLP too (Gemma)
  // OLMo 2: q and k RMSNorm-ed over the whole projection (heads x head_dim), not per head.
  bool qk_norm_whole = false;
  // Hunyuan: the per-head q / k RMSNorm after RoPE instead of before it.
  bool qk_norm_after_rope = false;
  // Gemma 2's soft-capping, cap * tanh(x / cap), of the attention scores and of the logits
  // (0: none).
  double attn_logit_softcap = 0;
  double final_logit_softcap = 0;
  // Granite's multipliers (0: none): embeddings times embedding_multiplier, attention scaled by
  // attention_multiplier instead of head_dim^-0.5, each block's output times
  // residual_multiplier before it joins the residual stream, logits divided by logits_scaling.
  double embedding_multiplier = 0;
  double attention_multiplier = 0;
  double residual_multiplier = 0;
  double logits_scaling = 0;
  // Per layer: > 0 a sliding window of that many positions (a token attends to keys
  // pos - w < p <= pos), 0 full attention. Empty: every layer attends to its whole context.
  std::vector<int32_t> sliding_window;
  // Per layer: true where the layer applies no rotary embedding to q and k (SmolLM3's NoPE
  // layers). Empty: every layer ropes.
  std::vector<bool> no_rope;
  // Why max_position_embeddings was capped below the checkpoint's ("" when it was not): said
  // when a longer --max-model-len is refused.
  std::string max_len_note;
  bool from_gguf = false;
  std::string gguf_arch;  // GGUF general.architecture ("" for Hugging Face): names keys in errors
  // The GGUF's q / k rows are llama.cpp's converter's permutation of Hugging Face's (per head,
  // row 2i + j holds Hugging Face's row j * head_dim / 2 + i): a LoRA made for the Hugging Face
  // model is permuted the same way to fit.
  bool gguf_qk_permuted = false;

  bool layer_is_moe(int64_t layer) const;
  int32_t layer_window(int64_t layer) const {
    return sliding_window.empty() ? 0 : sliding_window[static_cast<size_t>(layer)];
  }
  bool layer_ropes(int64_t layer) const {
    return no_rope.empty() || !no_rope[static_cast<size_t>(layer)];
  }
  // The widest sliding window of any layer, 0 when no layer has one.
  int32_t max_sliding_window() const;
  int64_t rope_dim() const { return rotary_dim > 0 ? rotary_dim : head_dim; }
  // rope_dim() / 2 inverse frequencies with rope scaling applied (float, like HF).
  std::vector<float> rope_inv_freq() const;
  // The factor on q.k: head_dim^-0.5, or query_pre_attn_scalar^-0.5 (Gemma), or
  // attention_multiplier (Granite). rope_scaling's attention_factor (longrope, yarn) is not
  // in it: like HF, the rope kernel scales its cos / sin tables, so only the rotated dims of
  // q and k grow (partial rotary keeps the rest; NoPE layers see none of it).
  float attention_scale() const;
  // Throws LoadError naming the field (the GGUF key for GGUF files) and its value when a
  // number is outside limits:: or the numbers disagree (heads not dividing, top-k > experts).
  void validate() const;
  // The name of a Hugging Face config field in this config's source format.
  std::string field_name(const std::string& hf_field) const;
};

// A window on every layer but each period-th (layers period - 1, 2 period - 1, ... attend to
// their whole context); period 0: on every layer. Transformers' sliding_window_pattern and
// llama.cpp's integer <arch>.attention.sliding_window_pattern count this way.
void set_sliding_window_pattern(ModelConfig& c, int64_t window, int64_t period);
// The first k layers dense, the rest sparse (DeepSeek's first_k_dense_replace, llama.cpp's
// leading_dense_block_count): mlp_only_layers = 0 .. k - 1.
void set_dense_lead(ModelConfig& c, int64_t k);
// llama.cpp's <p>nextn_predict_layers: the multi-token-prediction layers a converter appended
// after the decoder's (counted by block_count; GLM-4.5, GLM-4.7-Flash). Not read: num_layers
// drops them. A count that leaves no decoder layer is a LoadError naming the key.
void drop_gguf_nextn_layers(ModelConfig& c, const GgufFile& g, const std::string& p);

// Rotary on the sliding-window layers only: every layer without a window gets no_rope
// (Cohere2's and EXAONE 4.0's global layers).
void rotate_only_sliding_layers(ModelConfig& c);

class GgufFile;
// llama.cpp's expert keys, every MoE family's: <p>expert_count, <p>expert_used_count and the
// experts' width <p>expert_feed_forward_length (feed_forward_length when absent, as llama.cpp's
// llama and olmoe size them). Checked by validate().
void read_gguf_experts(ModelConfig& c, const GgufFile& g, const std::string& p);
// llama.cpp's keys of a sigmoid router with a correction bias (GLM-4.5, MiniMax-M2): sets
// router_sigmoid; <p>expert_gating_func absent or 2 (sigmoid), any other value refused;
// <p>expert_weights_scale as routed_scaling_factor (absent or 0: 1); <p>expert_group_count /
// <p>expert_group_used_count as n_group / topk_group (absent: one group). The family decides
// norm_topk_prob.
void read_gguf_sigmoid_router(ModelConfig& c, const GgufFile& g, const std::string& p);

// llama.cpp's window keys: <p>attention.sliding_window (default_window when absent; 0 or less:
// none) on the layers <p>attention.sliding_window_pattern gives, one flag per layer (true:
// sliding) or a period as set_sliding_window_pattern counts (default_period when absent).
// Returns the window (0: none). Bad values are LoadErrors naming the key.
int64_t read_gguf_sliding_window(ModelConfig& c, const GgufFile& g, const std::string& p,
                                 int64_t default_window, int64_t default_period);

// config.json (+ generation_config.json when present) of a Hugging Face folder.
// `overrides` (vLLM's --hf-overrides, "" for none): a JSON object whose fields replace
// config.json's top-level ones before it is read.
ModelConfig config_from_hf_dir(const std::string& dir, const std::string& overrides = "");
// The same from the files' text: the entry point for fuzzing and tools. `source` names the
// config in errors; generation_config_json may be empty.
ModelConfig config_from_hf_json(const std::string& config_json, const std::string& source,
                                const std::string& generation_config_json = "",
                                const std::string& generation_source = "");
ModelConfig config_from_gguf(const GgufFile& gguf);

}  // namespace vllm::model
