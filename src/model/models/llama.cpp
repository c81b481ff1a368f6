// Llama family: Llama 2/3 (incl. llama3 rope scaling), Mistral, SmolLM2, and Qwen2
// (the same block with q/k/v bias, which the config turns on).
#include "model/causal_lm.h"

namespace vllm::model {

LayerWeights load_llama_layer(const WeightStore& s, const ModelConfig& c, int64_t i) {
  LayerWeights w;
  w.attn = load_attention(s, c, i);
  w.mlp = load_mlp(s, c, i);
  return w;
}

}  // namespace vllm::model
