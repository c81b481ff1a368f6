// Parser for the Jinja2 subset: tokens -> Template. Follows jinja2.parser's grammar and
// operator precedence; anything outside the subset fails here, at load time, with an error
// naming the construct and its line.
#pragma once

#include <string>

#include "tokenizer/chat_template/ast.h"
#include "tokenizer/chat_template/limits.h"

namespace vllm::tok::jinja {

// Enforces the load-time limits: max_source_bytes and max_nesting_depth (blocks, brackets,
// unary operators and the height of every expression, so that operator and filter chains,
// which the parser builds in loops, cannot make the evaluator recurse without bound either).
Template parse_template(const std::string& source, const ChatTemplateLimits& limits);

}  // namespace vllm::tok::jinja
