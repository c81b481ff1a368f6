// Kimi K2 tool calls (vLLM's `--tool-call-parser kimi_k2`, as of vLLM 0.33's engine-based
// KimiK2Parser, vllm/parser/kimi_k2.py over vllm/parser/engine/):
//
//   Let me check.<|tool_calls_section_begin|>
//   <|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Paris"}
//   <|tool_call_end|><|tool_calls_section_end|>
//
// - The content is the text before the first <|tool_calls_section_begin|>, as written (null when
//   empty, and when only whitespace once a call is returned). Everything after that marker
//   belongs to the tool section, even after <|tool_calls_section_end|>: text between calls and
//   after the section is dropped, a second section adds its calls.
// - Each <|tool_call_begin|> in the section starts a call; its header runs to
//   <|tool_call_argument_begin|> (any other marker in it is header text). The header, stripped,
//   is the call's id when it starts with a match of Python's `.+:\d+` (the longest, on its first
//   line): the name is the id up to its first ":", less a "functions." prefix. A header without
//   that shape, or with an empty name, drops the call. The tool need not be among the request's.
// - The arguments are the text up to <|tool_call_end|> (or <|tool_calls_section_end|>), stripped,
//   "{}" when empty, as written (not re-serialized, not checked as JSON).
// - An output that ends inside a call still returns it: inside the header, with the header's id
//   and name when it has the shape above, otherwise named by the whole stripped header with a
//   new id, arguments "{}"; inside the arguments, with the arguments so far.
// - With a reasoning parser that thinks (`reasoning_markup`), a </think> in the content is
//   dropped; otherwise it is text. <think> is text either way. Markers outside a section are text.
// - tool_choice "none" (`suppress_calls`): the calls are dropped, the content is kept as written.
//
// Call ids are the model's own ("functions.get_weather:0"): Kimi's chat template writes them back
// into the next prompt. Streams send the header once <|tool_call_argument_begin|> arrives and the
// arguments as they come, stripped as the whole response strips them, so a stream reassembles to
// the whole response (vLLM's stream sends the arguments unstripped, nothing for empty ones, and
// the header of an unfinished call unstripped).
#pragma once

#include <memory>

#include "api/server/tool_parsers.h"

namespace vllm::api {

std::unique_ptr<ToolCallParser> make_kimi_k2_tool_parser(const ToolParserOptions& o);

}  // namespace vllm::api
