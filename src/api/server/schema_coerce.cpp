// Schema-typed raw argument values (vLLM's coerce_to_schema_type), see the header.
#include "api/server/schema_coerce.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>

#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

using ojson = nlohmann::ordered_json;

std::string ascii_lower(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return s;
}

// vLLM's _TYPE_ALIASES.
std::string normalize_type(const std::string& t) {
  static const std::pair<const char*, const char*> aliases[] = {
      {"str", "string"},     {"text", "string"},      {"varchar", "string"}, {"char", "string"},
      {"enum", "string"},    {"int", "integer"},      {"int32", "integer"},  {"int64", "integer"},
      {"uint", "integer"},   {"uint32", "integer"},   {"uint64", "integer"}, {"long", "integer"},
      {"short", "integer"},  {"unsigned", "integer"}, {"float", "number"},   {"float32", "number"},
      {"float64", "number"}, {"double", "number"},    {"bool", "boolean"},   {"dict", "object"},
      {"arr", "array"},      {"list", "array"},       {"sequence", "array"}};
  const std::string k = ascii_lower(py_strip(t));
  for (const auto& [from, to] : aliases)
    if (k == from) return to;
  return k;
}

std::set<std::string> normalized_types(const ojson& schema) {
  std::set<std::string> out;
  for (const std::string& t : schema_types(schema)) out.insert(normalize_type(t));
  return out;
}

void collect_types(const ojson& schema, std::set<std::string>& types) {
  if (!schema.is_object()) {
    types.insert("string");
    return;
  }
  std::set<std::string> own;
  if (auto it = schema.find("type"); it != schema.end()) {
    if (it->is_string()) {
      own.insert(it->get<std::string>());
    } else if (it->is_array()) {
      for (const auto& t : *it)
        if (t.is_string()) own.insert(t.get<std::string>());
    }
  }
  if (auto it = schema.find("enum"); it != schema.end() && it->is_array() && !it->empty()) {
    for (const auto& v : *it) {
      if (v.is_null())
        own.insert("null");
      else if (v.is_boolean())
        own.insert("boolean");
      else if (v.is_number_integer())
        own.insert("integer");
      else if (v.is_number_float())
        own.insert("number");
      else if (v.is_string())
        own.insert("string");
      else if (v.is_array())
        own.insert("array");
      else if (v.is_object())
        own.insert("object");
    }
  }
  for (const char* field : {"anyOf", "oneOf", "allOf"})
    if (auto it = schema.find(field); it != schema.end() && it->is_array())
      for (const auto& choice : *it) {
        std::set<std::string> sub;
        collect_types(choice, sub);
        own.insert(sub.begin(), sub.end());
      }
  if (own.empty()) own.insert("string");
  types.insert(own.begin(), own.end());
}

// Python's digitpart: digits with single underscores between them. Appends the digits.
bool digit_part(std::string_view s, size_t& i, std::string& out) {
  const size_t start = i;
  while (i < s.size()) {
    if (s[i] >= '0' && s[i] <= '9') {
      out += s[i++];
    } else if (s[i] == '_' && i > start && i + 1 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '9') {
      ++i;
    } else {
      break;
    }
  }
  return i > start;
}

// The canonical JSON text holds a non-finite number (json.loads read 1e400 as inf).
bool has_non_finite(const std::string& canonical) {
  JsonStrings strings;
  for (char c : canonical)
    if (strings.structural(c) && (c == 'I' || c == 'N')) return true;
  return false;
}

// json.loads(raw) when it gives a finite value (vLLM's _is_json_finite), as json.dumps writes it.
std::optional<std::string> json_loads_finite(const std::string& raw) {
  std::string out;
  if (!py_json_dumps(raw, out) || has_non_finite(out)) return std::nullopt;
  return out;
}

