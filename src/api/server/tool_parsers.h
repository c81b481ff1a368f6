// Tool-call parsers: model output text -> OpenAI tool calls, as vLLM's `--tool-call-parser`
// parsers read it, plus the two formats vLLM forces through structured output:
//   hermes       (Qwen2.5 / Qwen3, Hermes): content, then <tool_call>{"name", "arguments"}
//                </tool_call> blocks; content is the text before the first tag
//   llama3_json  (Llama 3.x): a whole response reads every JSON call object {"name",
//                "arguments" | "parameters"} starting at a "{" (vLLM 0.33's reader: the text
//                around them ignored, content null when tools are called, everything content
//                when one "{" starts no valid call); a stream only an output that starts with
//                <|python_tag|> or "{", objects separated by two characters ("; ")
//   mistral      [TOOL_CALLS] then a JSON array of {"name", "arguments"}; content is the text
//                before [TOOL_CALLS]
//   named        tool_choice naming a function: the whole output is its arguments object
//   required     tool_choice "required": a JSON array of {"name", "parameters"}
//   openai       gpt-oss (harmony): calls are messages to functions.NAME, read by
//                HarmonyStreamSplitter (harmony_parser.h), not by a ToolCallParser
//   glm45        GLM-4.5 / 4.6 / 4.7 (glm47 is the same parser, as in vLLM): content, then
//                <tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value>...</tool_call>
//                blocks with bare-text values typed by the request's tool schema
//                (glm_tool_parser.h)
//   granite      Granite 3.0 / 3.1: <|tool_call|> or <tool_call>, then a JSON array of calls
//                (granite_tool_parser.h)
//   olmo3, phi4_mini_json, internlm  calls read once the output is complete
//                (marked_calls_parser.h)
//   minimax_m2   MiniMax-M2: content, then <minimax:tool_call> blocks of <invoke name="NAME">
//                <parameter name="K">V</parameter>...</invoke> calls, values typed by the
//                request's tool schema (minimax_tool_parser.h)
//   ernie45      ERNIE 4.5: content, then <tool_call>{"name", "arguments"}</tool_call> blocks
//                read when the output ends (ernie_tool_parser.h)
//   kimi_k2      Kimi K2: content, then <|tool_calls_section_begin|> and calls
//                <|tool_call_begin|>functions.NAME:N<|tool_call_argument_begin|>{...}
//                <|tool_call_end|>, the model's header as the call id (kimi_tool_parser.h)
// Arguments are re-serialized as Python's json.dumps(..., ensure_ascii=False) writes them
// (py_json.h), except for `named`, whose arguments are the output text itself (as vLLM).
//
// One incremental parser serves both modes: streaming feeds it the text deltas and sends what
// it reports; a whole response feeds it everything at once. So a stream's deltas reassemble
// to the non-streamed message. When the text turns out not to be a valid call, a whole
// response falls back as vLLM does (the text stays content); a stream cannot take back what
// it already sent and continues the rest as content.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::api {

enum class ToolParserKind {
  kHermes,
  kLlama3Json,
  kMistral,
  kNamed,
  kRequired,
  kOpenAI,
  kGlm45,
  kMinimaxM2,
  kQwen3Coder,
  kPythonic,
  kDeepseekV3,
  kDeepseekV31,
  kSeedOss,
  kOlmo3,
  kPhi4MiniJson,
  kGranite,
  kInternlm,
  kKimiK2,
  kErnie45
};

// --tool-call-parser NAME -> kind; nullopt for a name not implemented here.
std::optional<ToolParserKind> tool_parser_by_name(const std::string& name);
// The names accepted by --tool-call-parser, for messages.
const char* tool_parser_names();

// One piece of a streamed tool call (vLLM's DeltaToolCall).
struct ToolCallDelta {
  int index = 0;
  bool header = false;  // the first piece of a call: carries id, type and name
  std::string id, name;
  std::string arguments;  // a fragment (the header's is "")
};

// What one feed (or finish) produced.
struct ParsedDelta {
  std::string content;
  std::vector<ToolCallDelta> calls;
};

