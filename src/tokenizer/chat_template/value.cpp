// Python object semantics for chat-template values: str()/repr(), truthiness, ==, <,
// conversion from nlohmann::json and json.dumps() as transformers' tojson filter calls it.
#include "tokenizer/chat_template/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "tokenizer/chat_template/error.h"

namespace vllm::tok::jinja {

Value Value::undefined(std::string hint) {
  Value v;
  v.kind = Kind::Undefined;
  v.s = std::move(hint);
  return v;
}
Value Value::none() {
  Value v;
  v.kind = Kind::None;
  return v;
}
Value Value::boolean(bool x) {
  Value v;
  v.kind = Kind::Bool;
  v.b = x;
  return v;
}
Value Value::integer(int64_t x) {
  Value v;
  v.kind = Kind::Int;
  v.i = x;
  return v;
}
Value Value::real(double x) {
  Value v;
  v.kind = Kind::Float;
  v.f = x;
  return v;
}
Value Value::string(std::string x) {
  Value v;
  v.kind = Kind::String;
  v.s = std::move(x);
  return v;
}
Value Value::list_of(List x, bool tuple) {
  Value v;
  v.kind = Kind::List;
  v.list = std::make_shared<const List>(std::move(x));
  v.is_tuple = tuple;
  return v;
}
Value Value::dict_of(Dict x) {
  Value v;
  v.kind = Kind::Dict;
  v.dict = std::make_shared<const Dict>(std::move(x));
  return v;
}
Value Value::namespace_of(Dict x) {
  Value v;
  v.kind = Kind::Namespace;
  v.ns = std::make_shared<Dict>(std::move(x));
  return v;
}
Value Value::callable(Function f, std::string name) {
  Value v;
  v.kind = Kind::Callable;
  v.fn = std::make_shared<const Function>(std::move(f));
  v.s = std::move(name);
  return v;
}

bool Value::truthy() const {
  switch (kind) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return b;
    case Kind::Int:
      return i != 0;
    case Kind::Float:
      return f != 0.0;
    case Kind::String:
      return !s.empty();
    case Kind::List:
      return !list->empty();
    case Kind::Dict:
      return !dict->empty();
    default:
      return true;
  }
}

const char* Value::type_name() const {
  switch (kind) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return is_tuple ? "tuple" : "list";
    case Kind::Dict:
      return "dict";
    case Kind::Namespace:
      return "Namespace";
    default:
      return "function";
  }
}

double Value::as_double() const {
  if (kind == Kind::Float) return f;
  if (kind == Kind::Int) return static_cast<double>(i);
  if (kind == Kind::Bool) return b ? 1.0 : 0.0;
  throw ChatTemplateError(0, std::string("expected a number, got ") + type_name());
}

int64_t Value::as_int() const {
  if (kind == Kind::Int) return i;
  if (kind == Kind::Bool) return b ? 1 : 0;
  throw ChatTemplateError(0, std::string("expected an integer, got ") + type_name());
}

const Value* Value::find(const Value& key) const {
  const Dict* d = kind == Kind::Dict ? dict.get() : kind == Kind::Namespace ? ns.get() : nullptr;
  if (!d) return nullptr;
  for (const auto& kv : *d)
    if (equals(kv.first, key)) return &kv.second;
  return nullptr;
}

const Value* Value::find(const std::string& key) const {
  const Dict* d = kind == Kind::Dict ? dict.get() : kind == Kind::Namespace ? ns.get() : nullptr;
  if (!d) return nullptr;
  for (const auto& kv : *d)
    if (kv.first.kind == Kind::String && kv.first.s == key) return &kv.second;
  return nullptr;
}

const Value* CallArgs::get(size_t idx, const char* name) const {
  if (idx < args.size()) return &args[idx];
  for (const auto& kv : kwargs)
    if (kv.first == name) return &kv.second;
  return nullptr;
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci looks like "-1.2345e+02": split sign, digits and the decimal exponent.
  std::string sign;
  size_t p = 0;
  if (sci[0] == '-') {
    sign = "-";
    p = 1;
  }
  size_t e = sci.find('e');
  std::string digits;
  for (size_t k = p; k < e; ++k)
    if (sci[k] != '.') digits += sci[k];
  int exp10 = std::stoi(sci.substr(e + 1));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = sign;
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0." + std::string(-exp10 - 1, '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exp10 + 1) {
      out += digits + std::string(exp10 + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exp10 + 1) + "." + digits.substr(exp10 + 1);
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof(eb), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += eb;
  }
  return out;
}

namespace {

// repr() of a str: CPython picks single quotes unless the text has ' and no ".
std::string repr_string(const std::string& s) {
  bool has_single = s.find('\'') != std::string::npos;
  bool has_double = s.find('"') != std::string::npos;
  char q = (has_single && !has_double) ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == static_cast<unsigned char>(q) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof(b), "\\x%02x", c);
      out += b;
    } else {
      out += static_cast<char>(c);
    }
  }
  out += q;
  return out;
}

}  // namespace

