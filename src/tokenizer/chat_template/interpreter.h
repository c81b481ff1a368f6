// Tree-walking interpreter: renders a parsed Template against a context dict with Jinja2's
// scoping (a fresh scope per loop iteration and per macro call; `if` shares its parent's),
// within the bounds of a ChatTemplateLimits.
#pragma once

#include <cstdint>
#include <string>

#include "tokenizer/chat_template/ast.h"
#include "tokenizer/chat_template/limits.h"

namespace vllm::tok::jinja {

// `context` must be a Dict value; its keys become the template's top-level variables.
std::string render_template(const Template& tpl, const Value& context,
                            const ChatTemplateLimits& limits);

// Interpreter scopes alive in the process: returns to its earlier value once a render ends,
// which tests use to prove renders leak nothing.
int64_t live_scopes();

}  // namespace vllm::tok::jinja
