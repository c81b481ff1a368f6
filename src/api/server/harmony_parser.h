// Harmony output (gpt-oss) split into reasoning, content and tool calls, as vLLM's HarmonyParser
// reads it (vllm/parser/harmony.py over openai-harmony's StreamableParser), but over the output
// TEXT with the special tokens kept (skip_special_tokens=false) instead of token ids.
//
// The model continues the prompt's `<|start|>assistant` with messages
//   HEADER<|message|>BODY<|end|>  (then <|start|>assistant HEADER ... for the next message)
// where HEADER holds `<|channel|>NAME`, an optional recipient (`to=functions.NAME`, before or
// after the channel) and an optional content type (`json` or `<|constrain|>json`); the last
// message ends with <|return|> or <|call|> (stop tokens, so usually absent from the text).
// Messages are routed as vLLM's _SegmentType does:
//   recipient functions.NAME (any channel)      -> a tool call NAME, arguments = the body
//   channel analysis                            -> reasoning
//   channel final, or commentary w/o recipient  -> content (commentary preambles are shown)
//   anything else (unknown channel, no channel, -> dropped, as vLLM ignores them
//   a built-in tool recipient like browser.search)
// Several reasoning (or content) messages are joined with "\n" (vLLM's whole response); the
// stream sends that "\n" too, so a stream's deltas reassemble exactly to the whole split.
//
// Where harmony itself would raise (vLLM then fails the request), this parser recovers instead
// and never puts a special-token string into reasoning or content:
//   - output cut inside a body: the body so far counts (harmony's process_eos does the same);
//   - output cut inside a header, or a header closed by an end tag instead of <|message|>:
//     dropped when it is a header (opened by <|start|>, or holding <|channel|> or a to=
//     recipient); otherwise it is text the model wrote outside the format and becomes content
//     (vLLM's recovery also returns such raw text as content);
//   - text between an end tag and the next <|start|> (e.g. after <|return|> with ignore_eos):
//     content, unless it is only whitespace;
//   - <|start|> inside a body ends that message; <|channel|>, <|message|>, <|constrain|> inside
//     a body are dropped;
//   - extra words in a header are ignored; a header word list is read as harmony's
//     parse_header_from_string reads it (last word: content type unless it is to=..., the one
//     before it: recipient).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/server/tool_parsers.h"

namespace vllm::api {

// vLLM turns harmony on when the model is gpt-oss (hf_config.model_type "gpt_oss").
bool is_harmony_architecture(const std::string& architecture);

// One tool call message: its function name, its content type ("" when none) and its id.
struct HarmonyCall {
  std::string id, name, content_type;
};

// What one feed (or finish) produced.
struct HarmonyDelta {
  std::string reasoning, content;
  std::vector<ToolCallDelta> calls;  // a header (id, name) per call, then argument fragments
};

class HarmonyStreamSplitter {
 public:
  // Feeds output text (special tokens as their strings); a tag split across deltas is held back
  // until it is complete, a header until its <|message|>.
  HarmonyDelta feed(std::string_view text);
  // End of the output: releases held-back text.
  HarmonyDelta finish();
  int num_calls() const { return static_cast<int>(calls_.size()); }
  const std::vector<HarmonyCall>& calls() const { return calls_; }

 private:
  enum class State { kHeader, kBody };
  enum class Kind { kReasoning, kContent, kTool, kDrop };
  void text(std::string_view s, HarmonyDelta& out);
  void tag(std::string_view t, HarmonyDelta& out);
  void open_body(HarmonyDelta& out);
  void close_header(HarmonyDelta& out);  // a header that never reached <|message|>
  void start_header(bool by_start);
  void emit(Kind kind, std::string_view s, HarmonyDelta& out);

  State state_ = State::kHeader;
  Kind kind_ = Kind::kDrop;
  std::string pending_;  // text not yet scanned (a possible partial tag)
  std::string header_;
  bool header_by_start_ = false;  // the header was opened by <|start|> in the output
  bool header_has_role_ = false;  // its first word is the author (not given by the prompt)
  bool message_emitted_ = false;  // the current message produced text
  bool any_reasoning_ = false, any_content_ = false;
  std::vector<HarmonyCall> calls_;
};

// The non-streaming split: reasoning and content are null when empty (as vLLM).
struct HarmonyToolCall {
  std::string id, name, content_type, arguments;  // arguments: the body as written
};
struct HarmonySplit {
  std::optional<std::string> reasoning, content;
  std::vector<HarmonyToolCall> calls;
};
HarmonySplit split_harmony(std::string_view text);

// A whole response's arguments, as vLLM writes them: json.dumps(json.loads(body)) (ASCII-only,
// ", " and ": " separators) when the content type is absent or names json and the body is JSON,
// else the body unchanged.
std::string harmony_arguments(const HarmonyToolCall& call);

}  // namespace vllm::api
