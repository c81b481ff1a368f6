// Checked JSON number conversion: the range test happens on the stored representation
// (int64, uint64 or double) before any conversion, so no cast can leave its type's range.
#include "tokenizer/json_number.h"

#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace vllm::tok {

namespace {

// Doubles with magnitude below 2^53 are exact integers when integral, and convert to int64
// without leaving its range.
constexpr double kExactIntLimit = 9007199254740992.0;

[[noreturn]] void fail(std::string_view field, const nlohmann::json& v, const std::string& want) {
  throw JsonFieldError("field '" + std::string(field) + "': " + json_excerpt(v) + " is not " +
                       want);
}

std::string range(int64_t lo, int64_t hi) {
  return "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
}

std::string range(double lo, double hi) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "[%g, %g]", lo, hi);
  return buf;
}

std::string joined(std::string_view prefix, const char* key) {
  return prefix.empty() ? std::string(key) : std::string(prefix) + "." + key;
}

}  // namespace

std::string json_excerpt(const nlohmann::json& v) {
  std::string s;
  if (v.is_array()) {
    s = "an array";
  } else if (v.is_object()) {
    s = "an object";
  } else {
    s = v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

int64_t json_int(const nlohmann::json& v, std::string_view field, int64_t lo, int64_t hi) {
  const std::string want = "an integer in " + range(lo, hi);
  int64_t x = 0;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (hi < 0 || u > static_cast<uint64_t>(hi)) fail(field, v, want);
    x = static_cast<int64_t>(u);
  } else if (v.is_number_integer()) {
    x = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d) || std::floor(d) != d || std::fabs(d) >= kExactIntLimit)
      fail(field, v, want);
    x = static_cast<int64_t>(d);
  } else {
    fail(field, v, want);
  }
  if (x < lo || x > hi) fail(field, v, want);
  return x;
}

double json_float(const nlohmann::json& v, std::string_view field, double lo, double hi) {
  const std::string want = "a finite number in " + range(lo, hi);
  if (!v.is_number()) fail(field, v, want);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi) fail(field, v, want);
  return d;
}

int64_t json_int_or(const nlohmann::json& obj, const char* key, int64_t def, int64_t lo, int64_t hi,
                    std::string_view field_prefix) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return def;
  return json_int(*it, joined(field_prefix, key), lo, hi);
}

double json_float_or(const nlohmann::json& obj, const char* key, double def, double lo, double hi,
                     std::string_view field_prefix) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return def;
  return json_float(*it, joined(field_prefix, key), lo, hi);
}

bool json_bool_or(const nlohmann::json& obj, const char* key, bool def,
                  std::string_view field_prefix) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return def;
  if (!it->is_boolean()) fail(joined(field_prefix, key), *it, "true or false");
  return it->get<bool>();
}

}  // namespace vllm::tok
