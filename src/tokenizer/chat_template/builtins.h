// Built-ins of the chat-template language: Jinja2 filters and tests (filters.cpp), attribute
// and item access with Python's str/dict/list methods (methods.cpp) and the global functions
// transformers provides (globals.cpp).
#pragma once

#include <optional>
#include <string>

#include "tokenizer/chat_template/value.h"

namespace vllm::tok::jinja {

bool is_known_filter(const std::string& name);
bool is_known_test(const std::string& name);
Value apply_filter(const std::string& name, const Value& input, const CallArgs& args);
bool apply_test(const std::string& name, const Value& input, const CallArgs& args);

// Jinja2 `obj.name`: Python attribute (bound method) first, then item; Undefined if neither.
Value get_attr(const Value& obj, const std::string& name);
// Jinja2 `obj[key]`: item first, then attribute for string keys; Undefined if neither.
Value get_item(const Value& obj, const Value& key);
Value slice_value(const Value& obj, const Value& start, const Value& stop, const Value& step);

// Throws the UndefinedError jinja2 raises when an Undefined value is used.
[[noreturn]] void fail_undefined(const Value& v);

// Names every template can see unless the context shadows them: range, dict, namespace,
// raise_exception, strftime_now.
Value lookup_global(const std::string& name);

// Python iteration: list items, dict keys, string characters; Undefined iterates as empty.
List iterate(const Value& v);
// Python len().
int64_t length_of(const Value& v);

}  // namespace vllm::tok::jinja