std::string Value::repr() const {
  switch (kind) {
    case Kind::String:
      return repr_string(s);
    case Kind::List: {
      std::string out = is_tuple ? "(" : "[";
      for (size_t k = 0; k < list->size(); ++k) {
        if (k) out += ", ";
        out += (*list)[k].repr();
      }
      if (is_tuple && list->size() == 1) out += ",";
      out += is_tuple ? ")" : "]";
      return out;
    }
    case Kind::Dict: {
      std::string out = "{";
      bool first = true;
      for (const auto& kv : *dict) {
        if (!first) out += ", ";
        first = false;
        out += kv.first.repr() + ": " + kv.second.repr();
      }
      return out + "}";
    }
    default:
      return str();
  }
}

std::string Value::str() const {
  switch (kind) {
    case Kind::Undefined:
      return "";
    case Kind::None:
      return "None";
    case Kind::Bool:
      return b ? "True" : "False";
    case Kind::Int:
      return std::to_string(i);
    case Kind::Float:
      return python_float_repr(f);
    case Kind::String:
      return s;
    case Kind::List:
    case Kind::Dict:
      return repr();
    case Kind::Namespace: {
      std::string out = "<Namespace {";
      bool first = true;
      for (const auto& kv : *ns) {
        if (!first) out += ", ";
        first = false;
        out += kv.first.repr() + ": " + kv.second.repr();
      }
      return out + "}>";
    }
    default:
      return "<function " + s + ">";
  }
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Undefined:
    case Kind::None:
      return true;
    case Kind::String:
      return a.s == b.s;
    case Kind::List:
      if (a.list->size() != b.list->size()) return false;
      for (size_t k = 0; k < a.list->size(); ++k)
        if (!equals((*a.list)[k], (*b.list)[k])) return false;
      return true;
    case Kind::Dict:
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& kv : *a.dict) {
        const Value* other = b.find(kv.first);
        if (!other || !equals(kv.second, *other)) return false;
      }
      return true;
    case Kind::Namespace:
      return a.ns == b.ns;
    default:
      return a.fn == b.fn;
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  // UTF-8 byte order equals code point order, which is what Python compares.
  if (a.is_string() && b.is_string()) return a.s < b.s;
  if (a.is_list() && b.is_list()) {
    size_t n = std::min(a.list->size(), b.list->size());
    for (size_t k = 0; k < n; ++k) {
      const Value& x = (*a.list)[k];
      const Value& y = (*b.list)[k];
      if (!equals(x, y)) return less_than(x, y);
    }
    return a.list->size() < b.list->size();
  }
  throw ChatTemplateError(0, std::string("'<' not supported between instances of '") +
                                 a.type_name() + "' and '" + b.type_name() + "'");
}

namespace {

template <class J>
Value from_json_impl(const J& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      return Value::none();
    case nlohmann::json::value_t::boolean:
      return Value::boolean(j.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return Value::integer(j.template get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return Value::integer(static_cast<int64_t>(j.template get<uint64_t>()));
    case nlohmann::json::value_t::number_float:
      return Value::real(j.template get<double>());
    case nlohmann::json::value_t::string:
      return Value::string(j.template get<std::string>());
    case nlohmann::json::value_t::array: {
      List out;
      out.reserve(j.size());
      for (const auto& e : j) out.push_back(from_json_impl(e));
      return Value::list_of(std::move(out));
    }
    case nlohmann::json::value_t::object: {
      Dict out;
      out.reserve(j.size());
      for (auto it = j.begin(); it != j.end(); ++it)
        out.emplace_back(Value::string(it.key()), from_json_impl(it.value()));
      return Value::dict_of(std::move(out));
    }
    default:
      return Value::none();
  }
}

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

void json_newline(std::string& out, const JsonOptions& o, int depth) {
  out += '\n';
  for (int d = 0; d < depth; ++d) {
    if (o.indent_is_string)
      out += o.indent_str;
    else
      out.append(o.indent, ' ');
  }
}

void json_dump(std::string& out, const Value& v, const JsonOptions& o, int depth) {
  bool pretty = o.indent >= 0 || o.indent_is_string;
  const std::string& item_sep = o.item_sep;
  const std::string& key_sep = o.key_sep;
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
      json_string(out, v.s, o.ensure_ascii);
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
          json_string(out, key.s, o.ensure_ascii);
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
      return;
    }
    default:
      throw ChatTemplateError(
          0, std::string("Object of type ") + v.type_name() + " is not JSON serializable");
  }
}

}  // namespace

Value from_json(const nlohmann::json& j) { return from_json_impl(j); }
Value from_json(const nlohmann::ordered_json& j) { return from_json_impl(j); }

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

std::vector<uint32_t> utf8_decode(const std::string& s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t k = 0; k < s.size();) {
    unsigned char c = p[k];
    int len = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    uint32_t cp = len == 1 ? c : (c & (0xff >> (len + 1)));
    for (int m = 1; m < len && k + m < s.size(); ++m) cp = (cp << 6) | (p[k + m] & 0x3f);
    out.push_back(cp);
    k += len;
  }
  return out;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t k = begin; k < end && k < cps.size(); ++k) utf8_append(out, cps[k]);
  return out;
}

bool is_py_space(uint32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f)) return true;
  switch (cp) {
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

}  // namespace vllm::tok::jinja
