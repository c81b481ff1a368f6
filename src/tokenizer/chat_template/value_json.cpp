// Conversions between template values and JSON: a request's nlohmann::json into Values
// (depth-checked), and json.dumps() as transformers' tojson filter calls it (size-checked as
// it writes, so an exponential value or a huge indent stops at the limit).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/value.h"

namespace vllm::tok::jinja {

namespace {

// Converts recursively, but checks the depth before descending, so a 1,000,000-deep request
// body stops after max_value_depth frames; and counts the converted size as it goes, so a
// body of millions of tiny items stops before it becomes gigabytes of Values.
template <class J>
class FromJson {
 public:
  explicit FromJson(const ChatTemplateLimits& l) : limits_(l) {}

  Value convert(const J& j, int level) {
    size_ += sizeof(Value);
    check_size();
    switch (j.type()) {
      case nlohmann::json::value_t::null:
        return Value::none();
      case nlohmann::json::value_t::boolean:
        return Value::boolean(j.template get<bool>());
      case nlohmann::json::value_t::number_integer:
        return Value::integer(j.template get<int64_t>());
      case nlohmann::json::value_t::number_unsigned: {
        uint64_t u = j.template get<uint64_t>();
        if (u > static_cast<uint64_t>(INT64_MAX))
          throw ChatTemplateError(0, "integer " + std::to_string(u) +
                                         " in the input is outside the 64-bit range templates use");
        return Value::integer(static_cast<int64_t>(u));
      }
      case nlohmann::json::value_t::number_float:
        return Value::real(j.template get<double>());
      case nlohmann::json::value_t::string:
        return string(j.template get_ref<const std::string&>());
      case nlohmann::json::value_t::array: {
        enter(level);
        List out;
        out.reserve(j.size());
        for (const auto& e : j) out.push_back(convert(e, level + 1));
        return Value::unchecked_list(std::move(out));
      }
      case nlohmann::json::value_t::object: {
        enter(level);
        Dict out;
        out.reserve(j.size());
        for (auto it = j.begin(); it != j.end(); ++it) {
          size_ += sizeof(Value);
          Value key = string(it.key());
          out.emplace_back(std::move(key), convert(it.value(), level + 1));
        }
        return Value::unchecked_dict(std::move(out));
      }
      default:
        return Value::none();
    }
  }

 private:
  Value string(const std::string& s) {
    size_ += s.size();
    check_size();
    return Value::unchecked_string(s);
  }
  void enter(int level) {
    if (level > limits_.max_value_depth)
      limit_exceeded("nesting depth of the input JSON", std::to_string(limits_.max_value_depth),
                     "max_value_depth");
    check_size();
  }
  void check_size() {
    if (size_ > limits_.max_value_bytes)
      limit_exceeded("input JSON (as template values)", format_bytes(limits_.max_value_bytes),
                     "max_value_bytes");
  }

  const ChatTemplateLimits& limits_;
  uint64_t size_ = 0;
};

void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out += '"';
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t k = 0; k < s.size(); ++k) {
    unsigned char c = p[k];
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    char b[16];
    if (c < 0x20 || (ensure_ascii && c == 0x7f)) {
      std::snprintf(b, sizeof(b), "\\u%04x", c);
      out += b;
    } else if (c < 0x80 || !ensure_ascii) {
      out += static_cast<char>(c);
    } else {
      // Decode one UTF-8 sequence and write it as \uXXXX (surrogate pair above the BMP).
      int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
      uint32_t cp = c & (0xff >> (len + 1));
      for (int m = 1; m < len && k + m < s.size(); ++m) cp = (cp << 6) | (p[k + m] & 0x3f);
      k += len - 1;
      if (cp >= 0x10000) {
        cp -= 0x10000;
        std::snprintf(b, sizeof(b), "\\u%04x\\u%04x", 0xd800 + (cp >> 10), 0xdc00 + (cp & 0x3ff));
      } else {
        std::snprintf(b, sizeof(b), "\\u%04x", cp);
      }
      out += b;
    }
  }
  out += '"';
}

// tojson's result is one string value: refuse it as soon as it outgrows max_value_bytes.
void grew(const std::string& out) {
  tick();
  check_value_bytes(out.size(), "tojson output");
}

