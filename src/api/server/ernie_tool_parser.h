// ERNIE 4.5 tool calls (vLLM 0.33's `--tool-call-parser ernie45`, Ernie45ToolParser):
//
//   abc
//   </think>
//
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Paris"}}
//   </tool_call>
//
// As vLLM: an output without <tool_call> is content, as written. With one, the calls are what
// vLLM's regex <tool_call>\s*(\{.*?\})\s*</tool_call> finds (the shortest brace-to-brace text
// before a closing tag), each read as JSON: "name" (absent: "") and "arguments" (absent: {}),
// written back as Python's json.dumps(..., ensure_ascii=False) writes them. One that is not JSON,
// or whose name is not a string, makes the whole output content (vLLM's parser falls back so).
// The content is the text before the first <tool_call> less its trailing line feeds, null when
// empty; text after the calls is dropped. An output with <tool_call> and no complete call has no
// calls and that content.
//
// Streams send the text before <tool_call> as it comes (trailing line feeds held) and the calls
// when the output ends, so a stream reassembles to the whole response (vLLM's stream sends each
// call when its </tool_call> arrives and strips line feeds its own way).
#pragma once

#include <memory>

#include "api/server/tool_parsers.h"

namespace vllm::api {

std::unique_ptr<ToolCallParser> make_ernie45_tool_parser();
// Whether a parser made by make_ernie45_tool_parser saw <tool_call> and read its calls (not
// falling back to content).
bool ernie45_called(const ToolCallParser& p);

}  // namespace vllm::api