// Streams what `args` (a call's arguments so far) adds to `streamed` (what went out for call
// `index`) and records it as sent. False, sending nothing, when `args` is longer but does not
// extend `streamed`: a fragment that went out cannot be taken back.
inline bool stream_args_extension(std::string& streamed, const std::string& args, int index,
                                  ParsedDelta& out) {
  if (args.size() <= streamed.size()) return true;
  if (args.compare(0, streamed.size(), streamed) != 0) return false;
  ToolCallDelta f;
  f.index = index;
  f.arguments = args.substr(streamed.size());
  out.calls.push_back(std::move(f));
  streamed = args;
  return true;
}

struct ToolCall {
  std::string id, name, arguments;
};

// What a parser needs from the request beyond the output text.
struct ToolParserOptions {
  std::string named_function;  // kNamed: the function tool_choice names
  // kGlm45, kMinimaxM2: the request's tools (as protocol.h keeps them): calls to other names are
  // dropped and argument values are typed by each function's parameter schema, as vLLM does.
  nlohmann::ordered_json tools;
  // kGlm45: <think> / </think> in the content are reasoning markup (a reasoning parser runs and
  // the request thinks), not text; kKimiK2: the same for </think> (dropped). kMinimaxM2: a
  // reasoning parser runs, so a </think> in the content is dropped.
  bool reasoning_markup = false;
  // The whole output comes in one feed (extract_tool_calls): a call's arguments are reported
  // when it ends, never as a partial prefix that a truncated call could contradict.
  bool whole_response = false;
  // kGlm45, kMinimaxM2, kQwen3Coder, kSeedOss, kGranite, kKimiK2: tool_choice "none" with tools
  // given, where vLLM's engine suppresses the tool events: every call is dropped and the text
  // outside call markup is the content as written (leading whitespace held until a word, nothing
  // stripped).
  bool suppress_calls = false;
};

// Tool call ids as vLLM makes them: "chatcmpl-tool-" + 32 hex digits; Mistral's are 9
// alphanumerics.
std::string make_tool_call_id(ToolParserKind kind);

class ToolCallParser {
 public:
  // `named_function`: the function name for kNamed. Null for kOpenAI (harmony_parser.h).
  static std::unique_ptr<ToolCallParser> make(ToolParserKind kind,
                                              const std::string& named_function = {});
  static std::unique_ptr<ToolCallParser> make(ToolParserKind kind, const ToolParserOptions& o);
  virtual ~ToolCallParser() = default;

  // Feeds generated text (whole UTF-8 characters); appends what became certain to `out`.
  virtual void feed(std::string_view text, ParsedDelta& out) = 0;
  // End of the output: releases held-back text, checks that the last call is complete.
  virtual void finish(ParsedDelta& out) = 0;

  // The output broke the format after at least its start (invalid JSON, a missing key).
  bool failed() const { return failed_; }
  // Calls begun so far (a header was reported).
  int num_calls() const { return num_calls_; }

 protected:
  // Reports a call known whole at once: its header (a new id of `kind`), then its arguments.
  void emit_whole_call(ToolParserKind kind, std::string name, std::string arguments,
                       ParsedDelta& out) {
    ToolCallDelta h;
    h.index = num_calls_++;
    h.header = true;
    h.id = make_tool_call_id(kind);
    h.name = std::move(name);
    out.calls.push_back(std::move(h));
    ToolCallDelta a;
    a.index = num_calls_ - 1;
    a.arguments = std::move(arguments);
    out.calls.push_back(std::move(a));
  }

  bool failed_ = false;
  int num_calls_ = 0;
};

// The non-streaming result: vLLM's ExtractedToolCallInformation.
struct ExtractedToolCalls {
  bool tools_called = false;
  std::vector<ToolCall> calls;
  std::optional<std::string> content;
};
ExtractedToolCalls extract_tool_calls(ToolParserKind kind, const std::string& output,
                                      const std::string& named_function = {});
ExtractedToolCalls extract_tool_calls(ToolParserKind kind, const std::string& output,
                                      ToolParserOptions o);

}  // namespace vllm::api
