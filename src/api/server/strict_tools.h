// Strict tool calling (vLLM 0.33's structural tags for tools, VLLM_ENFORCE_STRICT_TOOL_CALLING
// on, its default): under `--tool-call-parser hermes` / qwen3_json, llama3_json / llama4_json,
// qwen3_coder / qwen3_xml, minimax_m2, deepseek_v3, deepseek_v31, glm45 / glm47, kimi_k2 and
// openai (gpt-oss), a request whose tool calls must be constrained gets a structural tag in the
// model's own call format, built as vLLM's Parser._apply_structural_tag builds it (its hermes,
// minimax, glm_4_7 and harmony builders; xgrammar's builtin llama, qwen_3_coder, deepseek_r1,
// deepseek_v3_1, glm_4_7 and kimi):
//   hermes       <tool_call>\n{"name": "NAME", "arguments": ARGS}\n</tool_call> (or compact)
//   llama3_json  {"name": "NAME", "parameters": ARGS}
//   qwen3_coder  <tool_call>\n<function=NAME>\n<parameter=K>V</parameter>...\n</function>\n
//                </tool_call> (ARGS in xgrammar's qwen_xml style: strings raw, else JSON)
//   minimax_m2   <minimax:tool_call>\n<invoke name="NAME">\n<parameter name="K">V</parameter>
//                ...</invoke>\n</minimax:tool_call> (ARGS in the minimax_xml style)
//   deepseek_v3  <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME
//                \n```json\nARGS\n```<｜tool▁call▁end｜>...<｜tool▁calls▁end｜>
//   deepseek_v31 the same with NAME<｜tool▁sep｜>ARGS
//   glm45        <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
//                (ARGS in the glm_xml style); a loose tool's keys and their values' basic
//                types are still pinned (vLLM's _glm_4_7_tool_tag), and without
//                --tool-strict-level every auto request is constrained (level function, vLLM's
//                default for GLM)
//   kimi_k2      <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:N
//                <|tool_call_argument_begin|>ARGS<|tool_call_end|>...<|tool_calls_section_end|>
//   openai       <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>ARGS
//                (harmony's other spellings and channels too), after optional analysis and
//                commentary messages; under auto a final message instead
//   * tool_choice "auto": only when a tool is `strict`, --tool-strict-level is function or
//     parameter, or parallel_tool_calls is false (without another structured output): free
//     text, and a call opener must open a call of a given tool;
//   * "required" / named: one or more calls (one for named);
//   * ARGS follow the tool's parameters when the tool is strict (or the level is parameter),
//     else any JSON; for required / named they always follow them (a deliberate difference:
//     vLLM 0.33 leaves a non-strict tool's arguments free there too);
//   * parallel_tool_calls false: at most one call; auto with a response_format: the calls
//     or the response format.
// The calls are then read by the parser, as vLLM's are. Tests: tests/api/strict_tools_test.cpp
// against vLLM's own tags.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "api/server/protocol.h"
#include "api/server/tool_parsers.h"

namespace vllm::api {

// vLLM's --tool-strict-level.
enum class ToolStrictLevel { kAuto, kFunction, kParameter };
std::optional<ToolStrictLevel> tool_strict_level_by_name(const std::string& name);

// Whether vLLM 0.33 constrains this parser's calls with a structural tag (its
// structural_tag_model); every such tag is built here.
bool structures_tool_calls(ToolParserKind k);
// The level without --tool-strict-level: function for glm45 / glm47 (vLLM's GLM parser
// constrains every call's envelope by default), auto for the others.
ToolStrictLevel default_tool_strict_level(ToolParserKind k);

// gpt-oss (harmony): vLLM 0.33's HarmonyParser turns a chat request's structured output into a
// structural tag around harmony's channels (vllm/parser/harmony.py _adjust_output_format): an
// optional analysis message, then the final message (`<|channel|>final<|message|>`, or with
// ` json` / ` <|constrain|>json` for a JSON schema) holding the output, ended by <|end|> or the
// stop token. Otherwise the grammar would force the output from its first token, with no
// channel.
nlohmann::ordered_json harmony_output_tag(const OutputConstraint& c);

// The structural tag for the request's tool calls under parser `k`, or nullopt where vLLM
// puts none (or `k` has none here). `structured` is the request's own structured output
// (response_format, ...), if any.
std::optional<nlohmann::ordered_json> tool_structural_tag(
    ToolParserKind k, const ChatRequest& r, const std::optional<OutputConstraint>& structured,
    ToolStrictLevel level);

}  // namespace vllm::api
