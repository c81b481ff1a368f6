// The value model of the chat-template interpreter: Python objects as Jinja2 sees them
// (None, bool, int, float, str, list, dict) plus Jinja2's Undefined, namespace() objects and
// callables. Printing, truthiness, equality and ordering follow CPython so that output is
// byte-identical to Python jinja2.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tokenizer/chat_template/limits.h"

namespace vllm::tok::jinja {

struct Value;
using List = std::vector<Value>;
// Python dicts keep insertion order; templates hold a handful of keys, so a flat vector
// with linear lookup beats a hash map here.
using Dict = std::vector<std::pair<Value, Value>>;

struct CallArgs;
using Function = std::function<Value(CallArgs&)>;

enum class Kind { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Callable };

struct Value {
  Kind kind = Kind::Undefined;
  bool b = false;
  bool is_tuple = false;  // repr() only: Python tuples print with parentheses
  // Lists and dicts: how many levels of lists/dicts they hold (a flat list is 1) and their
  // size as ChatTemplateLimits::max_value_bytes counts it. Both are fixed when the container
  // is built (containers are immutable), so limits are checked once, not on every walk.
  uint16_t depth = 0;
  uint64_t weight = 0;
  int64_t i = 0;
  double f = 0.0;
  // String payload (for Undefined the name that was missing, for callables the name), shared
  // so that copying a Value never copies text: a template can pass a large message through
  // many variables, loop targets and macro arguments at no cost.
  std::shared_ptr<const std::string> text;
  std::shared_ptr<const List> list;
  std::shared_ptr<const Dict> dict;
  std::shared_ptr<Dict> ns;  // namespace(): the one mutable object a template can hold
  std::shared_ptr<const Function> fn;

  Value() = default;
  static Value undefined(std::string hint = {});
  static Value none();
  static Value boolean(bool v);
  static Value integer(int64_t v);
  static Value real(double v);
  // Checks the size against ChatTemplateLimits::max_value_bytes and charges the render.
  static Value string(std::string v);
  // Check depth and size against the limits (max_value_depth, max_value_bytes).
  static Value list_of(List v, bool tuple = false);
  static Value dict_of(Dict v);
  // Measured but neither limited nor charged: for converted request input (from_json limits
  // its depth; the request's own size bounds the rest) and for the engine's own small objects
  // (the per-iteration `loop` dict).
  static Value unchecked_string(std::string v);
  static Value unchecked_list(List v);
  static Value unchecked_dict(Dict v);
  static Value unchecked_dict(std::shared_ptr<const Dict> v);
  // Adopted by the running render's Budget (see budget.h).
  static Value namespace_of(Dict v);
  static Value callable(Function f, std::string name = {});

  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_none() const { return kind == Kind::None; }
  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_list() const { return kind == Kind::List; }
  bool is_dict() const { return kind == Kind::Dict; }

  const std::string& s() const;

  // Python semantics.
  bool truthy() const;
  std::string str() const;        // str(x); Undefined renders as ""
  std::string repr() const;       // repr(x)
  const char* type_name() const;  // Python's type name, for error messages
  double as_double() const;       // bool/int/float only
  int64_t as_int() const;         // bool/int only
  // Size as max_value_bytes counts it (see `weight`).
  uint64_t size_weight() const;

  // Looks up a key in a dict or namespace; nullptr when absent.
  const Value* find(const Value& key) const;
  const Value* find(const std::string& key) const;
};

struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
  int line = 0;

  // Positional argument idx, else keyword `name`, else nullptr.
  const Value* get(size_t idx, const char* name) const;
};

bool equals(const Value& a, const Value& b);
// Python's `<`; throws TypeError-style errors for unorderable types.
bool less_than(const Value& a, const Value& b);

// Converts a request's JSON into template values. Nesting deeper than max_value_depth, or a
// converted size past max_value_bytes, is a ChatTemplateError naming the limit; both are
// checked before descending / allocating further, so any input is safe.
Value from_json(const nlohmann::json& j, const ChatTemplateLimits& limits);
Value from_json(const nlohmann::ordered_json& j, const ChatTemplateLimits& limits);

struct JsonOptions {
  bool ensure_ascii = false;
  int64_t indent = -1;     // < 0: no newlines
  std::string indent_str;  // used when indent was given as a string
  bool indent_is_string = false;
  std::string item_sep;  // empty: Python's default for the indent mode
  std::string key_sep;
  bool custom_separators = false;
  bool sort_keys = false;
};
// json.dumps(x, ...) as transformers' tojson filter calls it.
std::string to_json(const Value& v, const JsonOptions& opts);

// namespace() objects alive in the process (tests use it to prove renders leak none).
int64_t live_namespaces();

// Python float repr (shortest round-trip, 1e+16 / 1e-05 switch-over points).
std::string python_float_repr(double v);

// UTF-8 helpers: Python indexes strings by code point.
std::vector<uint32_t> utf8_decode(const std::string& s);
std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end);
// len(s) and s[idx] (0 <= idx < len) without decoding the whole string; they step through
// bytes exactly as utf8_decode does, so invalid UTF-8 counts the same way.
int64_t utf8_length(const std::string& s);
// s.find(sub, pos) in linear time: glibc's memmem (two-way) for needles over 16 bytes.
// libstdc++'s std::string::find compares at every position, O(size * needle) for a hostile
// needle; up to 16 bytes that is bounded and it is the faster call.
size_t find_substr(const std::string& s, const std::string& sub, size_t pos = 0);
// s.rfind(sub, pos) in linear time, for rfind/rindex/rsplit: needles over 16 bytes are
// searched forward with memmem in reversed copies, made once per finder so that rsplit's
// repeated searches stay linear too.
class ReverseFinder {
 public:
  ReverseFinder(const std::string& s, const std::string& sub);
  // The last start position <= pos (npos: anywhere), or npos.
  size_t find(size_t pos = std::string::npos) const;

 private:
  const std::string& s_;
  const std::string& sub_;
  std::string rs_, rsub_;  // reversed copies; empty for short needles
};
std::string utf8_char_at(const std::string& s, int64_t idx);
bool is_py_space(uint32_t cp);

}  // namespace vllm::tok::jinja
