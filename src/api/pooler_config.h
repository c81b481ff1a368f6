// vLLM's --runner / --convert / --pooler-config for an embedding (pooling) model: whether a
// model is served for /v1/embeddings instead of generation, and how its final hidden states
// become one vector (the pooling type, whether it is normalized, Matryoshka dimensions). Read
// from the flags, the model's Sentence Transformers files (modules.json, its Pooling module's
// config.json), config.json (matryoshka_dimensions / is_matryoshka) and a GGUF's pooling_type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampling_params.h"

namespace vllm::model {
class CausalLM;
}

namespace vllm::api {

struct PoolerSetup {
  engine::PoolingType type = engine::PoolingType::kLast;
  // vLLM's use_activation default for embeddings (L2 normalization): a request's
  // use_activation overrides it.
  bool normalize = true;
  // --pooler-config dimensions: the default of requests that bring none (0: all).
  int32_t dimensions = 0;
  int32_t hidden_size = 0;
  // config.json matryoshka_dimensions / is_matryoshka: whether a request may ask for
  // `dimensions`, and which (empty: any in [1, hidden_size]).
  bool is_matryoshka = false;
  std::vector<int32_t> matryoshka_dimensions;
  // Where each setting came from, for the start-up line.
  std::string source;
};

struct PoolerFlags {
  std::string runner = "auto";   // auto, generate, pooling (vLLM's --runner)
  std::string convert = "auto";  // auto, none, embed (vLLM's --convert)
  std::string task;              // the older --task: auto, generate, embed, embedding
  std::string pooler_config;     // --pooler-config: a JSON object, or ""
  std::string hf_overrides;      // --hf-overrides (config.json fields for matryoshka_*)
};

// The model's pooler as vLLM 0.33 resolves it, or nullopt when it is served for generation.
// `folder`: the model's folder (its Sentence Transformers files, config.json); `m` the loaded
// model (architecture, hidden size, a GGUF's metadata). --runner auto picks pooling for a
// Sentence Transformers folder (modules.json with a Pooling module), as vLLM does. Throws
// std::invalid_argument naming the flag or file for whatever cannot be honoured: --convert
// classify, token pooling (ALL / STEP), a Sentence Transformers Dense projector, max / weighted
// pooling, a malformed --pooler-config.
std::optional<PoolerSetup> resolve_pooler(const PoolerFlags& flags, const std::string& folder,
                                          const model::CausalLM& m);

}  // namespace vllm::api
