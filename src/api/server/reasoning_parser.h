// Reasoning content split out of <think>...</think>, as vLLM 0.33's reasoning parsers split it
// (tests/golden/tool_parsers/think.json and minimax_m2.json hold what vLLM itself returns).
//
// Whether a request thinks at all comes from its chat_template_kwargs (reasoning_enabled); a
// request that does not is not split: its whole output is content, raw.
//
// `--reasoning-parser qwen3` (vLLM 0.33's engine-based Qwen3Parser, vllm/parser/qwen3.py): the
// output starts inside the reasoning unless chat_template_kwargs enable_thinking is false, so
// text without </think> is all reasoning. Every <think> in the reasoning is dropped; </think>
// ends it, and so does <tool_call> (which stays, as content, for the tool parser). After the end
// a whole output drops any further </think> (a <think> there is text); a stream passes
// everything after the end through as content. The prompt closes the reasoning when its last
// </think> or <tool_call> comes after its last <think> within the last turn (<|im_start|> and
// <|im_end|> end the search); a whole output then starts in the content (only when the
// vocabulary has those turn markers, as vLLM), a stream is all content.
//
// `--reasoning-parser seed_oss` (vLLM 0.33's SeedOssParser): qwen3's rules with Seed-OSS's tags,
// <seed:think> / </seed:think>, <seed:tool_call>, and <seed:bos> / <seed:eos> as turn markers.
//
// `--reasoning-parser deepseek_r1` (vLLM's DeepSeekR1ReasoningParser, a BaseThinkingReasoning-
// Parser). Whole outputs: everything up to the first <think> is dropped; without a </think>
// after it, the rest is reasoning; with one, the text before it is reasoning ("" when empty)
// and the text after it content (null when empty). Streams: text is reasoning until </think>
// (every <think> in it dropped), then content, raw; a stream whose prompt's last think tag is
// </think> (anywhere in the prompt) is all content. The prompt does not change whole outputs.
// `--reasoning-parser deepseek_v3` (DeepSeekV3ReasoningParser): deepseek_r1 when
// chat_template_kwargs thinking or enable_thinking is true, otherwise nothing is split.
//
// A tag split across deltas is held back until it is complete.
//
// `--reasoning-parser glm45` / `glm47` (vLLM 0.33's engine-based Glm47MoeParser,
// vllm/parser/glm47_moe.py): the output starts inside the reasoning, so text without </think>
// is all reasoning, as qwen3's. Every <think> in the reasoning is dropped; </think>
// ends it, and so does <tool_call> (which stays, as content, for the tool parser). The
// reasoning loses its trailing whitespace (streams hold it back until more reasoning follows).
// Whole outputs go on as vLLM's engine does after the end: a later <think> opens reasoning
// again and a stray </think> is dropped; streams, as vLLM's, pass everything after the end
// through as content. Unlike qwen3's, the reasoning is right-stripped and a whole output's
// later <think> opens reasoning again. The prompt closes the reasoning (the output starts in the
// content) when its last </think> or <tool_call> comes after its last <think> within the last turn
// (GLM's
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
// `--reasoning-parser kimi_k2` (vLLM 0.33's engine-based KimiK2Parser, vllm/parser/kimi_k2.py,
// read through its reasoning adapter): the output starts inside the reasoning unless
// chat_template_kwargs thinking / enable_thinking is set and neither is true (then nothing is
// split). Every <think> in the reasoning is dropped; </think> ends it, and so does
// <|tool_calls_section_begin|> (which stays, as content, for the tool parser); Kimi's other call
// markers are reasoning text there, not counted as reasoning tokens. The reasoning loses its
// trailing whitespace. After the end everything is content but </think>, which is dropped (also
// inside a call's arguments, as vLLM's whole response drops it). As minimax_m2, the prompt
// closes the reasoning for streams only (its last </think> or <|tool_calls_section_begin|> after
// its last <think>).
//
// `--reasoning-parser ernie45` (ERNIE-4.5 / ERNIE-4.5-21B-A3B-Thinking; vLLM 0.33's
// Ernie45ReasoningParser): deepseek_r1's split, then the content, when it holds a <response>
// before its last </response>, is the text between the first <response> and that last
// </response>. Every request thinks; reasoning tokens are counted as deepseek_r1 counts them.
// Streams: deepseek_r1's, the content sent as it comes except that whitespace before a first
// <response> waits: it is dropped with the tag, and the text from a </response> on waits for
// the end, where the text up to the last </response> goes out. A stream whose <response> never
// closes has lost that whitespace and the tag, which the whole response keeps (vLLM's stream
// drops them too).
//
// `--reasoning-parser olmo3` (Olmo 3 Think; vLLM 0.33's Olmo3ReasoningParser): <think> and
// </think> are plain text. A whole output is read by vLLM's regex ^(<think>)?(.*?)</think>(.*)$:
// the text up to the first </think> (less a leading <think>) is reasoning, the rest content,
// each null when empty; without a </think> the whole output is content. Streams are
// deepseek_r1's (reasoning until </think>, every <think> in it dropped, then content as written;
// vLLM's string-space stream holds the same text back in other places and can lose a held tail
// at the end). A stream whose prompt holds a </think> anywhere (vLLM's is_reasoning_end over
// its token ids) is all content. Every request thinks; no tokens are counted as reasoning
// (vLLM's parser does not count them). The vocabulary must have the tokens "</", "\u0120</",
// "think" and ">" (vLLM's start-up lookup).
//
// `--reasoning-parser granite` (Granite 3.2 with chat_template_kwargs thinking; vLLM 0.33's
// GraniteReasoningParser): the phrases "Here is my thought process:" and "Here is my response:"
// ("Here's" for either) open the reasoning and the answer. A whole output is read by vLLM's
// regex, searched anywhere: from the first thought phrase to the first response phrase after it
// is reasoning ("" when empty), the rest content (null when empty), the text before dropped;
// without both phrases the whole output is content. A stream is split only when the output
// starts with a thought phrase (as vLLM's stream): reasoning up to a response phrase, content
// after it; a stream that starts otherwise is all content. No tokens are counted as reasoning.
// The reasoning's end is text, not a token, so a grammar cannot wait for it: a structured
// output under this parser is refused for a request with chat_template_kwargs thinking (vLLM
// never applies its grammar then) and applies from the first token otherwise.
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

