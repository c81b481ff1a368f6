// Arcee (ArceeForCausalLM, GGUF `arcee`: Arcee's AFM-4.5B): the Llama block with an ungated MLP,
// down(relu(up x)^2) (hidden_act relu2, ArceeConfig's default; Activation::kRelu2): the layers
// have no gate_proj. llama.cpp's converter permutes the q/k rows as Llama's (rope NORM). Another
// activation on this MLP, or an MLP bias (mlp_bias), is refused by name.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  if (!j.contains("hidden_act") || j["hidden_act"].is_null()) c.hidden_act = Activation::kRelu2;
  if (c.hidden_act != Activation::kRelu2)
    throw tok::JsonFieldError("hidden_act: Arcee's ungated MLP is supported with relu2 only");
  if (tok::json_bool_or(j, "mlp_bias", false))
    throw tok::JsonFieldError("mlp_bias = true: that bias is not supported");
}

void gguf_config(ModelConfig& c, const GgufFile&, const std::string&) {
  c.hidden_act = Activation::kRelu2;  // llama.cpp's arcee graph: LLM_FFN_RELU_SQR, no gate
}

}  // namespace

const ModelFamily& arcee_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"ArceeForCausalLM"};
    f.gguf_architecture = "arcee";
    f.gguf_rope_interleaved = true;
    f.ungated_mlp = true;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_llama_layer;  // no gate_proj (ungated_mlp)
    return f;
  }();
  return f;
}

}  // namespace vllm::model
