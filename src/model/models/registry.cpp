// The family registry: the one list of families (each declared in its own file here), and
// the lookups the loaders use. A new family is one file plus one line below.
#include <algorithm>

#include "model/family.h"

namespace vllm::model {

const ModelFamily& llama_family();
const ModelFamily& qwen2_family();
const ModelFamily& qwen3_family();
const ModelFamily& qwen3_moe_family();
const ModelFamily& internlm2_family();
const ModelFamily& gemma1_family();
const ModelFamily& hunyuan_dense_family();
const ModelFamily& olmo3_family();
const ModelFamily& stablelm_family();
const ModelFamily& phi2_family();
const ModelFamily& starcoder2_family();
const ModelFamily& deepseek_v2_family();
const ModelFamily& deepseek_v3_family();
const ModelFamily& gemma2_family();
const ModelFamily& gemma3_family();
const ModelFamily& phi3_family();
const ModelFamily& smollm3_family();
const ModelFamily& granite_family();
const ModelFamily& olmo2_family();
const ModelFamily& glm4_family();
const ModelFamily& cohere_family();
const ModelFamily& cohere2_family();
const ModelFamily& exaone4_family();
const ModelFamily& gpt_oss_family();
const ModelFamily& qwen2_moe_family();
const ModelFamily& olmoe_family();
const ModelFamily& granitemoe_family();
const ModelFamily& glm4_moe_family();
const ModelFamily& minimax_m2_family();
const ModelFamily& ernie4_5_family();
const ModelFamily& ernie4_5_moe_family();
const ModelFamily& seed_oss_family();
const ModelFamily& arcee_family();

const std::vector<const ModelFamily*>& model_families() {
  static const std::vector<const ModelFamily*> all = {
      &llama_family(),       &qwen2_family(),      &qwen3_family(),         &qwen3_moe_family(),
      &internlm2_family(),   &gemma1_family(),     &gemma2_family(),        &gemma3_family(),
      &phi3_family(),        &smollm3_family(),    &granite_family(),       &olmo2_family(),
      &glm4_family(),        &cohere_family(),     &cohere2_family(),       &exaone4_family(),
      &gpt_oss_family(),     &qwen2_moe_family(),  &olmoe_family(),         &granitemoe_family(),
      &glm4_moe_family(),    &minimax_m2_family(), &ernie4_5_family(),      &ernie4_5_moe_family(),
      &seed_oss_family(),    &arcee_family(),      &hunyuan_dense_family(), &olmo3_family(),
      &stablelm_family(),    &phi2_family(),       &starcoder2_family(),    &deepseek_v2_family(),
      &deepseek_v3_family(),
  };
  return all;
}

namespace {
const std::string kSeqCls = "ForSequenceClassification";
}  // namespace

bool is_sequence_classifier(const std::string& architecture) {
  return architecture.size() > kSeqCls.size() &&
         architecture.compare(architecture.size() - kSeqCls.size(), kSeqCls.size(), kSeqCls) == 0;
}

const ModelFamily* family_for_hf(const std::string& architecture) {
  // vLLM's as_seq_cls_model: a *ForSequenceClassification checkpoint is its *ForCausalLM
  // decoder with a classifier head (score.weight) in place of the LM head.
  const std::string arch =
      is_sequence_classifier(architecture)
          ? architecture.substr(0, architecture.size() - kSeqCls.size()) + "ForCausalLM"
          : architecture;
  for (const ModelFamily* f : model_families())
    if (std::find(f->hf_architectures.begin(), f->hf_architectures.end(), arch) !=
        f->hf_architectures.end())
      return f;
  return nullptr;
}

const ModelFamily* family_for_gguf(const std::string& gguf_architecture) {
  if (gguf_architecture.empty()) return nullptr;
  for (const ModelFamily* f : model_families())
    if (f->gguf_architecture == gguf_architecture ||
        std::find(f->gguf_aliases.begin(), f->gguf_aliases.end(), gguf_architecture) !=
            f->gguf_aliases.end())
      return f;
  return nullptr;
}

std::string supported_hf_architectures() {
  std::string s;
  for (const ModelFamily* f : model_families())
    for (const auto& a : f->hf_architectures) s += (s.empty() ? "" : ", ") + a;
  return s;
}

std::string supported_gguf_architectures() {
  std::string s;
  for (const ModelFamily* f : model_families()) {
    if (!f->gguf_architecture.empty()) s += (s.empty() ? "" : ", ") + f->gguf_architecture;
    for (const auto& a : f->gguf_aliases) s += ", " + a;
  }
  return s;
}

}  // namespace vllm::model
