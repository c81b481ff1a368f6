// The globals transformers registers for chat templates: range (bounded like the sandbox's
// MAX_RANGE), dict, namespace (underscore-guarded), raise_exception and strftime_now.
#include <ctime>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::tok::jinja {
namespace {

[[noreturn]] void type_error(const std::string& msg) { throw ChatTemplateError(0, msg); }

const std::string& need_str(const Value* v, const char* what) {
  if (!v || !v->is_string()) type_error(std::string(what) + " must be a string");
  return v->s();
}

}  // namespace

namespace {

Dict kwargs_dict(const CallArgs& a, const char* fn) {
  Dict d;
  if (!a.args.empty()) {
    if (a.args.size() > 1 || !a.args[0].is_dict())
      type_error(std::string(fn) + "() takes at most one mapping argument");
    d = *a.args[0].dict;
  }
  for (const auto& kv : a.kwargs) {
    bool replaced = false;
    for (auto& e : d)
      if (e.first.is_string() && e.first.s() == kv.first) {
        e.second = kv.second;
        replaced = true;
      }
    if (!replaced) d.emplace_back(Value::string(kv.first), kv.second);
  }
  return d;
}

}  // namespace

Value lookup_global(const std::string& name) {
  if (name == "range") {
    return Value::callable(
        [](CallArgs& a) {
          int64_t start = 0, stop, step = 1;
          if (a.args.size() == 1) {
            stop = a.args[0].as_int();
          } else if (a.args.size() == 2 || a.args.size() == 3) {
            start = a.args[0].as_int();
            stop = a.args[1].as_int();
            if (a.args.size() == 3) step = a.args[2].as_int();
          } else {
            type_error("range expected 1 to 3 arguments");
          }
          if (step == 0) type_error("range() arg 3 must not be zero");
          // Python's len(range(...)), computed exactly (in 128 bits) before building anything,
          // as the sandbox does: the naive `k += step` loop overflows near the int64 limits.
          __int128 span =
              step > 0 ? static_cast<__int128>(stop) - start : static_cast<__int128>(start) - stop;
          __int128 mag = step > 0 ? static_cast<__int128>(step) : -static_cast<__int128>(step);
          __int128 len = span > 0 ? (span - 1) / mag + 1 : 0;
          if (len > 100000)
            type_error("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
          List out;
          out.reserve(static_cast<size_t>(len));
          for (int64_t j = 0; j < static_cast<int64_t>(len); ++j)
            out.push_back(
                Value::integer(static_cast<int64_t>(start + static_cast<__int128>(j) * step)));
          return Value::list_of(std::move(out));
        },
        name);
  }
  if (name == "dict")
    return Value::callable([](CallArgs& a) { return Value::dict_of(kwargs_dict(a, "dict")); },
                           name);
  if (name == "namespace") {
    return Value::callable(
        [](CallArgs& a) {
          Dict d = kwargs_dict(a, "namespace");
          for (const auto& kv : d)
            if (kv.first.is_string() && !kv.first.s().empty() && kv.first.s()[0] == '_')
              type_error(
                  "Chat templates cannot store underscore-prefixed attributes on a namespace");
          return Value::namespace_of(std::move(d));
        },
        name);
  }
  if (name == "raise_exception") {
    return Value::callable(
        [](CallArgs& a) -> Value {
          const Value* m = a.get(0, "message");
          throw ChatTemplateError(0, m ? m->str() : std::string());
        },
        name);
  }
  if (name == "strftime_now") {
    return Value::callable(
        [](CallArgs& a) {
          const std::string& fmt = need_str(a.get(0, "format"), "strftime_now format");
          std::time_t now = std::time(nullptr);
          std::tm tm{};
          localtime_r(&now, &tm);
          char buf[512];
          size_t n = std::strftime(buf, sizeof(buf), fmt.c_str(), &tm);
          return Value::string(std::string(buf, n));
        },
        name);
  }
  return Value::undefined("'" + name + "' is undefined");
}

}  // namespace vllm::tok::jinja
