// ChatTemplate: parse once at load, render per request; plus the ChatML fallback template.
#include "tokenizer/chat_template/chat_template.h"

#include "tokenizer/chat_template/interpreter.h"
#include "tokenizer/chat_template/parser.h"

namespace vllm::tok {

ChatTemplate::ChatTemplate(std::string source)
    : source_(std::move(source)),
      tpl_(std::make_unique<jinja::Template>(jinja::parse_template(source_))) {}

ChatTemplate::~ChatTemplate() = default;
ChatTemplate::ChatTemplate(ChatTemplate&&) noexcept = default;
ChatTemplate& ChatTemplate::operator=(ChatTemplate&&) noexcept = default;

std::string ChatTemplate::render(const nlohmann::json& context) const {
  return jinja::render_template(*tpl_, jinja::from_json(context));
}

std::string ChatTemplate::render_ordered(const nlohmann::ordered_json& context) const {
  return jinja::render_template(*tpl_, jinja::from_json(context));
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
