// Llama family: Llama 2/3 (incl. llama3 rope scaling), Mistral, SmolLM2. The shared decoder
// block with no extras; llama.cpp's converter permutes the q/k rows for its interleaved RoPE.
#include "model/causal_lm.h"
#include "model/family.h"

namespace vllm::model {

const ModelFamily& llama_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"LlamaForCausalLM", "MistralForCausalLM"};
    f.gguf_architecture = "llama";
    f.gguf_rope_interleaved = true;
    f.load_layer = load_dense_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
