// LLM facade: model + tokenizer + chat template + engine from one path.
#include "api/llm.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "api/model_resolver.h"
#include "engine/structured_output/structured_output.h"
#include "model/gguf.h"
#include "model/load_error.h"
#include "model/tokenizer_loader.h"
#include "tokenizer/chat_template/chat_template.h"
#if VLLM_HAVE_CUDA
#include "vt/cuda/executor_factory.h"
#endif

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace vllm::api {

namespace {

// Ids past the tokenizer's vocabulary (the padded embedding rows of Qwen and others, which
// random or fine-tuned weights do emit) stand for no text: Hugging Face decodes them to "".
class DetokenizerStream : public engine::TextStream {
 public:
  DetokenizerStream(const tok::Tokenizer& t, bool skip_special)
      : detok_(t, skip_special), n_(t.vocab_size()) {}
  std::string append(int32_t id) override { return id < n_ ? detok_.step(id) : std::string(); }

 private:
  tok::IncrementalDetokenizer detok_;
  int32_t n_;
};

// The executor --device names; refuses what that device cannot honour.
std::unique_ptr<engine::ModelExecutor> make_executor(model::CausalLM& m,
                                                     const engine::EngineConfig& cfg) {
  if (cfg.device == "cpu") return std::make_unique<engine::CpuModelExecutor>(m);
  if (cfg.device != "cuda")
    throw std::invalid_argument("--device " + cfg.device + ": unknown device (cpu or cuda)");
#if VLLM_HAVE_CUDA
  return vt::cuda::make_cuda_executor(m, 0, std::max(cfg.max_model_len, 0));
#else
  throw std::invalid_argument(
      "--device cuda: this build of vllm.cpp has no CUDA backend (build it with "
      "-DVLLM_BUILD_CUDA=ON, e.g. scripts/build_cuda.sh; see docs/CUDA.md), use --device cpu");
#endif
}

}  // namespace

LLM::~LLM() = default;

std::unique_ptr<LLM> LLM::load(const std::string& path, const engine::EngineConfig& cfg,
                               const LoadOptions& opts) {
  auto llm = std::unique_ptr<LLM>(new LLM());
  llm->path_ = path;
  model::LoadOptions mo;
  mo.packed_cache_dir = packed_weights_cache_dir();
  // --dtype (EngineConfig::bf16_activations); auto rounds unless VT_BF16_ACTIVATIONS says.
  mo.bf16_activations = cfg.bf16_activations;
  if (!mo.bf16_activations && std::getenv("VT_BF16_ACTIVATIONS") == nullptr)
    mo.bf16_activations = true;
  mo.disable_sliding_window = cfg.disable_sliding_window;
  mo.max_model_len = std::max(cfg.max_model_len, 0);  // -1 (auto): the model's own
  mo.hf_overrides = cfg.hf_overrides;
  llm->model_ = model::CausalLM::load(path, vt::ThreadPool::global(), mo);
  if (!opts.tokenizer.empty()) {
    llm->tokenizer_ = model::load_tokenizer(opts.tokenizer);
    llm->model_->drop_tokenizer_metadata();
  } else if (model::GgufFile* g = llm->model_->gguf_mut()) {
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
  try {
    llm->chat_template_ = std::make_unique<tok::ChatTemplate>(
        tmpl.empty() ? std::string(tok::ChatTemplate::chatml_fallback()) : tmpl);
  } catch (const tok::ChatTemplateError& e) {
    // The template is parsed here, at load, so a broken one stops the model from loading
    // (rather than failing every request); say which file it came from.
    const std::string origin = path + " (" + llm->tokenizer_->chat_template_source() + ")";
    throw model::LoadError(origin, std::string("cannot load the chat template: ") + e.what());
  }
  llm->executor_ = make_executor(*llm->model_, cfg);
  llm->device_ = cfg.device;
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

const LLM::LoraModule& LLM::add_lora(const std::string& name, const std::string& path,
                                     const model::LoraLoadOptions& opts,
                                     const std::string& base_model_name) {
  if (name.empty()) throw std::invalid_argument("a LoRA adapter needs a name");
  if (lora_by_name(name))
    throw std::invalid_argument("LoRA adapter name '" + name + "' is given twice");
  if (device_ != "cpu")
    throw std::invalid_argument("LoRA adapters run on the CPU backend only (--device " + device_ +
                                " has no LoRA kernels yet)");
  // vLLM's lora_int_id: 1, 2, ... in the order the adapters are given.
  const auto id = static_cast<int32_t>(loras_.size()) + 1;
  model_->add_lora(id, name, path, opts);
  loras_.push_back(LoraModule{name, path, base_model_name, id});
  return loras_.back();
}

const LLM::LoraModule* LLM::lora_by_name(const std::string& name) const {
  for (const auto& l : loras_)
    if (l.name == name) return &l;
  return nullptr;
}

std::string LLM::decode(const std::vector<int32_t>& ids, bool skip_special_tokens) const {
  const int32_t model_vocab = static_cast<int32_t>(model_->config().vocab_size);
  const int32_t n = tokenizer_->vocab_size();
  std::vector<int32_t> text_ids;
  text_ids.reserve(ids.size());
  for (int32_t id : ids) {
    if (id < 0 || id >= std::max(n, model_vocab))
      throw std::out_of_range("token id " + std::to_string(id) + " is out of range [0, " +
                              std::to_string(std::max(n, model_vocab)) + ")");
    if (id < n) text_ids.push_back(id);
  }
  return tokenizer_->decode(text_ids, skip_special_tokens);
}

engine::so::GrammarCompiler& LLM::grammar_compiler() const {
  std::call_once(grammar_once_, [this] {
    std::vector<int32_t> stops = tokenizer_->stop_ids();
    for (int32_t e : eos_ids_)
      if (e < tokenizer_->vocab_size() && std::find(stops.begin(), stops.end(), e) == stops.end())
        stops.push_back(e);
    engine::so::CompilerConfig cfg;
    cfg.compact_json = compact_json_;
    grammar_compiler_ = std::make_unique<engine::so::GrammarCompiler>(
        engine::so::VocabIndex::build(*tokenizer_, std::move(stops)), cfg);
  });
  return *grammar_compiler_;
}

engine::SamplingParams LLM::with_model_stops(engine::SamplingParams p) const {
  if (p.ignore_eos) return p;
  for (int32_t e : eos_ids_)
    if (std::find(p.stop_token_ids.begin(), p.stop_token_ids.end(), e) == p.stop_token_ids.end())
      p.stop_token_ids.push_back(e);
  return p;
}

void LLM::set_chat_template(const std::string& source) {
  chat_template_ = std::make_unique<tok::ChatTemplate>(source);
}

std::vector<std::vector<int32_t>> LLM::bad_words_token_ids(
    const std::vector<std::string>& words) const {
  std::vector<std::vector<int32_t>> out;
  for (const std::string& w : words) {
    const std::string word = w.substr(std::min(w.size(), w.find_first_not_of(" \t\n\r")));
    std::vector<int32_t> plain = tokenizer_->encode(word, false);
    if (plain.empty()) continue;
    std::vector<int32_t> spaced = tokenizer_->encode(" " + word, false);
    const bool distinct = !spaced.empty() && spaced[0] != plain[0] && spaced.size() == plain.size();
    out.push_back(std::move(plain));
    if (distinct) out.push_back(std::move(spaced));
  }
  return out;
}

std::string LLM::apply_chat_template(const nlohmann::ordered_json& messages,
                                     const nlohmann::ordered_json& tools,
                                     bool add_generation_prompt,
                                     const nlohmann::ordered_json& kwargs,
                                     const tok::ChatTemplate* tmpl,
                                     bool continue_final_message) const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  if (kwargs.is_object())
    for (auto it = kwargs.begin(); it != kwargs.end(); ++it) ctx[it.key()] = it.value();
  ctx["messages"] = messages;
  if (!tools.is_null()) ctx["tools"] = tools;
  ctx["add_generation_prompt"] = add_generation_prompt;
  ctx["bos_token"] = tokenizer_->bos_token();
  ctx["eos_token"] = tokenizer_->eos_token();
  std::string text = (tmpl ? *tmpl : *chat_template_).render_ordered(ctx);
  if (!continue_final_message) return text;
  // Cut right after the last occurrence of the final message's content (stripped of outer
  // whitespace when the template trims it), dropping the end-of-turn markup after it.
  // String content, or (the "openai" content format) the text of its parts.
  const std::string content = content_text(messages.back()["content"]);
  size_t at = content.empty() ? std::string::npos : text.rfind(content);
  size_t len = content.size();
  if (at == std::string::npos) {
    const size_t b = content.find_first_not_of(" \t\n\r");
    const size_t e = content.find_last_not_of(" \t\n\r");
    const std::string stripped = b == std::string::npos ? "" : content.substr(b, e - b + 1);
    at = stripped.empty() ? std::string::npos : text.rfind(stripped);
    len = stripped.size();
  }
  if (at == std::string::npos)
    throw std::invalid_argument(
        "continue_final_message is set but the final message does not appear in the chat "
        "after applying the chat template (is its content empty, or does the template change "
        "it?)");
  text.resize(at + len);
  return text;
}

std::string content_text(const nlohmann::ordered_json& content) {
  if (content.is_string()) return content.get<std::string>();
  std::string text;
  if (content.is_array())
    for (const auto& part : content) {
      if (!text.empty()) text += "\n";
      text += part.value("text", "");
    }
  return text;
}

}  // namespace vllm::api
