// Parser for the Jinja2 subset: tokens -> Template. Follows jinja2.parser's grammar and
// operator precedence; anything outside the subset fails here, at load time, with an error
// naming the construct and its line.
#pragma once

#include <string>

#include "tokenizer/chat_template/ast.h"

namespace vllm::tok::jinja {

Template parse_template(const std::string& source);

}  // namespace vllm::tok::jinja