#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "tokenizer/tokenizer.h"

namespace vllm::api {

enum class ReasoningParserKind {
  kQwen3,
  kGlm45,
  kMinimaxM2,
  kMinimaxM2AppendThink,
  kDeepseekR1,
  kDeepseekV3,
  kSeedOss,
  kOlmo3,
  kGranite,
  kKimiK2,
  kErnie45,
};

// --reasoning-parser NAME -> kind: qwen3, deepseek_r1, deepseek_v3, glm45, glm47, minimax_m2,
// minimax_m2_append_think; nullopt otherwise (openai_gptoss is gpt-oss's harmony, read by
// harmony_parser.h).
std::optional<ReasoningParserKind> reasoning_parser_by_name(const std::string& name);
// The names accepted by --reasoning-parser, for messages.
const char* reasoning_parser_names();

// Whether a request with these chat_template_kwargs thinks under `kind`'s parser (as vLLM's
// parser reads them): qwen3 unless enable_thinking is false; glm45 unless thinking or
// enable_thinking is set and neither is true; deepseek_v3 only when either is true; the others
// always. A request that does not think is not split.
bool reasoning_enabled(ReasoningParserKind kind, const nlohmann::ordered_json& kwargs);
// Python's truth value of chat_template_kwargs[key] (false when absent).
bool kwarg_truthy(const nlohmann::ordered_json& kwargs, const char* key);

struct ReasoningSplit {
  std::optional<std::string> reasoning;
  std::optional<std::string> content;
};

// The ids of the <think> and </think> tags in a vocabulary (either may be missing); for qwen3
// and glm45 also <tool_call> (it ends reasoning too) and the turn markers that bound the prompt
// search, for minimax_m2 <minimax:tool_call>.
struct ThinkTags {
  std::optional<int32_t> start, end;
  std::vector<int32_t> implicit_end, boundaries;
  // The engine parsers' other tag tokens (the call's closing tag): text in the reasoning, but
  // not counted as reasoning tokens.
  std::vector<int32_t> uncounted;
  // olmo3: </think> is plain text, the tokens "</" (or "\u0120</") then "think", ">": the ids
  // of its first token's two forms and of the rest (empty when the vocabulary lacks one).
  std::vector<int32_t> end_first, end_rest;
};
ThinkTags think_tags(const tok::Tokenizer& tokenizer);
ThinkTags think_tags(const tok::Tokenizer& tokenizer, ReasoningParserKind kind);
// The same from any vocabulary lookup.
using TokenLookup = std::function<std::optional<int32_t>(std::string_view)>;
ThinkTags think_tags(const TokenLookup& id_of, ReasoningParserKind kind);

// Whether vLLM 0.33 runs `kind` on its declarative parser engine (qwen3, seed_oss, glm45 / glm47,
// minimax_m2, kimi_k2): the parsers whose reasoning also ends at a content token
// (ThinkTags::implicit_end).
bool engine_based(ReasoningParserKind kind);

// vLLM's is_reasoning_end over a prompt: true when its last think tag is the end tag
// `end_id` (enable_thinking false renders an empty <think></think>). False without an end id.
bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, std::optional<int32_t> start_id,
                           std::optional<int32_t> end_id);
