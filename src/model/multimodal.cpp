#include "model/multimodal.h"

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/weight_store.h"
#include "tokenizer/json_number.h"

namespace vllm::model {

nlohmann::json text_config_over(const char* defaults_json, const nlohmann::json& j) {
  nlohmann::json out = nlohmann::json::parse(defaults_json);
  const bool multimodal = j.contains("text_config") && j["text_config"].is_object();
  if (multimodal) out.update(j["text_config"]);
  for (const auto& [k, v] : j.items())
    if (!multimodal || k == "architectures" || k == "bos_token_id" || k == "eos_token_id" ||
        k == "pad_token_id" ||
        (k == "tie_word_embeddings" && !j["text_config"].contains("tie_word_embeddings")))
      out[k] = v;
  out.erase("text_config");
  out.erase("vision_config");
  return out;
}

void drop_text_only_mrope(nlohmann::json& j) {
  if (!j.contains("rope_scaling") || !j["rope_scaling"].is_object()) return;
  const nlohmann::json& rs = j["rope_scaling"];
  const std::string type = rs.value("rope_type", rs.value("type", std::string()));
  if (type != "mrope" && !rs.contains("mrope_section")) return;
  const nlohmann::json* sec = rs.contains("mrope_section") ? &rs["mrope_section"] : nullptr;
  if (sec && (!sec->is_array() || sec->empty()))
    throw tok::JsonFieldError("rope_scaling.mrope_section = " + sec->dump() +
                              " (must be a list of rotary-pair counts)");
  if (sec)
    for (const auto& n : *sec)
      if (!n.is_number_integer() || n.get<int64_t>() < 0)
        throw tok::JsonFieldError("rope_scaling.mrope_section = " + sec->dump() +
                                  " (must be a list of rotary-pair counts)");
  if (type == "mrope" || type == "default" || type.empty())
    j["rope_scaling"] = nullptr;  // another type (scaling of its own) stays, to be read or refused
  else
    j["rope_scaling"].erase("mrope_section");
}

void move_language_model_weights(WeightStore& s) {
  std::vector<std::pair<std::string, std::string>> moves;
  for (const auto& [name, t] : s.all())
    for (const auto& [from, to] :
         {std::pair<const char*, const char*>{"language_model.model.", "model."},
          {"model.language_model.", "model."},
          {"language_model.lm_head.", "lm_head."}})
      if (name.rfind(from, 0) == 0) moves.emplace_back(name, to + name.substr(strlen(from)));
  for (const auto& [from, to] : moves) s.rename(from, to);
}

}  // namespace vllm::model
