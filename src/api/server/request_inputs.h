// From a parsed request to what the engine runs: the chat template (the server's, or a trusted
// request's own; continue_final_message), tokenization with or without special tokens,
// truncate_prompt_tokens, bad_words as token ids, and the echo text.
#pragma once

#include <string>
#include <vector>

#include "api/server/protocol.h"
#include "api/server/reasoning_parser.h"
#include "api/server/serving.h"
#include "api/server/strict_tools.h"
#include "api/server/tool_parsers.h"

namespace vllm::api {

class LLM;

struct InputOptions {
  int32_t max_model_len = 0;
  // --trust-request-chat-template: a request may bring its own chat_template.
  bool trust_request_chat_template = false;
  // --reasoning-parser qwen3 / glm45: a grammar starts after the reasoning's end token.
  std::optional<ReasoningParserKind> reasoning_parser;
  // gpt-oss: chat output is parsed as harmony, which needs its special tokens in the text.
  bool harmony = false;
  // --enable-auto-tool-choice with --tool-call-parser: the parser for tool_choice "auto".
  std::optional<ToolParserKind> auto_tool_parser;
  // --response-role: the reply's role when the prompt ends with the generation prompt.
  std::string response_role = "assistant";
  // --exclude-tools-when-tool-choice-none: tool_choice "none" keeps the tools out of the prompt.
  bool exclude_tools_when_tool_choice_none = false;
  // vLLM's structured_outputs_config.enable_in_reasoning: a grammar does not wait for the
  // reasoning's end.
  bool grammar_in_reasoning = false;
  // --tool-strict-level (strict_tools.h).
  ToolStrictLevel tool_strict_level = ToolStrictLevel::kAuto;
};

struct PreparedInputs {
  std::vector<PromptInput> prompts;
  GenerationOptions options;
};

// Tokenizes a prompt, refusing one longer than max_model_len as soon as that is certain: the
// work is bounded by the context, not by the text (an 8 MB prompt is refused unread).
std::vector<int32_t> encode_prompt(const LLM& llm, const std::string& text, bool add_special,
                                   int32_t max_model_len, const char* field);

// encode_prompt, except that a prompt the request will truncate (truncate_prompt_tokens) is
// tokenized whole: truncation needs its end.
std::vector<int32_t> encode_truncatable(const LLM& llm, const std::string& text, bool add_special,
                                        const GenerationRequest& r, int32_t max_model_len,
                                        const char* field);
// truncate_prompt_tokens: keeps the last (left truncation, vLLM's default) or the first k tokens
// (-1: max_model_len). Returns whether anything was cut; throws ApiError(400) when k is above
// max_model_len.
bool truncate_prompt(std::vector<int32_t>& ids, const GenerationRequest& r, int32_t max_model_len);
// A message list through the chat template: the server's, or the request's own `chat_template`
// (refused unless `trusted`: --trust-request-chat-template). ApiError(400) for an untrusted
// template or a final message the template cannot continue (continue_final_message).
std::string render_chat(const LLM& llm, const ojson& messages, const ojson& tools,
                        bool add_generation_prompt, const ojson& kwargs,
                        const std::optional<std::string>& chat_template, bool trusted,
                        bool continue_final_message);

// Both throw ApiError(400) naming the field at fault; they also fill req.sampling's
// bad_words_token_ids and compile its structured-output constraint (or forced tool call) into
// req.sampling.grammar.
PreparedInputs prepare_chat(const LLM& llm, ChatRequest& req, const InputOptions& opts);
PreparedInputs prepare_completion(const LLM& llm, CompletionRequest& req, const InputOptions& opts);

}  // namespace vllm::api
