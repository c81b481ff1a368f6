// Seed-OSS (SeedOssForCausalLM, GGUF `seed_oss`: ByteDance Seed-OSS-36B): the Llama block with
// q/k/v biases (attention_bias, true by default) and rotate-half rotary; llama.cpp names the
// pre-MLP norm post_attention_norm. A bias on o_proj (attention_out_bias) or on the MLP
// (mlp_bias) is refused by name, as is a GGUF with attn_output.bias.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  c.attention_bias = tok::json_bool_or(j, "attention_bias", true);  // SeedOssConfig's default
  for (const char* key : {"attention_out_bias", "mlp_bias"})
    if (tok::json_bool_or(j, key, false))
      throw tok::JsonFieldError(std::string(key) + " = true: that bias is not supported");
}

void gguf_config(ModelConfig& c, const GgufFile& g, const std::string&) {
  if (g.find_tensor("blk.0.attn_output.bias"))
    throw LoadError(g.path(),
                    "tensor 'blk.0.attn_output.bias': Seed-OSS with an o_proj bias "
                    "(attention_out_bias) is not supported");
  c.attention_bias = g.find_tensor("blk.0.attn_q.bias") != nullptr;
}

}  // namespace

const ModelFamily& seed_oss_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"SeedOssForCausalLM"};
    f.gguf_architecture = "seed_oss";
    f.gguf_layer_tensors = {{"post_attention_norm.weight", "post_attention_layernorm.weight"}};
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_llama_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
