// SmolLM3: the Llama block with NoPE layers: every no_rope_layer_interval-th layer (4: layers
// 3, 7, 11, ...) applies no rotary embedding, so its attention sees no positions at all. Hugging
// Face lists the layers in no_rope_layers (1 = rope, 0 = none); llama.cpp's `smollm3` has no key
// for it and fixes the interval at 4. The GGUF's q/k rows are permuted as for Llama.
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "model/family.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

namespace {

void every_interval(ModelConfig& c, int64_t interval) {
  c.no_rope.assign(static_cast<size_t>(c.num_layers), false);
  for (int64_t i = 0; i < c.num_layers; ++i) c.no_rope[i] = (i + 1) % interval == 0;
}

void hf_config(ModelConfig& c, const nlohmann::json& j) {
  if (j.contains("no_rope_layers") && j["no_rope_layers"].is_array()) {
    const auto& l = j["no_rope_layers"];
    if (static_cast<int64_t>(l.size()) != c.num_layers)
      throw tok::JsonFieldError("no_rope_layers has " + std::to_string(l.size()) + " entries for " +
                                std::to_string(c.num_layers) + " layers");
    c.no_rope.clear();
    for (const auto& x : l) c.no_rope.push_back(tok::json_int(x, "no_rope_layers", 0, 1) == 0);
    return;
  }
  every_interval(c, tok::json_int_or(j, "no_rope_layer_interval", 4, 1, limits::kMaxLayers));
}

void gguf_config(ModelConfig& c, const GgufFile&, const std::string&) { every_interval(c, 4); }

}  // namespace

const ModelFamily& smollm3_family() {
  static const ModelFamily f = [] {
    ModelFamily f;
    f.hf_architectures = {"SmolLM3ForCausalLM"};
    f.gguf_architecture = "smollm3";
    f.gguf_rope_interleaved = true;
    f.hf_sliding_window = ModelFamily::SlidingWindow::kQwen;
    f.hf_config = hf_config;
    f.gguf_config = gguf_config;
    f.load_layer = load_llama_layer;
    return f;
  }();
  return f;
}

}  // namespace vllm::model
