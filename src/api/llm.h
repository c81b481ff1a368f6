// LLM: a loaded model, its tokenizer and chat template, and an LLMEngine over them.
// The one object the CLI, the server and the C API build from a model path.
#pragma once

#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/cpu_model_executor.h"
#include "engine/llm_engine.h"
#include "model/causal_lm.h"
#include "tokenizer/tokenizer.h"

namespace vllm::tok {
class ChatTemplate;
}
namespace vllm::engine::so {
class GrammarCompiler;
}

namespace vllm::api {

class LLM {
 public:
  struct LoadOptions {
    // A folder with tokenizer.json (+ tokenizer_config.json) to use instead of the model's own
    // tokenizer (vLLM's --tokenizer); empty: the model's.
    std::string tokenizer;
  };
  // Loads the model and tokenizer (path: HF folder or .gguf) and builds the engine.
  static std::unique_ptr<LLM> load(const std::string& path, const engine::EngineConfig& cfg,
                                   const LoadOptions& opts);
  static std::unique_ptr<LLM> load(const std::string& path, const engine::EngineConfig& cfg) {
    return load(path, cfg, LoadOptions{});
  }
  ~LLM();

  engine::LLMEngine& engine() { return *engine_; }
  const tok::Tokenizer& tokenizer() const { return *tokenizer_; }
  model::CausalLM& model() { return *model_; }
  const std::string& model_path() const { return path_; }

  // Tokenizer::decode over the model's whole vocabulary: ids in the padded rows past the
  // tokenizer's vocabulary decode to "" (as in Hugging Face). Throws std::out_of_range past the
  // model's vocabulary.
  std::string decode(const std::vector<int32_t>& ids, bool skip_special_tokens = false) const;

  // Adds the model's end-of-sequence ids (config + generation_config) to the request's
  // stop ids unless it ignores EOS, as vLLM does.
  engine::SamplingParams with_model_stops(engine::SamplingParams p) const;

  // Renders the chat template (--chat-template, else the model's own, else ChatML; or
  // `tmpl` when given: a request's own) for an OpenAI message list. kwargs are extra template
  // variables (e.g. enable_thinking). continue_final_message: the text ends right after the
  // last message's content, leaving it open for the model to continue (as transformers does);
  // throws std::invalid_argument when the template does not reproduce that content.
  std::string apply_chat_template(const nlohmann::ordered_json& messages,
                                  const nlohmann::ordered_json& tools, bool add_generation_prompt,
                                  const nlohmann::ordered_json& kwargs,
                                  const tok::ChatTemplate* tmpl = nullptr,
                                  bool continue_final_message = false) const;
  // vLLM's --lora-modules: a PEFT LoRA adapter folder served as `name`
  // (model::CausalLM::add_lora). Before serving. Throws std::invalid_argument (an empty or
  // repeated name, a device without LoRA) or model::LoadError (the adapter).
  struct LoraModule {
    std::string name, path, base_model_name;  // base_model_name: "" for the served model
    int32_t id = 0;
  };
  const LoraModule& add_lora(const std::string& name, const std::string& path,
                             const model::LoraLoadOptions& opts,
                             const std::string& base_model_name = "");
  const std::vector<LoraModule>& lora_modules() const { return loras_; }
  // The adapter served as `name`, or null.
  const LoraModule* lora_by_name(const std::string& name) const;

  // Replaces the model's chat template (--chat-template); throws tok::ChatTemplateError.
  void set_chat_template(const std::string& source);
  const tok::ChatTemplate& chat_template() const { return *chat_template_; }

  // vLLM's tokenization of `bad_words`: each word without and with a leading space (the
  // latter only when it makes a different first token of the same length), no special tokens.
  std::vector<std::vector<int32_t>> bad_words_token_ids(
      const std::vector<std::string>& words) const;

  // Structured output: the grammar compiler for this tokenizer, built on first use (the
  // vocabulary index takes ~0.1 s for a 49k vocabulary, ~0.3 s for 152k) and shared by every
  // request; compile() is thread-safe and cached by text. Stop tokens (allowed once a grammar
  // is complete) are the tokenizer's plus the model's end-of-sequence ids.
  engine::so::GrammarCompiler& grammar_compiler() const;
  // vLLM's structured_outputs_config.disable_any_whitespace (CompilerConfig::compact_json);
  // takes effect only before the compiler's first use.
  void set_compact_json(bool compact) { compact_json_ = compact; }

 private:
  LLM() = default;
  std::string path_;
  std::unique_ptr<model::CausalLM> model_;
  std::unique_ptr<tok::Tokenizer> tokenizer_;
  std::unique_ptr<tok::ChatTemplate> chat_template_;
  std::unique_ptr<engine::ModelExecutor> executor_;
  std::unique_ptr<engine::LLMEngine> engine_;
  std::vector<int32_t> eos_ids_;
  mutable std::once_flag grammar_once_;
  bool compact_json_ = false;
  std::string device_;
  std::vector<LoraModule> loras_;
  mutable std::unique_ptr<engine::so::GrammarCompiler> grammar_compiler_;
};

// A chat message's content as text: the string, or (vLLM's "openai" content format) its
// parts' text joined with newlines.
std::string content_text(const nlohmann::ordered_json& content);

}  // namespace vllm::api
