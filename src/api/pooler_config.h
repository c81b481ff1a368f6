// vLLM's --runner / --convert / --pooler-config for an embedding (pooling) model: whether a
// model is served for /v1/embeddings instead of generation, and how its final hidden states
// become one vector (the pooling type, whether it is normalized, Matryoshka dimensions). Read
// from the flags, the model's Sentence Transformers files (modules.json, its Pooling module's
// config.json), config.json (matryoshka_dimensions / is_matryoshka) and a GGUF's pooling_type.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/sampling_params.h"

namespace vllm::model {
class CausalLM;
}
namespace vllm::tok {
class Tokenizer;
}

namespace vllm::api {

struct PoolerSetup {
  // vLLM's pooling task: embed (vectors: /v1/embeddings, and /score, /rerank by cosine) or
  // classify (a sequence classifier: /classify, and /score, /rerank with one label).
  enum class Task { kEmbed, kClassify };
  Task task = Task::kEmbed;
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
  // classify: the head, f32 rows [num_labels][hidden_size] (the checkpoint's score.weight, or
  // rows of the LM head: classifier_from_token), config.json's id2label ("" where a label has
  // no name) and the activation use_activation applies (vLLM's get_act_fn): kClassify is
  // sigmoid for one label and softmax for more, kSigmoid every label on its own (a multi-label
  // problem), kIdentity none (regression).
  enum class Activation { kClassify, kSigmoid, kIdentity };
  std::vector<float> classifier;
  int32_t num_labels = 0;
  std::vector<std::string> labels;
  Activation activation = Activation::kClassify;
  // Cross-encoder scoring: the query and document tokenized as a pair (true, vLLM's default
  // for checkpoints with a score head) or as one concatenated string (false: an LLM converted
  // into a reranker through classifier_from_token).
  bool use_sep_token = true;
  // A Sentence Transformers CrossEncoder whose Transformer module takes messages: its pairs are
  // rendered through the tokenizer's chat template with these saved kwargs (its
  // processing_kwargs.chat_template), unless --chat-template names another.
  bool saved_score_template = false;
  nlohmann::ordered_json saved_score_kwargs = nlohmann::ordered_json::object();
  // Where each setting came from, for the start-up line.
  std::string source;

  // classify: the logits of a pooled hidden state, activated when `activate`.
  std::vector<float> classify(const std::vector<float>& pooled, bool activate) const;
  // The score API is served for embedding models and one-label classifiers (vLLM's
  // enable_scoring_api).
  bool serves_score() const { return task == Task::kEmbed || num_labels == 1; }
};

struct PoolerFlags {
  std::string runner = "auto";   // auto, generate, pooling (vLLM's --runner)
  std::string convert = "auto";  // auto, none, embed, classify (vLLM's --convert)
  std::string task;           // the older --task: auto, generate, embed, embedding, classify, score
  std::string pooler_config;  // --pooler-config: a JSON object, or ""
  std::string hf_overrides;   // --hf-overrides (config.json fields for matryoshka_*)
};

// The model's pooler as vLLM 0.33 resolves it, or nullopt when it is served for generation.
// `folder`: the model's folder (its Sentence Transformers files, config.json); `m` the loaded
// model (architecture, hidden size, a GGUF's metadata, a classifier's weights), `tok` its
// tokenizer (classifier_from_token's tokens). --runner auto picks pooling for a Sentence
// Transformers folder (modules.json with a Pooling module) and for a *ForSequenceClassification
// checkpoint, as vLLM does; --convert classify (or --hf-overrides' architectures) makes a
// classifier of a *ForCausalLM, its head from the checkpoint's score.weight or from LM-head rows
// (classifier_from_token with method from_2_way_softmax / no_post_processing, or
// is_original_qwen3_reranker). Throws std::invalid_argument naming the flag or file for whatever
// cannot be honoured: token pooling (ALL / STEP), a Sentence Transformers Dense projector, max /
// weighted pooling, a classifier without its head, a malformed --pooler-config.
std::optional<PoolerSetup> resolve_pooler(const PoolerFlags& flags, const std::string& folder,
                                          const model::CausalLM& m,
                                          const tok::Tokenizer* tok = nullptr);

// For the commands that only generate (vllm generate, vllm bench): std::invalid_argument when
// the flags ask for a pooling model, or (once loaded) when the model is a sequence classifier.
void refuse_pooling_flags(const PoolerFlags& flags, const char* command);
void refuse_classifier(const char* command, const model::CausalLM& m);

}  // namespace vllm::api
