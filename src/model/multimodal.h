// Multimodal checkpoints served as their text model (Gemma 3 4B-27B, Mistral Small 3.1,
// Qwen2-VL / Qwen2.5-VL / Qwen3-VL): the text model's config and weights under the shared
// names. The vision tower and projector are never read; a request with image parts is refused
// (a 400) before it reaches the model, so every token is text and the text model is the whole
// model.
#pragma once

#include <nlohmann/json_fwd.hpp>

namespace vllm::model {

class WeightStore;

// config.json with every text-model field present: `defaults_json` (the text class's
// transformers defaults, for what a saved config leaves out), then text_config when there is
// one, else the top level. From the top level of a multimodal config only the architecture,
// the token ids (they win over text_config's: Gemma 3 lists <end_of_turn> among its EOS ids
// there) and tie_word_embeddings are taken, the last only when text_config has none: as
// transformers 5, which saves tie_word_embeddings true at the top of Mistral 3's config and
// still unties it by its text_config's false (Qwen3-VL keeps it at the top only).
nlohmann::json text_config_over(const char* defaults_json, const nlohmann::json& config);

// Qwen-VL's multimodal rope (rope_scaling type "mrope", or mrope_section beside another type):
// time, height and width positions each rotate their own section of a head. For text every
// token's three positions are its index, so it is the plain rope of rope_theta; the entry is
// dropped (its sections are still checked to be a list of counts; tok::JsonFieldError if not).
void drop_text_only_mrope(nlohmann::json& text_config);

// Moves the language model's weights to the shared names: language_model.model.* (transformers
// 4.50's multimodal layout) and model.language_model.* (later ones) to model.*,
// language_model.lm_head.* to lm_head.*.
void move_language_model_weights(WeightStore& s);

}  // namespace vllm::model
