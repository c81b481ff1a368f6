// Raw text arguments typed by the request's tool schema, as vLLM's parser engine does for
// formats whose argument values are bare text (GLM's <arg_value>): extract_types_from_schema and
// coerce_to_schema_type of vllm/tool_parsers/utils.py, with Python's int(), float() and
// json.loads deciding what a text is. The result is the JSON text json.dumps(...,
// ensure_ascii=False) writes for the coerced value.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::api {

// The request's function named `name` (tools[i].function), or null.
const nlohmann::ordered_json* tool_function(const nlohmann::ordered_json& tools,
                                            const std::string& name);
// Whether a call to `name` is kept: a non-empty name the request's tools define, any when
// there are none (vLLM's GLM and MiniMax parsers drop the rest).
inline bool tool_call_allowed(const nlohmann::ordered_json& tools, const std::string& name) {
  return !name.empty() && (tools.empty() || tool_function(tools, name) != nullptr);
}
// That function's parameters.properties (an empty object when it has none, or is not there):
// the schemas the bare-text parsers type argument values by.
nlohmann::ordered_json tool_properties(const nlohmann::ordered_json& tools,
                                       const std::string& name);

// JSON text of argument `key`'s raw `value`: coerced by its property schema when `properties`
// has one that is an object (coerce_to_schema_json), else the string itself (vLLM's
// _fix_arg_types and the GLM parser's coercion both type only by such a schema).
std::string property_value_json(const nlohmann::ordered_json& properties, const std::string& key,
                                const std::string& value);

// The JSON Schema types a property schema allows: "type" (a string or a list), the types of
// "enum" values, and those of "anyOf" / "oneOf" / "allOf" alternatives; ["string"] when
// nothing says.
std::vector<std::string> schema_types(const nlohmann::ordered_json& schema);

// True when every type the schema allows is a string (then a raw value stays a string, and its
// text can be streamed before it ends).
bool schema_keeps_string(const nlohmann::ordered_json& schema);

// JSON text of `raw` coerced to the schema's types, tried in vLLM's order null > integer >
// number > boolean > object > array > string; when none applies, json.loads(raw) if that is
// finite JSON, else the string itself.
std::string coerce_to_schema_json(const std::string& raw, const nlohmann::ordered_json& schema);

// Python's int(text) as a decimal string (nullopt when int() raises). ASCII digits only.
std::optional<std::string> py_int(std::string_view text);
// Python's float(text) when finite, as vLLM's "number" coercion writes it: an integral value
// as the exact integer (int(val)), otherwise repr(). nullopt when float() raises or the value
// is not finite.
std::optional<std::string> py_finite_number(std::string_view text);

}  // namespace vllm::api
