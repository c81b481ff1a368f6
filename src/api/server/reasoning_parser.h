// Reasoning content split out of <think>...</think>.
//
// `--reasoning-parser qwen3` (vLLM's Qwen3ReasoningParser). Whole outputs: without </think>
// everything is content; with it, the text before it is reasoning (a leading <think> removed;
// Qwen3-Thinking-2507 templates put <think> in the prompt, so the output may only close it) and
// the text after it is content. Streams: text is reasoning until </think> (a <think> tag is
// dropped), then content; a stream whose prompt already closed the thinking section
// (enable_thinking false) is all content. A tag split across deltas is held back until it is
// complete.
//
// `--reasoning-parser glm45` / `glm47` (vLLM 0.33's engine-based Glm47MoeParser,
// vllm/parser/glm47_moe.py): the output starts inside the reasoning, so text without </think>
// is all reasoning (qwen3: all content). Every <think> in the reasoning is dropped; </think>
// ends it, and so does <tool_call> (which stays, as content, for the tool parser). The
// reasoning loses its trailing whitespace (streams hold it back until more reasoning follows).
// Whole outputs go on as vLLM's engine does after the end: a later <think> opens reasoning
// again and a stray </think> is dropped; streams, as vLLM's, pass everything after the end
// through as content. The prompt closes the reasoning (the output starts in the content) when
// its last </think> or <tool_call> comes after its last <think> within the last turn (GLM's
// <|system|> / <|user|> / <|assistant|> / <|observation|> end the search). A request with
// chat_template_kwargs thinking / enable_thinking false is not split at all (serving.cpp).
//
// `--reasoning-parser minimax_m2` (vLLM 0.33's engine-based MinimaxM2Parser,
// vllm/parser/minimax_m2.py, read through its reasoning adapter): MiniMax-M2's chat template ends
// the prompt with <think>, so the output starts inside the reasoning (no </think>: all
// reasoning). Every <think> in the reasoning is dropped; </think> ends it, and so does
// <minimax:tool_call> (which stays, as content, for the tool parser). The reasoning loses its
// trailing whitespace. After the end the content goes on as vLLM's engine reads a whole output,
// tool markup as text: a <think> is text, a </think> is dropped, and so is a
// </minimax:tool_call> that no <minimax:tool_call> or <invoke name= opened. Streams follow the
// same rules (vLLM's stream passes everything after the end through to its tool parser, or as
// content without one, so a </think> inside a call's arguments or in the content without a tool
// parser stays there). The prompt closes the reasoning when its last </think> or
// <minimax:tool_call> comes after its last <think>; vLLM reads that for streams only (its
// whole-output parse has no turn markers to bound the search), and so does this.
//
// `--reasoning-parser minimax_m2_append_think` (vLLM's MiniMaxM2AppendThinkReasoningParser):
// nothing is split; the content is "<think>" + the output, so that a client sending the message
// back gives the template the <think>...</think> it splits reasoning_content out of. A stream
// whose prompt closed the reasoning gets no "<think>" (vLLM's stream skips the parser then).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace vllm::api {

enum class ReasoningParserKind { kQwen3, kGlm45, kMinimaxM2, kMinimaxM2AppendThink };

// --reasoning-parser NAME -> kind: qwen3, glm45, glm47, minimax_m2, minimax_m2_append_think;
// nullopt otherwise (openai_gptoss is gpt-oss's harmony, read by harmony_parser.h).
std::optional<ReasoningParserKind> reasoning_parser_by_name(const std::string& name);
// The names accepted by --reasoning-parser, for messages.
const char* reasoning_parser_names();

struct ReasoningSplit {
  std::optional<std::string> reasoning;
  std::optional<std::string> content;
};

// The ids of the <think> and </think> tags in a vocabulary (either may be missing); for glm45
// also <tool_call> (it ends reasoning too) and the turn markers that bound the prompt search, for
// minimax_m2 <minimax:tool_call>.
struct ThinkTags {
  std::optional<int32_t> start, end;
  std::vector<int32_t> implicit_end, boundaries;
};
ThinkTags think_tags(const tok::Tokenizer& tokenizer);
ThinkTags think_tags(const tok::Tokenizer& tokenizer, ReasoningParserKind kind);

// vLLM's is_reasoning_end over a prompt: true when its last think tag is the end tag
// `end_id` (enable_thinking false renders an empty <think></think>). False without an end id.
bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, std::optional<int32_t> start_id,
                           std::optional<int32_t> end_id);
// The same with glm45's tags: an implicit end counts as an end, a boundary stops the search.
bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, const ThinkTags& tags);
// The check `kind`'s parser makes (its tags from think_tags(tokenizer, kind)).
bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, const ThinkTags& tags,
                           ReasoningParserKind kind);

// Non-streaming split of a complete output (qwen3).
ReasoningSplit split_reasoning(const std::string& text);
// glm45: `prompt_ended` starts in the content.
ReasoningSplit split_reasoning_glm45(const std::string& text, bool prompt_ended);
// minimax_m2 (the output always starts in the reasoning).
ReasoningSplit split_reasoning_minimax_m2(const std::string& text);
// Whole output of `kind` (`prompt_ended`: glm45 only).
ReasoningSplit split_reasoning(ReasoningParserKind kind, const std::string& text,
                               bool prompt_ended);

class ReasoningStreamSplitter {
 public:
  // `prompt_ended_reasoning`: the prompt's last think tag was </think> (vLLM's is_reasoning_end
  // over the prompt), so everything generated is content.
  explicit ReasoningStreamSplitter(bool prompt_ended_reasoning = false)
      : state_(prompt_ended_reasoning ? State::kAfter : State::kReasoning) {}
  ReasoningStreamSplitter(ReasoningParserKind kind, bool prompt_ended_reasoning)
      : state_(prompt_ended_reasoning ? State::kAfter : State::kReasoning), kind_(kind) {}
  // Returns the reasoning and content text completed by this delta (either may be empty).
  std::pair<std::string, std::string> feed(const std::string& delta);
  // End of the stream: releases any held-back partial tag.
  std::pair<std::string, std::string> finish();

 private:
  enum class State { kReasoning, kAfter };
  std::pair<std::string, std::string> feed_glm(const std::string& delta);
  std::pair<std::string, std::string> feed_minimax(const std::string& delta);
  State state_;
  ReasoningParserKind kind_ = ReasoningParserKind::kQwen3;
  bool start_seen_ = false;  // a <think> tag was dropped already (qwen3); "<think>" was sent
                             // (minimax_m2_append_think)
  std::string pending_;
  bool span_ = false;    // minimax_m2: a <minimax:tool_call> or <invoke name= is open
  std::string held_ws_;  // glm45, minimax_m2: trailing whitespace of the reasoning, sent if more
                         // follows
};

}  // namespace vllm::api
