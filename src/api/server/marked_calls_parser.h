// Tool-call formats whose calls a parser can only read once the output is complete: a marker
// somewhere in the text (Olmo 3's <function_calls>, Phi-4-mini's functools[) and, for some, a
// call list at the very start of the output without one. vLLM's parsers for them read whole
// outputs with a regex and an ast / json parse; their streams send nothing (phi4_mini_json) or
// guess (olmo3). Here one stream serves every such format:
//
//   - text that cannot begin a call list goes out as content as it comes; a possible beginning
//     of the marker at the end of a delta is held until the next;
//   - from the marker on (or from the start, when the start may be a call list) the text is held
//     to the end of the output, then read as the whole response reads it: its calls are sent,
//     or, when it holds none, the held text as content.
//
// So a stream ends as the whole response does, except that text before a marker went out as
// content while the whole response (as vLLM's) drops it when calls follow.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/server/tool_parsers.h"

namespace vllm::api {

using NamedCalls = std::vector<std::pair<std::string, std::string>>;  // name, JSON arguments

struct MarkedCallsFormat {
  ToolParserKind kind;
  std::string_view marker;
  // Whether an output beginning with this text may be a call list without the marker
  // (nullopt: not known yet). Null: only the marker begins one.
  std::function<std::optional<bool>(std::string_view)> start_may_be_calls;
  // The whole output's calls as vLLM reads them: nullopt when it holds none (it is content);
  // an empty list when a call list was read but held no calls (the message has no content).
  std::function<std::optional<NamedCalls>(std::string_view)> read;
  // With calls, the text before the marker stays the content (else it is dropped).
  bool keep_text_before = false;
};

std::unique_ptr<ToolCallParser> make_marked_calls_parser(MarkedCallsFormat format,
                                                         bool whole_response);

// --tool-call-parser phi4_mini_json (Phi-4-mini; vLLM 0.33's Phi4MiniJsonToolParser): the calls
// are a JSON array of {"name", "arguments" | "parameters"} objects after "functools", anywhere
// in the output; the text around it is dropped. vLLM cuts the array at its first "]" and, when
// that is not JSON, answers an empty message; here the array is read whole (a call whose
// arguments hold an array or a "]" is read), and an array that is not JSON leaves the output
// as content.
std::unique_ptr<ToolCallParser> make_phi4_mini_json_tool_parser(bool whole_response);
std::optional<NamedCalls> parse_phi4_mini_json_calls(std::string_view text);

// --tool-call-parser internlm (InternLM2 / 2.5; vLLM 0.33's Internlm2ToolParser): one call, the
// JSON object {"name", "parameters" | "arguments"} from the first "{" after
// <|action_start|><|plugin|> up to <|action_end|> (or the end); the text before it is the
// content (null when empty), the text after it dropped. Where vLLM's parser raises (two calls,
// text that is not such an object) the output is content here.
std::unique_ptr<ToolCallParser> make_internlm_tool_parser(bool whole_response);
std::optional<NamedCalls> parse_internlm_calls(std::string_view text);

}  // namespace vllm::api