void json_newline(std::string& out, const JsonOptions& o, int depth) {
  // indent=10**9 would append gigabytes for one line: size the line before writing it.
  uint64_t unit = o.indent_is_string ? o.indent_str.size() : static_cast<uint64_t>(o.indent);
  uint64_t width = unit > UINT64_MAX / 1024 ? UINT64_MAX : unit * static_cast<uint64_t>(depth);
  check_value_bytes(width > UINT64_MAX - out.size() ? UINT64_MAX : out.size() + width + 1,
                    "tojson output");
  out += '\n';
  for (int d = 0; d < depth; ++d) {
    if (o.indent_is_string)
      out += o.indent_str;
    else
      out.append(static_cast<size_t>(o.indent), ' ');
  }
}

void json_dump(std::string& out, const Value& v, const JsonOptions& o, int depth) {
  bool pretty = o.indent >= 0 || o.indent_is_string;
  const std::string& item_sep = o.item_sep;
  const std::string& key_sep = o.key_sep;
  grew(out);
  switch (v.kind) {
    case Kind::None:
      out += "null";
      return;
    case Kind::Bool:
      out += v.b ? "true" : "false";
      return;
    case Kind::Int:
      out += std::to_string(v.i);
      return;
    case Kind::Float:
      if (std::isnan(v.f))
        out += "NaN";
      else if (std::isinf(v.f))
        out += v.f < 0 ? "-Infinity" : "Infinity";
      else
        out += python_float_repr(v.f);
      return;
    case Kind::String:
      json_string(out, v.s(), o.ensure_ascii);
      grew(out);
      return;
    case Kind::List: {
      if (v.list->empty()) {
        out += "[]";
        return;
      }
      out += '[';
      for (size_t k = 0; k < v.list->size(); ++k) {
        if (k) out += item_sep;
        if (pretty) json_newline(out, o, depth + 1);
        json_dump(out, (*v.list)[k], o, depth + 1);
      }
      if (pretty) json_newline(out, o, depth);
      out += ']';
      grew(out);
      return;
    }
    case Kind::Dict: {
      if (v.dict->empty()) {
        out += "{}";
        return;
      }
      std::vector<const std::pair<Value, Value>*> items;
      for (const auto& kv : *v.dict) items.push_back(&kv);
      if (o.sort_keys)
        std::stable_sort(items.begin(), items.end(),
                         [](auto* a, auto* b) { return less_than(a->first, b->first); });
      out += '{';
      bool first = true;
      for (const auto* kv : items) {
        if (!first) out += item_sep;
        first = false;
        if (pretty) json_newline(out, o, depth + 1);
        const Value& key = kv->first;
        if (key.is_string()) {
          json_string(out, key.s(), o.ensure_ascii);
        } else if (key.kind == Kind::Int || key.kind == Kind::Float) {
          out += '"' + key.str() + '"';
        } else if (key.kind == Kind::Bool) {
          out += key.b ? "\"true\"" : "\"false\"";
        } else if (key.is_none()) {
          out += "\"null\"";
        } else {
          throw ChatTemplateError(
              0, std::string("keys must be str, int, float, bool or None, not ") + key.type_name());
        }
        out += key_sep;
        json_dump(out, kv->second, o, depth + 1);
      }
      if (pretty) json_newline(out, o, depth);
      out += '}';
      grew(out);
      return;
    }
    default:
      throw ChatTemplateError(
          0, std::string("Object of type ") + v.type_name() + " is not JSON serializable");
  }
}

}  // namespace

Value from_json(const nlohmann::json& j, const ChatTemplateLimits& limits) {
  return FromJson<nlohmann::json>(limits).convert(j, 1);
}
Value from_json(const nlohmann::ordered_json& j, const ChatTemplateLimits& limits) {
  return FromJson<nlohmann::ordered_json>(limits).convert(j, 1);
}

std::string to_json(const Value& v, const JsonOptions& opts) {
  JsonOptions o = opts;
  bool pretty = o.indent >= 0 || o.indent_is_string;
  if (!o.custom_separators) {
    o.item_sep = pretty ? "," : ", ";
    o.key_sep = ": ";
  }
  std::string out;
  json_dump(out, v, o, 0);
  return out;
}

}  // namespace vllm::tok::jinja
