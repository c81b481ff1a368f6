// MiniMax-M2 tool calls (vLLM's `--tool-call-parser minimax_m2`, as of vLLM 0.33's engine-based
// MinimaxM2Parser, vllm/parser/minimax_m2.py over vllm/parser/engine/parser_engine.py and
// streaming_parser_engine.py):
//
//   Let me check.
//   <minimax:tool_call>
//   <invoke name="get_weather">
//   <parameter name="city">Seattle</parameter>
//   <parameter name="days">3</parameter>
//   </invoke>
//   <invoke name="now">
//   </invoke>
//   </minimax:tool_call>
//
// The text is cut into tags as vLLM's incremental lexer cuts it (the longest tag wins, a text
// that may still become a longer tag waits) and run through the same state machine:
// - Each <invoke name="NAME"> (or name='NAME', or name=NAME) starts a call, inside a
//   <minimax:tool_call> block or not; </invoke> ends it. Text between <minimax:tool_call> and the
//   first <invoke>, and between calls, is dropped; </minimax:tool_call> closes the block.
// - The name (stripped) must be among the request's tools when it has any; other calls are
//   dropped. An empty name is read from a `"name": "..."` in the call's body, as vLLM's
//   _try_extract_name does.
// - Arguments are the <parameter name="K">V</parameter> tags of the call as vLLM's _PARAM_RE
//   reads them: whitespace allowed inside the tags, a value also ended by the next
//   <parameter name=, the key stripped, the value verbatim, a repeated key keeping its first place
//   and its last value, a parameter never closed left out. With the function's parameter schema
//   a value is typed (schema_coerce.h); written as json.dumps(..., ensure_ascii=False).
// - Content is the text before the first call, stripped (null when empty) when a call is
//   returned; without one it is all text outside the calls (null when empty, or only whitespace
//   around dropped calls). Text after the first call is dropped when a call's name passes as
//   written (vLLM decides that before it strips names: `<invoke name=" f ">` returns the call
//   and keeps the text after it).
// - A call the output ends inside (max_tokens) still counts, with its closed parameters; the
//   rest of the output after a missing </invoke> belongs to that call's body.
// - With a reasoning parser (`reasoning_markup`), a </think> in the content is dropped; without
//   one it is text. <think> is text either way.
//
// Streams report the header (id, name) once the name is complete, and the part of the
// arguments' JSON no later text can change, as vLLM's _safe_arg_prefix decides it: every value
// but the last, and the last one's text as it arrives when it stays a string. Where vLLM's stream
// and its whole response disagree, the stream here follows the whole response (text after calls,
// content around dropped calls, names with spaces around them), except where a stream cannot
// know in time, as in vLLM's:
// - whitespace before the content's first word is sent with that word, though the whole
//   response strips it when a call follows;
// - a string value already streamed that the call or the output ends before its </parameter>,
//   or a key given again after later keys, leaves the streamed arguments short of the whole
//   response's (vLLM's stream stops there too).
// A stream here holds back the start of a closing tag written with spaces (`< /parameter>`),
// which vLLM's stream sends as value text before it sees the tag.
// Not read as vLLM reads them: special tokens of the vocabulary other than these tags (vLLM's
// engine drops their text; MiniMax-M2's tags are not special tokens), tags its vocabulary has as
// one token but written out in several (vLLM's stream reads those by token id only, its whole
// response by text, as here), and a call with an empty name whose body is a JSON object (vLLM
// takes its "name" and "arguments"; dropped here).
#pragma once

#include <memory>

#include "api/server/tool_parsers.h"

namespace vllm::api {

std::unique_ptr<ToolCallParser> make_minimax_m2_tool_parser(const ToolParserOptions& o);

}  // namespace vllm::api
