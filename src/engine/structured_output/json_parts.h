// Building blocks shared by the JSON front ends: whitespace, the generic JSON value rules,
// JSON string characters, literal JSON values, integer / number ranges and string formats.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "engine/structured_output/front_ends.h"

namespace vllm::engine::so::json_parts {

Expr ws(const JsonOptions& o);
// One character of JSON string content: a safe character or an escape sequence.
Expr string_char();
// Rules for any JSON value, created once per grammar (on first call).
struct AnyJson {
  int32_t value = -1, object = -1, array = -1, string = -1, number = -1;
};
AnyJson any_json_rules(Grammar& g, const JsonOptions& o, AnyJson& cache);

// A JSON value spelled as it is (objects keep key order), with whitespace allowed between
// tokens as elsewhere.
Expr literal_value(const nlohmann::ordered_json& v, const JsonOptions& o);
std::string dump_string(const std::string& s);  // "..." as json.dumps(ensure_ascii=False)

// Integers in [lo, hi] (nullopt = unbounded), no leading zeros, no "-0".
Expr integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi);
// Decimal numbers (no exponent) x with lo <= x <= hi, or lo < x / x < hi when exclusive;
// bounds are integers.
Expr number_range(std::optional<int64_t> lo, bool lo_excl, std::optional<int64_t> hi, bool hi_excl);
Expr unbounded_number();

// String content (between the quotes) for a `format`; nullopt when unsupported.
std::optional<Expr> format_content(const std::string& format);
const char* supported_formats();

}  // namespace vllm::engine::so::json_parts
