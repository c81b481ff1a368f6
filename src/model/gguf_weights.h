// GGUF tensors -> WeightStore under Hugging Face names.
#pragma once

#include "model/weight_store.h"

namespace vllm::model {

class GgufFile;
struct ModelFamily;
// The shared Llama tensor names plus the family's own (ModelFamily::gguf_layer_tensors).
void load_gguf_weights(const GgufFile& g, const ModelFamily& family, WeightStore& store);

}  // namespace vllm::model
