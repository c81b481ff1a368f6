// Serving of /v1/completions and /v1/chat/completions on top of AsyncEngine: fans one request
// out into prompts x n engine requests, waits for their admission (so validation errors become
// a 400 before any byte is streamed), then builds either the whole response or its SSE chunks:
// echo (with the prompt's logprobs), prompt_logprobs, token ids, cached-token usage.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/server/harmony_parser.h"
#include "api/server/logprobs_json.h"
#include "api/server/protocol.h"
#include "api/server/reasoning_parser.h"
#include "api/server/tool_parsers.h"
#include "engine/async_engine.h"
#include "tokenizer/tokenizer.h"

namespace vllm::api {

class LLM;

struct ServingContext {
  LLM& llm;
  engine::AsyncEngine& engine;
  std::string model_name;
  // --reasoning-parser qwen3 / glm45 (glm47): <think> split out of chat output.
  std::optional<ReasoningParserKind> reasoning{};
  // --enable-log-outputs (with --enable-log-requests): one line per finished choice with its
  // text, cut to max_log_len characters (-1: whole).
  bool log_outputs = false;
  int64_t max_log_len = -1;
  // gpt-oss: chat output is harmony (harmony_parser.h), split into reasoning, content and (with
  // --tool-call-parser openai) tool calls, as vLLM does for model type gpt_oss.
  bool harmony = false;
  // vLLM's system_fingerprint (--fingerprint-mode): on every chat / completions response, and
  // on a stream's final chunk; none: null in responses, absent from streams.
  std::optional<std::string> system_fingerprint{};
};

// One prompt of a request, tokenized (and truncated) for the engine.
struct PromptInput {
  std::vector<int32_t> ids;
  std::string text;  // what echo shows (completions)
};

// What a generation needs beyond the parsed request.
struct GenerationOptions {
  // The chat reply's role (vLLM: --response-role after a generation prompt, else the last
  // message's role).
  std::string role = "assistant";
  bool chat_logprobs = false;
  bool echo_only = false;  // completions echo with max_tokens 0: the prompt, no new text
  // Chat echo: the last message's content when it has the reply's role (prepended to it).
  std::string chat_echo;
  bool include_reasoning = true;
  // Whether the request thinks under the reasoning parser (reasoning_enabled over its
  // chat_template_kwargs); one that does not is not split. glm_thinking: the same by GLM's
  // rules, which its tool parser reads (<think> tags in the content are text without it).
  bool thinking = true;
  bool glm_thinking = true;
  std::optional<std::string> prompt_text;  // chat return_prompt_text
  // Tool calls in the chat output: how it is read (nullopt: plain content), the function a
  // named tool_choice forces, whether more than the first call is kept, and whether the
  // choice was "required" (finish_reason "tool_calls" like "auto" when calls were made).
  std::optional<ToolParserKind> tool_parser;
  std::string named_tool;
  nlohmann::ordered_json tools;  // the request's tools, for glm45 (names, argument types)
  bool parallel_tool_calls = true;
  // tool_choice "none" under an engine-based parser pair (parsers_engine_based): the tool parser
  // reads the output as under "auto" and its calls are dropped, their markup with them.
  bool drop_tool_calls = false;
  // --enable-auto-tool-choice with --tool-call-parser: the server composes a tool parser for
  // every chat request (vLLM's parser_cls), whatever its tool_choice.
  bool server_tool_parser = false;
  // The `model` the answer names: the LoRA adapter's when the request ran one (vLLM's
  // model_name(lora_request)); empty: the served model's first name.
  std::string model_name;
};

// One HTTP request's generation: its engine requests and the state needed to answer.
// A whole chat output (not harmony) split as vLLM's chat serving splits it: the reasoning parser's
// split first (`reasoning`: nullopt when none runs or the request turned it off), then the tool
// parser over its content (`tool_parser`: nullopt when none runs). Without a call the content is
// the tool parser's (unfinished call markup left out) when both parsers are engine-based in vLLM,
// else the reasoning parser's.
struct ParsedChatOutput {
  std::optional<std::string> reasoning, content;
  ExtractedToolCalls tools;
};
// Whether vLLM 0.33 composes the tool parser and the reasoning parser (if any) as "engine-based"
// (vllm/parser/engine): then tool_choice "none" still runs the tool parser and drops its calls.
bool parsers_engine_based(ToolParserKind tools, std::optional<ReasoningParserKind> reasoning);
ParsedChatOutput parse_chat_output(const std::string& text,
                                   std::optional<ReasoningParserKind> reasoning,
                                   bool prompt_closed_reasoning,
                                   std::optional<ToolParserKind> tool_parser,
                                   const ToolParserOptions& tool_options);

class Generation {
 public:
  enum class Kind { kCompletion, kChat };

