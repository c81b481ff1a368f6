// LLM facade: model + tokenizer + chat template + engine from one path.
#include "api/llm.h"

#include <algorithm>

#include "model/gguf.h"
#include "model/tokenizer_loader.h"
#include "tokenizer/chat_template/chat_template.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace vllm::api {

namespace {

class DetokenizerStream : public engine::TextStream {
 public:
  DetokenizerStream(const tok::Tokenizer& t, bool skip_special) : detok_(t, skip_special) {}
  std::string append(int32_t id) override { return detok_.step(id); }

 private:
  tok::IncrementalDetokenizer detok_;
};

}  // namespace

LLM::~LLM() = default;

std::unique_ptr<LLM> LLM::load(const std::string& path, const engine::EngineConfig& cfg) {
  auto llm = std::unique_ptr<LLM>(new LLM());
  llm->path_ = path;
  llm->model_ = model::CausalLM::load(path);
  if (model::GgufFile* g = llm->model_->gguf_mut()) {
    // Reuse the parsed header, moving the vocabulary out of it rather than copying.
    llm->tokenizer_ = model::take_tokenizer_from_gguf(*g);
    llm->model_->drop_tokenizer_metadata();
  } else {
    llm->tokenizer_ = model::load_tokenizer(path);
  }
  const auto& mc = llm->model_->config();
  for (int64_t e : mc.eos_token_ids) llm->eos_ids_.push_back(static_cast<int32_t>(e));
  for (int32_t e : llm->tokenizer_->stop_ids())
    if (std::find(llm->eos_ids_.begin(), llm->eos_ids_.end(), e) == llm->eos_ids_.end())
      llm->eos_ids_.push_back(e);
  const std::string& tmpl = llm->tokenizer_->chat_template();
  llm->chat_template_ = std::make_unique<tok::ChatTemplate>(
      tmpl.empty() ? std::string(tok::ChatTemplate::chatml_fallback()) : tmpl);
  llm->executor_ = std::make_unique<engine::CpuModelExecutor>(*llm->model_);
  const tok::Tokenizer* t = llm->tokenizer_.get();
  engine::TextStreamFactory factory = [t](std::span<const int32_t>, bool skip_special) {
    return std::make_unique<DetokenizerStream>(*t, skip_special);
  };
  std::optional<int32_t> eos;
  if (!llm->eos_ids_.empty()) eos = llm->eos_ids_.front();
  llm->engine_ = std::make_unique<engine::LLMEngine>(cfg, *llm->executor_, factory, eos);
#if defined(__GLIBC__)
  // Loading builds and frees large temporaries (the parsed vocabulary and merges). Hand their
  // pages back now, before the first forward pass touches the mapped weights, so they do not
  // add to the process's peak resident memory.
  malloc_trim(0);
#endif
  return llm;
}

engine::SamplingParams LLM::with_model_stops(engine::SamplingParams p) const {
  if (p.ignore_eos) return p;
  for (int32_t e : eos_ids_)
    if (std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), e) == p.stop_token_ids.end())
      p.stop_token_ids.push_back(e);
  return p;
}

std::string LLM::apply_chat_template(const nlohmann::ordered_json& messages,
                                     const nlohmann::ordered_json& tools,
                                     bool add_generation_prompt,
                                     const nlohmann::ordered_json& kwargs) const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  if (kwargs.is_object())
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) ctx[it.key()] = it.value();
  ctx["messages"] = messages;
  if (!tools.is_null()) ctx["tools"] = tools;
  ctx["add_generation_prompt"] = add_generation_prompt;
  ctx["bos_token"] = tokenizer_->bos_token();
  ctx["eos_token"] = tokenizer_->eos_token();
  return chat_template_->render_ordered(ctx);
}

}  // namespace vllm::api
