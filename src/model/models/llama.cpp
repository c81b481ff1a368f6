// Llama family: Llama 2/3 (incl. llama3 rope scaling), Mistral, SmolLM2. The shared decoder
// block with no extras; llama.cpp's converter permutes the q/k rows for its interleaved RoPE.
#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"

namespace vllm::model {

namespace {

// Mixtral's GGUF form is `llama` with experts: refused by name rather than as a missing
// dense-FFN tensor.
void gguf_config(ModelConfig& c, const GgufFile& g, const std::string& p) {
  if (g.has(p + "expert_count") && g.get_int(p + "expert_count") > 0)
    throw LoadError(g.path(),
                    p + "expert_count = " + std::to_string(g.get_int(p + "expert_count")) +
                        ": Mixtral-style mixture-of-experts Llama models are not "
                        "supported (supported MoE: qwen3moe)");
  (void)c;
}

}  // namespace

const ModelFamily& llama_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"LlamaForCausalLM", "MistralForCausalLM"};
    f.gguf_architecture = "llama";
    f.gguf_rope_interleaved = true;
    f.hf_sliding_window = ModelFamily::SlidingWindow::kEveryLayer;
    f.gguf_config = gguf_config;
    f.load_layer = load_dense_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
