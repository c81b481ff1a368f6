// Pythonic tool calls (vLLM's `--tool-call-parser pythonic`, vLLM 0.33's PythonicToolParser):
// Llama 3.2 and Gemma 3 with vLLM's pythonic chat templates, ToolACE and others write a whole
// response that is a Python list of calls with keyword arguments:
//
//   [get_weather(city="Paris", days=3), get_time(tz='UTC')]
//
// vLLM reads such an output only when its TOOL_CALL_REGEX matches at its start and Python's
// ast.parse reads the whole output as a module whose first statement is a list of calls; each
// call's keyword arguments are evaluated as literals (strings of every quoting, prefix, escape
// and implicit concatenation, f-strings without placeholders; ints in every base; floats;
// True / False / None and JSON's true / false / null; lists, tuples and sets as lists; dicts
// with literal keys; unary +/- on numbers) and written as json.dumps(..., ensure_ascii=False).
// Anything else (text around the list, a positional argument, a nested call, a name, bytes, a
// placeholder, a syntax error) is not a tool call: the whole output is the content.
//
// Streams: an output that does not begin with "[" name "(" is content as it comes; one that
// does is held until the end and then sent as the whole response reads it (vLLM's stream sends
// partial calls as it guesses them, and sends nothing of an output like "[a link](...)").
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/server/tool_parsers.h"

namespace vllm::api {

std::unique_ptr<ToolCallParser> make_pythonic_tool_parser();

// The calls of a whole output as vLLM reads them (name, JSON arguments); nullopt when the
// output is not a pythonic call list.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_pythonic_calls(
    std::string_view text);

// --tool-call-parser olmo3 (Olmo 3; vLLM 0.33's Olmo3PythonicToolParser): calls one per line,
// inside the first <function_calls>...</function_calls> of the output or, without one, as the
// whole output; the lines are stripped, blank ones dropped, and the rest read as the pythonic
// list "[" + lines joined by ", " + "]" (so JSON's null / true / false read too). Text around
// the block is dropped when it holds calls. Streams follow marked_calls_parser.h.
std::unique_ptr<ToolCallParser> make_olmo3_tool_parser(bool whole_response);
std::optional<std::vector<std::pair<std::string, std::string>>> parse_olmo3_calls(
    std::string_view text);

}  // namespace vllm::api
