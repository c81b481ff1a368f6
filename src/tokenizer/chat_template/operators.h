// Python's binary and comparison operators on template values. Integers are 64-bit where
// Python's are unbounded, so every integer result is checked: a result that does not fit is a
// ChatTemplateError naming the operation, never a wrapped value or a SIGFPE.
#pragma once

#include <string>

#include "tokenizer/chat_template/value.h"

namespace vllm::tok::jinja {

// a op b for + - * / // % ** ~
Value arithmetic(const std::string& op, const Value& a, const Value& b);
// -a (negate) or +a.
Value unary(bool negate, const Value& a);
// a op b for == != < > <= >= in notin
bool compare(const std::string& op, const Value& a, const Value& b);

}  // namespace vllm::tok::jinja
