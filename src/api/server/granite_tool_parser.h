// Granite 3.0 / 3.1 tool calls (vLLM's `--tool-call-parser granite`, as of vLLM 0.33's
// engine-based GraniteParser, vllm/parser/granite.py over vllm/parser/engine/):
//
//   <|tool_call|>[{"name": "get_weather", "arguments": {"city": "SF"}}]   (3.0: a special token)
//   <tool_call>[{"name": "get_weather", "arguments": {"city": "SF"}}]      (3.1: plain text)
//
// - A marker opens a JSON array; each {...} element is one call and the array's "]" ends it (no
//   closing marker). Anything but whitespace, "[", "{", "," or "]" where the array expects one
//   leaves it: that character and the rest are text (the marker is dropped).
// - The name is the first "name": "..." in the element's text (vLLM's regex, no unescaping),
//   stripped, else the "name" of the element read as JSON; a call without one is dropped. Names
//   not among the request's tools are kept.
// - The arguments are the text of the element's top-level "arguments" object as written (also
//   when the output ends inside it); "{}" without one; when "arguments" is not an object, the
//   element read as JSON gives them (a string as is, anything else as json.dumps writes it).
//   With the function's parameter schema, string values are then coerced to their property's
//   types as vLLM's engine does (nested objects and arrays through "properties" / "items"), and
//   when any changed the arguments are written again by json.dumps(..., ensure_ascii=False).
// - Content is the text before the first call, stripped (null when empty), when a call was
//   made; without one, all text outside the arrays (null when empty).
//
// Streams send each call whole when its element closes (or the output ends in it), and the
// content the whole response has: text after the first call is dropped, whitespace before a
// call waits and is dropped with it, whitespace before the first word goes out with it (the
// whole response strips it).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "api/server/tool_parsers.h"

namespace vllm::api {

std::unique_ptr<ToolCallParser> make_granite_tool_parser(const ToolParserOptions& o);

// The arguments of one call element as vLLM's engine reads them (before schema coercion), also
// of an element the output ended inside.
std::string granite_element_arguments(const std::string& element);

// vLLM's ParserEngine._fix_arg_types: `args` with its string values coerced by the function's
// parameter schema (tools as protocol.h keeps them); unchanged when nothing changed, or when
// it is not a JSON object.
std::string fix_arg_types(const std::string& args, const nlohmann::ordered_json& tools,
                          const std::string& name);

}  // namespace vllm::api
