// ChatTemplate: parse once at load, render per request; plus the ChatML fallback template.
#include "tokenizer/chat_template/chat_template.h"

#include <new>
#include <stdexcept>

#include "tokenizer/chat_template/interpreter.h"
#include "tokenizer/chat_template/parser.h"

namespace vllm::tok {

namespace {

// The limits are meant to keep allocations far below what the machine has; should one still
// fail, the caller gets the engine's own error type (a 400 in the server), not a bad_alloc.
template <class F>
auto guarded(const char* what, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    throw ChatTemplateError(0, std::string("out of memory while ") + what);
  } catch (const std::length_error&) {
    throw ChatTemplateError(0, std::string("out of memory while ") + what);
  }
}

}  // namespace

ChatTemplate::ChatTemplate(std::string source, ChatTemplateLimits limits)
    : source_(std::move(source)), limits_(limits) {
  tpl_ = guarded("parsing the template", [&] {
    return std::make_unique<jinja::Template>(jinja::parse_template(source_, limits_));
  });
}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const nlohmann::json& context) const {
  return guarded("rendering the template", [&] {
    return jinja::render_template(*tpl_, jinja::from_json(context, limits_), limits_);
  });
}

std::string ChatTemplate::render_ordered(const nlohmann::ordered_json& context) const {
  return guarded("rendering the template", [&] {
    return jinja::render_template(*tpl_, jinja::from_json(context, limits_), limits_);
  });
}

// tools/make_chat_template_goldens.py reads this literal (between the JINJA delimiters) so the
// goldens are rendered by Python jinja2 from exactly these bytes.
const char* ChatTemplate::chatml_fallback() {
  return R"JINJA({%- for message in messages %}
    {{- '<|im_start|>' + message['role'] + '\n' }}
    {%- if message['content'] is string %}
        {{- message['content'] }}
    {%- elif message['content'] is iterable %}
        {%- for part in message['content'] %}
            {%- if part['type'] == 'text' %}
                {{- part['text'] }}
            {%- endif %}
        {%- endfor %}
    {%- endif %}
    {{- '<|im_end|>\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)JINJA";
}

}  // namespace vllm::tok