  // Submits every choice and waits for the engine to admit them. Throws ApiError: 400 for a
  // rejected request (prompt too long, bad token id, ...), 503 when the engine is overloaded.
  static std::shared_ptr<Generation> start(ServingContext& ctx, Kind kind,
                                           const GenerationRequest& req,
                                           std::vector<PromptInput> prompts,
                                           GenerationOptions opts);
  ~Generation();  // aborts whatever is still running (client gone, server stopping)

  // Waits for every choice to finish; returns the OpenAI response object. `client_gone` is
  // polled while waiting: once it says true every choice is aborted and ApiError(499) thrown.
  nlohmann::json collect(const std::function<bool()>& client_gone = {});

  // Streaming: writes whatever output is ready as SSE events via `write` (false = client gone),
  // waiting at most `wait` for some. Returns false once the stream is complete or the client
  // is gone (then every request has been aborted).
  bool stream_step(const std::function<bool(const std::string&)>& write,
                   std::chrono::milliseconds wait);
  void abort_all();

 private:
  struct Choice {
    int index = 0;
    int prompt_index = 0;
    std::string engine_id;
    std::shared_ptr<engine::RequestStream> stream;
    std::string text;
    std::vector<int32_t> tokens;
    std::vector<engine::TokenLogprobs> logprobs;
    std::vector<engine::TokenLogprobs> prompt_logprobs;
    bool done = false;
    std::string finish_reason;
    nlohmann::json stop_reason;
    std::string error;
    int64_t completion_tokens = 0;
    int64_t cached_tokens = 0;
    ReasoningStreamSplitter splitter;
    bool prompt_closed_reasoning = false;   // glm45's whole-output split starts in the content
    HarmonyStreamSplitter harmony;          // ctx_.harmony
    std::unique_ptr<ToolCallParser> tools;  // streaming tool-call parser (opts_.tool_parser)
    bool sent_first = false;                // the first chunk (role, echo, prompt ids) went out
    size_t text_offset = 0;  // completions logprobs: where the next token's text starts
  };

  Generation(ServingContext& ctx, Kind kind, const GenerationRequest& req, GenerationOptions opts);
  void absorb(Choice& c, engine::RequestOutput& o);
  void log_output(const Choice& c) const;
  nlohmann::json usage() const;
  // stream_options.continuous_usage_stats: the usage each chunk carries, with the choice's
  // completion tokens so far.
  // A stream chunk's usage (continuous_usage_stats): `c`'s tokens so far (none before any).
  nlohmann::json running_usage(const Choice* c) const;
  // vLLM's chat with a reasoning parser adds completion_tokens_details.reasoning_tokens.
  bool reports_reasoning_tokens() const;
  int64_t reasoning_tokens(const Choice& c) const;
  nlohmann::json chunk_header() const;
  const std::string& model_name() const {
    return opts_.model_name.empty() ? ctx_.model_name : opts_.model_name;
  }
  void stamp_fingerprint(nlohmann::json& chunk) const;
  std::string label(int32_t id) const;
  // The completions logprobs entries of a choice: the echoed prompt (first = unscored), then
  // the new tokens.
  std::vector<LogprobEntry> echo_entries(const Choice& c) const;
  nlohmann::json completion_choice(Choice& c);
  // The message of a finished chat choice and its finish_reason ("tool_calls" when the model
  // called tools under tool_choice auto or required, as vLLM).
  nlohmann::json chat_message(const Choice& c, std::string& finish_reason) const;
  bool tools_finish(const Choice& c, bool called) const;
  // Whether chat output is split into reasoning and content.
  bool splits_reasoning() const;
  // vLLM's chat with a parser and include_reasoning false: logprobs and token ids would show the
  // hidden reasoning, so every choice and chunk drops them.
  bool hides_metadata() const;
  ToolParserOptions tool_options() const;
  std::vector<std::string> stream_events(Choice& c, engine::RequestOutput& o);

  ServingContext& ctx_;
  Kind kind_;
  std::string id_;
  int64_t created_;
  bool include_usage_ = false;
  bool continuous_usage_ = false;
  bool want_logprobs_ = false;
  bool want_prompt_logprobs_ = false;
  bool echo_ = false;
  bool return_token_ids_ = false;
  bool tokens_as_ids_ = false;
  GenerationOptions opts_;
  ThinkTags tags_;  // the reasoning parser's tag ids in this vocabulary (none without one)
  int64_t prompt_tokens_ = 0;
  int n_ = 1;
  std::vector<PromptInput> prompts_;
  std::vector<Choice> choices_;
  size_t next_poll_ = 0;
  bool finished_stream_ = false;
  std::chrono::steady_clock::time_point last_write_;
};

// A random hex id with the given prefix ("cmpl-", "chatcmpl-").
std::string random_id(const std::string& prefix);

}  // namespace vllm::api
