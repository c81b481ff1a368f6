// GGUF tensors -> WeightStore under Hugging Face names.
#pragma once

#include "model/weight_store.h"

namespace vllm::model {

class GgufFile;
void load_gguf_weights(const GgufFile& g, WeightStore& store);

}  // namespace vllm::model
