// Qwen2: the Llama block with a bias on the q/k/v projections (always present, whatever
// config.json's attention_bias says).
#include "model/causal_lm.h"
#include "model/family.h"

namespace vllm::model {

const ModelFamily& qwen2_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"Qwen2ForCausalLM"};
    f.gguf_architecture = "qwen2";
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.qkv_bias = true;
    f.gguf_layer_tensors = {{"attn_q.bias", "self_attn.q_proj.bias"},
                            {"attn_k.bias", "self_attn.k_proj.bias"},
                            {"attn_v.bias", "self_attn.v_proj.bias"}};
    f.load_layer = load_dense_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