// The exact decimal value of an integral double (Python's int(float)).
std::string exact_integer(double v) {
  if (v == 0) return "0";
  const bool neg = v < 0;
  int e = 0;
  const double f = std::frexp(std::fabs(v), &e);
  uint64_t m = static_cast<uint64_t>(std::ldexp(f, 53));
  int shift = e - 53;
  if (shift <= 0) return (neg ? "-" : "") + std::to_string(m >> -shift);
  std::vector<uint32_t> limbs;  // base 1e9, least significant first
  for (; m; m /= 1000000000) limbs.push_back(static_cast<uint32_t>(m % 1000000000));
  for (; shift > 0; --shift) {
    uint32_t carry = 0;
    for (uint32_t& l : limbs) {
      const uint64_t x = static_cast<uint64_t>(l) * 2 + carry;
      l = static_cast<uint32_t>(x % 1000000000);
      carry = static_cast<uint32_t>(x / 1000000000);
    }
    if (carry) limbs.push_back(carry);
  }
  std::string s = neg ? "-" : "";
  s += std::to_string(limbs.back());
  for (size_t i = limbs.size() - 1; i-- > 0;) {
    const std::string part = std::to_string(limbs[i]);
    s += std::string(9 - part.size(), '0') + part;
  }
  return s;
}

}  // namespace

const ojson* tool_function(const ojson& tools, const std::string& name) {
  if (!tools.is_array()) return nullptr;
  for (const auto& t : tools) {
    if (!t.is_object()) continue;
    auto f = t.find("function");
    if (f == t.end() || !f->is_object()) continue;
    auto n = f->find("name");
    if (n != f->end() && n->is_string() && n->get<std::string>() == name) return &*f;
  }
  return nullptr;
}

ojson tool_properties(const ojson& tools, const std::string& name) {
  if (const ojson* f = tool_function(tools, name)) {
    auto p = f->find("parameters");
    if (p != f->end() && p->is_object()) {
      auto props = p->find("properties");
      if (props != p->end() && props->is_object()) return *props;
    }
  }
  return ojson::object();
}

std::string property_value_json(const ojson& properties, const std::string& key,
                                const std::string& value) {
  if (properties.is_object()) {
    auto it = properties.find(key);
    if (it != properties.end() && it->is_object()) return coerce_to_schema_json(value, *it);
  }
  return py_json_quote(value);
}

std::vector<std::string> schema_types(const ojson& schema) {
  std::set<std::string> types;
  collect_types(schema, types);
  return {types.begin(), types.end()};
}

bool schema_keeps_string(const ojson& schema) {
  const std::set<std::string> t = normalized_types(schema);
  return t.size() == 1 && *t.begin() == "string";
}

std::optional<std::string> py_int(std::string_view text) {
  const std::string s = py_strip(text);
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  std::string digits;
  if (!digit_part(s, i, digits) || i != s.size()) return std::nullopt;
  const size_t nz = digits.find_first_not_of('0');
  if (nz == std::string::npos) return "0";
  return (neg ? "-" : "") + digits.substr(nz);
}

std::optional<std::string> py_finite_number(std::string_view text) {
  const std::string s = py_strip(text);
  size_t i = 0;
  std::string clean;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
  // inf / infinity / nan parse in Python but are not finite: vLLM keeps the string then.
  std::string mant;
  const bool int_part = digit_part(s, i, mant);
  bool frac_part = false;
  if (i < s.size() && s[i] == '.') {
    mant += s[i++];
    frac_part = digit_part(s, i, mant);
  }
  if (!int_part && !frac_part) return std::nullopt;
  clean += mant;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    clean += s[i++];
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) clean += s[i++];
    if (!digit_part(s, i, clean)) return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  const double v = std::strtod(clean.c_str(), nullptr);
  if (!std::isfinite(v)) return std::nullopt;
  if (std::trunc(v) == v) return exact_integer(v);
  return py_float_repr(v);
}

std::string coerce_to_schema_json(const std::string& raw, const ojson& schema) {
  const std::set<std::string> types = normalized_types(schema);
  for (const char* t : {"null", "integer", "number", "boolean", "object", "array", "string"}) {
    const std::string type = t;
    if (!types.count(type)) continue;
    if (type == "null") {
      if (ascii_lower(raw) == "null") return "null";
    } else if (type == "string") {
      return py_json_quote(raw);
    } else if (type == "integer") {
      if (auto v = py_int(raw)) return *v;
    } else if (type == "number") {
      if (auto v = py_int(raw)) return *v;
      if (auto v = py_finite_number(raw)) return *v;
    } else if (type == "boolean") {
      const std::string b = ascii_lower(py_strip(raw));
      if (b == "true" || b == "1") return "true";
      if (b == "false" || b == "0") return "false";
    } else if (auto v = json_loads_finite(raw)) {  // object, array: whatever json.loads reads
      return *v;
    }
  }
  if (auto v = json_loads_finite(raw)) return *v;
  return py_json_quote(raw);
}

}  // namespace vllm::api
