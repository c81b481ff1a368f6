// ModelFamily: everything one architecture family contributes, declared by one file under
// models/ and listed in models/registry.cpp. The loaders (config.cpp, gguf_weights.cpp,
// causal_lm.cpp) look a family up here and never name one themselves.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/layers.h"

namespace vllm::model {

class GgufFile;
class WeightStore;
struct ModelConfig;

struct ModelFamily {
  // config.json "architectures"[0] values; the first is the canonical name a GGUF maps to.
  std::vector<std::string> hf_architectures;
  // GGUF general.architecture ("" when the family has no GGUF form).
  std::string gguf_architecture;
  // Further general.architecture values read the same way, under their own key prefix (a
  // multimodal model's text part: qwen2vl).
  std::vector<std::string> gguf_aliases;

  // Flags the shared forward reads (copied into ModelConfig by the config readers).
  bool qkv_bias = false;  // q/k/v projections carry a bias (always, whatever the config says)
  bool qk_norm = false;   // per-head RMSNorm on q and k before RoPE
  bool moe = false;       // may have sparse MoE layers (else num_experts is forced to 0)
  bool gguf_rope_interleaved = false;  // llama.cpp's converter permuted the q/k rows (rope NORM)
  // The MLP is down(relu(up x)^2) with no gate (Activation::kRelu2, Arcee); hidden_act relu2
  // on any other family is refused, its MLP being gated (or its experts SwiGLU).
  bool ungated_mlp = false;
  // How config.json's sliding window reaches the layers (Hugging Face's rule for the class):
  // kNone: never (the class has no sliding window); kEveryLayer: `sliding_window` on every
  // layer, or on the "sliding_attention" entries of `layer_types` (Mistral); kQwen: only with
  // `use_sliding_window`, on layer_types' sliding entries or else layers >= max_window_layers;
  // kPattern: `sliding_window` (4096 when absent) on layer_types' sliding entries or else every
  // layer but each `sliding_window_pattern`-th (default sliding_window_period; Gemma).
  enum class SlidingWindow { kNone, kEveryLayer, kQwen, kPattern };
  SlidingWindow hf_sliding_window = SlidingWindow::kNone;
  int sliding_window_period = 0;

  // config.json quantization_config.quant_method values the family's loader reads (GPT-OSS:
  // mxfp4); any other quantization_config is refused by name.
  std::vector<std::string> hf_quant_methods;

  // GGUF per-layer tensor names beyond the shared table (gguf_weights.cpp: Llama's, the q/k/v
  // biases and q/k norms, the MoE router and experts): {"post_ffw_norm.weight",
  // "post_feedforward_layernorm.weight"} maps blk.N.<first> to model.layers.N.<second>.
  std::vector<std::pair<std::string, std::string>> gguf_layer_tensors;

  // Rewrites config.json before the shared fields are read (nullptr: none): Gemma 3's
  // multimodal checkpoints keep the text model's fields, defaults omitted, under text_config.
  nlohmann::json (*hf_config_json)(const nlohmann::json& config) = nullptr;
  // Config quirks after the shared fields are read (nullptr: none).
  void (*hf_config)(ModelConfig& c, const nlohmann::json& config) = nullptr;
  // GGUF metadata keys of the family ("<arch>." prefix in `p`) after the shared ones.
  void (*gguf_config)(ModelConfig& c, const GgufFile& g, const std::string& p) = nullptr;
  // Rewrites a Hugging Face folder's weights to the shared names (renames, fused-tensor
  // splits) before any layer is loaded (nullptr: the folder already uses them).
  void (*hf_weights)(WeightStore& s, const ModelConfig& c) = nullptr;
  // The same for a GGUF's weights, after the shared and the family's name tables (DeepSeek's
  // attn_k_b / attn_v_b joined back into kv_b).
  void (*gguf_weights)(WeightStore& s, const ModelConfig& c) = nullptr;
  // Binds one decoder layer's weights.
  LayerWeights (*load_layer)(const WeightStore& s, const ModelConfig& c, int64_t layer) = nullptr;
};

// Every family, in registry order (models/registry.cpp).
const std::vector<const ModelFamily*>& model_families();
// `architecture`'s family; a *ForSequenceClassification class is its *ForCausalLM's.
const ModelFamily* family_for_hf(const std::string& architecture);
// A *ForSequenceClassification class: a decoder with a classifier head (score.weight) in place of
// the LM head (vLLM's as_seq_cls_model).
bool is_sequence_classifier(const std::string& architecture);
const ModelFamily* family_for_gguf(const std::string& gguf_architecture);
// "A, B, C": for error messages.
std::string supported_hf_architectures();
std::string supported_gguf_architectures();

}  // namespace vllm::model
