// A finished chat output read as vLLM's chat serving reads it: the reasoning split, then the tool
// parser over the content (declared in serving.h).
#include "api/server/py_str.h"
#include "api/server/serving.h"

namespace vllm::api {

bool parsers_engine_based(ToolParserKind tools, std::optional<ReasoningParserKind> reasoning) {
  // mistral's is engine-based too, but its tool_choice "none" takes its own path in vLLM
  // (vllm/parser/mistral.py); it is left out here, the content stays as written.
  const bool t = tools == ToolParserKind::kQwen3Coder || tools == ToolParserKind::kSeedOss ||
                 tools == ToolParserKind::kMinimaxM2 || tools == ToolParserKind::kGlm45 ||
                 tools == ToolParserKind::kGranite || tools == ToolParserKind::kKimiK2;
  return t && (!reasoning || engine_based(*reasoning));
}

ParsedChatOutput parse_chat_output(const std::string& text,
                                   std::optional<ReasoningParserKind> reasoning,
                                   bool prompt_closed_reasoning,
                                   std::optional<ToolParserKind> tool_parser,
                                   const ToolParserOptions& tool_options) {
  ParsedChatOutput r;
  r.content = text;
  if (reasoning) {
    ReasoningSplit s = split_reasoning(*reasoning, text, prompt_closed_reasoning);
    r.reasoning = std::move(s.reasoning);
    r.content = std::move(s.content);
  }
  if (tool_parser) {
    r.tools = extract_tool_calls(*tool_parser, r.content.value_or(""), tool_options);
    // Of the reasoning parsers here only minimax_m2_append_think is not engine-based in vLLM.
    const bool keep_raw = reasoning == ReasoningParserKind::kMinimaxM2AppendThink;
    if (r.tools.tools_called || (r.content && !keep_raw)) r.content = r.tools.content;
    // vLLM's chat parser: whitespace-only content beside tool calls is null.
    if (r.tools.tools_called && r.content && py_all_space(*r.content)) r.content.reset();
  }
  return r;
}

}  // namespace vllm::api
