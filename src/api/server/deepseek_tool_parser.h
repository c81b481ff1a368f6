// DeepSeek tool calls (vLLM 0.33's `--tool-call-parser deepseek_v3`, DeepSeek-V3 / R1 and the
// R1 distills' templates, and `deepseek_v31`, DeepSeek-V3.1), between special tokens:
//
//   deepseek_v3:  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather
//                 ```json
//                 {"city": "Paris"}
//                 ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>
//   deepseek_v31: <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city":
//   "Paris"}
//                 <｜tool▁call▁end｜><｜tool▁calls▁end｜>
//
// As vLLM: an output without <｜tool▁calls▁begin｜> is content. With it, the calls are what
// vLLM's regex finds (each name and arguments as written: the arguments are not re-serialized,
// not even checked as JSON), and the content is the text before it (deepseek_v3: and after the
// last <｜tool▁calls▁end｜>), null when empty. Streams send the content before the calls as it
// comes and the calls when the output ends.
#pragma once

#include <memory>

#include "api/server/tool_parsers.h"

namespace vllm::api {

std::unique_ptr<ToolCallParser> make_deepseek_tool_parser(bool v31);
// Whether a parser made by make_deepseek_tool_parser saw <｜tool▁calls▁begin｜>.
bool deepseek_saw_calls(const ToolCallParser& p);

}  // namespace vllm::api
