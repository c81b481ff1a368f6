// ChatTemplate: the public face of the Jinja2-subset engine. Renders Hugging Face chat
// templates byte-identically to Python jinja2 configured as transformers does
// (trim_blocks, lstrip_blocks, loopcontrols, tojson, raise_exception, strftime_now).
#pragma once

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/limits.h"

namespace vllm::tok {

namespace jinja {
struct Template;
}

class ChatTemplate {
 public:
  // Parses `source`; throws ChatTemplateError (with the line) on syntax errors, on constructs
  // outside the supported subset and on a source past the load-time limits. `limits` also
  // bound every later render (see limits.h and docs/CHAT_TEMPLATES.md).
  explicit ChatTemplate(std::string source, ChatTemplateLimits limits = {});
  ~ChatTemplate();
  ChatTemplate(ChatTemplate&&) noexcept;
  ChatTemplate& operator=(ChatTemplate&&) noexcept;

  // context: {"messages": [...], "tools": [...]?, "add_generation_prompt": bool,
  //           "bos_token": "...", "eos_token": "...", plus chat_template_kwargs such as
  //           "enable_thinking"}. Throws ChatTemplateError (raise_exception, type errors, a
  //           render limit, input nested deeper than max_value_depth).
  std::string render(const nlohmann::json& context) const;
  // Same, but keeps object key order as written: `tools | tojson` then prints keys in the
  // order the client sent them, as Python does (nlohmann::json sorts keys). Prefer this for
  // request bodies. A separate name keeps `render({{"messages", ...}})` unambiguous.
  std::string render_ordered(const nlohmann::ordered_json& context) const;

  const std::string& source() const { return source_; }
  const ChatTemplateLimits& limits() const { return limits_; }

  // A generic ChatML template for models that ship none.
  static const char* chatml_fallback();

 private:
  std::string source_;
  ChatTemplateLimits limits_;
  std::unique_ptr<jinja::Template> tpl_;
};

}  // namespace vllm::tok
