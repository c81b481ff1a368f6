// GLM-4.5 / 4.6 / 4.7 tool calls (vLLM's `--tool-call-parser glm45` / `glm47`, as of vLLM
// 0.33's engine-based Glm47MoeParser, vllm/parser/glm47_moe.py over
// vllm/parser/engine/parser_engine.py):
//
//   I'll look it up.
//   <tool_call>get_weather
//   <arg_key>city</arg_key>
//   <arg_value>Beijing</arg_value>
//   </tool_call>
//
// - The name is the text between <tool_call> and the first <arg_key> (or </tool_call>),
//   stripped; a call with an empty name, or a name not among the request's tools (when it has
//   any), is dropped.
// - Arguments are the <arg_key>K</arg_key>\s*<arg_value>V</arg_value> pairs of the call, read
//   as vLLM's regex reads them (the key stripped, the value as written; a repeated key keeps
//   its first place and its last value). With the function's parameter schema, a value is
//   coerced to the property's types (schema_coerce.h: "5" is 5 for an integer, "[1]" a list for
//   an array); without one it stays a string. Written as json.dumps(..., ensure_ascii=False).
// - Content is the text before the first <tool_call>, stripped (null when empty) when a call
//   was made; without a call it is all text outside <tool_call> blocks (null when empty, or
//   when it is only whitespace around dropped calls). Text after the first call is dropped
//   once a call is kept.
// - A call the output ends inside (max_tokens) still counts, with the pairs it completed.
// - With reasoning markup (a reasoning parser runs), <think>...</think> inside the content is
//   reasoning, not content, and a stray </think> is dropped; a <tool_call> ends it.
//
// Streams report the header (id, name) once the name is complete, each argument pair once it
// is complete, and a string value's text as it arrives. Where vLLM's stream and its whole
// response disagree, the stream here follows the whole response (text after calls, content
// around dropped calls), except where a stream cannot know in time, as in vLLM's:
// - whitespace before the content's first word is sent with that word, though the whole
//   response strips it when a call follows;
// - a string value already streamed that its </arg_value> never closes (the call or the output
//   ends first), or a key given twice, leaves the streamed arguments short of the whole
//   response's (vLLM's stream stops there too).
#pragma once

#include <memory>

#include "api/server/tool_parsers.h"

namespace vllm::api {

std::unique_ptr<ToolCallParser> make_glm45_tool_parser(const ToolParserOptions& o);

}  // namespace vllm::api
