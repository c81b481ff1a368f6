// Tree-walking interpreter: renders a parsed Template against a context dict with Jinja2's
// scoping (a fresh scope per loop iteration and per macro call; `if` shares its parent's).
#pragma once

#include <string>

#include "tokenizer/chat_template/ast.h"

namespace vllm::tok::jinja {

// `context` must be a Dict value; its keys become the template's top-level variables.
std::string render_template(const Template& tpl, const Value& context);

}  // namespace vllm::tok::jinja
