// Qwen3-Coder / Qwen3.5 XML tool calls (vLLM's `--tool-call-parser qwen3_coder` / `qwen3_xml`,
// as of vLLM 0.33's engine-based Qwen3Parser, vllm/parser/qwen3.py over
// vllm/parser/engine/parser_engine.py):
//
//   I'll look it up.
//   <tool_call>
//   <function=get_weather>
//   <parameter=city>
//   Beijing
//   </parameter>
//   </function>
//   </tool_call>
//
// - A call starts at <function= (inside a <tool_call> block or not); its name runs to the next
//   '>' and is stripped. A call whose name is empty is dropped; any other name is kept, whether
//   or not the request's tools have it (vLLM does not check it). Text inside a <tool_call> block
//   but outside a <function=...> is dropped; </function> ends a call, and so do </tool_call>,
//   <tool_call> and another <function= when it is missing.
// - Arguments are read from the call's body as vLLM's _PARAM_RE reads them:
//   <\s*parameter\s*=\s*NAME> VALUE, the value ending at <\s*/\s*parameter\s*> or before the next
//   <\s*parameter\s*= (a value with neither is left out); one leading and one trailing newline
//   are taken off the value; a repeated key keeps its first place and its last value. With the
//   function's parameter schema a value is coerced to the property's types (schema_coerce.h),
//   without one it stays a string. Written as json.dumps(..., ensure_ascii=False).
// - Content: with a call, the text before the first call's markup, stripped (null when empty);
//   without, all the text outside call markup, as written (null when empty).
// - A call the output ends inside (max_tokens) still counts, with the parameters it completed.
// - With reasoning markup (a reasoning parser runs), a </think> in the content is dropped.
//
// Streams report the header (id, name) once the name's '>' has come, each parameter once it is
// complete, and a string value's text as it arrives (its trailing newline held back). Where
// vLLM's stream and its whole response disagree, the stream here follows the whole response
// (the name stripped, no text after the calls), except where a stream cannot know in time, as
// in vLLM's:
// - whitespace before the content's first word is sent with that word, though the whole
//   response strips it when a call follows;
// - a string value already streamed that no </parameter> or next <parameter= closes, or a key
//   given twice, leaves the streamed arguments short of the whole response's (vLLM's stream
//   stops there too).
#pragma once

#include <memory>

#include "api/server/tool_parsers.h"

namespace vllm::api {

// `seed`: Seed-OSS's (--tool-call-parser seed_oss, vLLM's SeedOssParser): the same grammar in
// <seed:tool_call> blocks, </seed:think> as the reasoning's end.
std::unique_ptr<ToolCallParser> make_qwen3_coder_tool_parser(const ToolParserOptions& o,
                                                             bool seed = false);

}  // namespace vllm::api
