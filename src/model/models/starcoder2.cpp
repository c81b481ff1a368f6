// StarCoder2 (Starcoder2ForCausalLM, GGUF `starcoder2`: StarCoder2 3B / 7B / 15B and their
// instruct tunes): the Llama block with LayerNorms that carry a bias (eps from norm_epsilon),
// biases on q/k/v/o and on an ungated MLP down(gelu(up x + b)) + b (`c_fc` / `c_proj`,
// gelu_pytorch_tanh) with use_bias, rotate-half rotary (llama.cpp's rope NEOX, rows as stored),
// tied embeddings by default. Hugging Face's sliding_window (4096) applies to every layer;
// llama.cpp's starcoder2 graph has none, so a GGUF attends to its whole context as llama.cpp
// does.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void set_biases(ModelConfig& c, bool on) {
  c.layer_norm = true;
  c.layer_norm_bias = true;
  c.attention_bias = on;
  c.o_bias = on;
  c.mlp_bias = on;
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  if (!j.contains("hidden_act") || j["hidden_act"].is_null()) c.hidden_act = Activation::kGeluTanh;
  if (c.hidden_act != Activation::kGeluTanh)
    throw tok::JsonFieldError(
        "hidden_act: StarCoder2's MLP is supported with gelu_pytorch_tanh only");
  c.rms_norm_eps = tok::json_float_or(j, "norm_epsilon", 1e-5, 0, 1);
  if (!j.contains("tie_word_embeddings")) c.tie_word_embeddings = true;  // Starcoder2Config's
  set_biases(c, tok::json_bool_or(j, "use_bias", true));
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string&) {
  c.hidden_act = Activation::kGeluTanh;  // llama.cpp's starcoder2 graph: LLM_FFN_GELU, no gate
  set_biases(c, g.find_tensor("blk.0.attn_q.bias") != nullptr);
}

void hf_weights(WeightStore& s, const ModelConfig& c) {
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".mlp.";
    for (const char* b : {".weight", ".bias"}) {
      s.rename(p + "c_fc" + b, p + "up_proj" + b);
      s.rename(p + "c_proj" + b, p + "down_proj" + b);
    }
  }
}

}  // namespace

const ModelFamily& starcoder2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Starcoder2ForCausalLM"};
    f.gguf_architecture = "starcoder2";
    f.ungated_mlp = true;
    f.hf_sliding_window = ModelFamily::SlidingWindow::kEveryLayer;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.hf_weights = hf_weights;
    f.load_layer = load_llama_layer;  // LayerNorms, q/k/v/o and MLP biases from the flags
    return f;
  }();
  return f;
}

}  // namespace vllm::model