// The same with glm45's tags: an implicit end counts as an end, a boundary stops the search.
bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, const ThinkTags& tags);
// The check `kind`'s parser makes (its tags from think_tags(tokenizer, kind)).
bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, const ThinkTags& tags,
                           ReasoningParserKind kind);

// vLLM's count_reasoning_tokens over a request's generated ids (usage's
// completion_tokens_details.reasoning_tokens): deepseek_r1 / v3 count the tokens between a
// <think> and its </think> (nested by depth; R1's <think> is in the prompt, so usually 0); the
// engine-based qwen3 / glm45 / minimax_m2 count the tokens their parse puts in the reasoning (from
// the start unless `prompt_ended`; tags not counted); minimax_m2_append_think counts none.
int64_t count_reasoning_tokens(ReasoningParserKind kind, const ThinkTags& tags,
                               const std::vector<int32_t>& ids, bool prompt_ended);

// Non-streaming split of a complete output (deepseek_r1, and deepseek_v3 when it thinks).
ReasoningSplit split_reasoning(const std::string& text);
// glm45 / qwen3: `prompt_ended` starts in the content.
ReasoningSplit split_reasoning_glm45(const std::string& text, bool prompt_ended);
ReasoningSplit split_reasoning_qwen3(const std::string& text, bool prompt_ended);
// minimax_m2 (the output always starts in the reasoning).
ReasoningSplit split_reasoning_minimax_m2(const std::string& text);
// Whole output of `kind` for a request that thinks (`prompt_ended`: glm45 and qwen3 only).
ReasoningSplit split_reasoning(ReasoningParserKind kind, const std::string& text,
                               bool prompt_ended);

class ReasoningStreamSplitter {
 public:
  // `prompt_ended_reasoning`: the prompt's last think tag was </think> (vLLM's is_reasoning_end
  // over the prompt), so everything generated is content.
  // deepseek_r1's stream.
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
  std::pair<std::string, std::string> feed_granite(const std::string& delta);
  std::pair<std::string, std::string> feed_kimi(const std::string& delta);
  // deepseek_r1's stream (also under ernie45's content filter).
  std::pair<std::string, std::string> feed_think(const std::string& delta);
  // ernie45: the content's <response> ... </response> (see the top of this file).
  std::string ernie_content(const std::string& text, bool end);
  State state_;
  ReasoningParserKind kind_ = ReasoningParserKind::kDeepseekR1;
  bool start_seen_ = false;  // "<think>" was sent (minimax_m2_append_think); granite: the
                             // output's start was read (a thought phrase or not)
  std::string pending_;
  bool span_ = false;    // minimax_m2: a <minimax:tool_call> or <invoke name= is open
  std::string held_ws_;  // glm45, minimax_m2: trailing whitespace of the reasoning, sent if more
                         // follows (qwen3 keeps it); ernie45: content before a <response>
  // ernie45: 0 before the content's first word or <response>, 1 inside a <response>, 2 as
  // written; `resp_tail_` holds the text from the first </response> on.
  int resp_mode_ = 0;
  std::string resp_tail_;
};

}  // namespace vllm::api
