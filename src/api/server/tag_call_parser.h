// What the tag-driven tool-call parsers of vLLM 0.33's engine share (glm45: glm_tool_parser.h,
// qwen3_coder / seed_oss: qwen3_coder_tool_parser.h): the scan that cuts a stream at the tags
// its current state reacts to, the content before and between calls, and the arguments written
// as vLLM's dict of key / raw value pairs.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/server/tool_parsers.h"

namespace vllm::api {

struct ArgPair {
  std::string key, value;
};

// "{" and the pairs as a dict (first place, last value; each value typed by its property in
// `properties`, schema_coerce.h) written as json.dumps does, without the closing brace.
// `stable` (streaming) stops before the first key that repeats later, and sets `*cut` when it
// did; `keys` gets the keys written.
std::string arg_pairs_json(const std::vector<ArgPair>& pairs,
                           const nlohmann::ordered_json& properties, bool stable,
                           bool* cut = nullptr, std::vector<std::string>* keys = nullptr);

class TagCallParser : public ToolCallParser {
 public:
  // Scans the text; in a call's arguments streams what became certain (not for whole outputs).
  void feed(std::string_view text, ParsedDelta& out) final;
  // The rest of the text; a call the output ends in still counts, with what it completed.
  void finish(ParsedDelta& out) final;

 protected:
  TagCallParser(const ToolParserOptions& o, ToolParserKind kind);

  // The parser's state: reading a call's name, its arguments; back to the content.
  virtual bool in_name() const = 0;
  virtual bool in_args() const = 0;
  virtual void to_content() = 0;
  // Whether a call with this (stripped) name is kept.
  virtual bool keeps(const std::string& name) const = 0;
  // The complete key / value pairs of the call's argument text args_raw_.
  virtual std::vector<ArgPair> complete_args() const = 0;
  // Streams what args_raw_ made certain.
  virtual void stream_args(ParsedDelta& out) = 0;
  // The tags that mean something in the current state; text between them goes to on_text.
  virtual std::vector<std::string_view> tags() const = 0;
  virtual void on_text(std::string_view t, ParsedDelta& out) = 0;
  virtual void on_tag(std::string_view tag, ParsedDelta& out) = 0;

  // Cuts pending text at the earliest tag of the current state (none of a parser's tags can
  // start inside another), holding back what may begin one.
  void scan(std::string_view text, ParsedDelta& out);
  // The rest of the text at the end of the output.
  void scan_rest(ParsedDelta& out);

  // Text in the content state. Before any call markup it is sent as it comes, but whitespace
  // is held while it may end the content (a kept call strips it) and while it is all there is
  // (vLLM's stream sends leading whitespace with the first word). After call markup it waits:
  // a kept call drops it, otherwise it is content at the end.
  void content_text(std::string_view t, ParsedDelta& out);
  // A call was kept: what waited is not content.
  void call_kept();
  // End of the output: without a kept call the held text is content, unless all of it is
  // whitespace around dropped calls (vLLM drops whitespace-only content once a call began).
  void finish_content(ParsedDelta& out);

  // Streams what `args` adds to the open call's arguments; a rewrite of what went out (a key
  // given again) breaks the call's stream for good.
  void emit_args(const std::string& args, ParsedDelta& out);

  // A call's name starts: the call being read is reset.
  void begin_call();
  // The name is complete: keep the call (its header goes out) or drop it.
  void decide_name(ParsedDelta& out);
  // A property's schema when it types the value (vLLM coerces only with one).
  const nlohmann::ordered_json* schema_of(const std::string& key) const;
  // The call ends: its final arguments go out (unless their stream broke).
  void end_call(ParsedDelta& out);

  const nlohmann::ordered_json tools_;
  const bool markup_, whole_, suppress_;
  const ToolParserKind kind_;
  // The call being read.
  std::string name_raw_, args_raw_, name_;
  nlohmann::ordered_json properties_ = nlohmann::ordered_json::object();
  bool kept_ = false;
  // The string value being streamed: where it starts, how much of it was sent, and where the
  // parser's search for its end stands.
  size_t open_at_ = std::string::npos, open_sent_ = 0, scanned_ = 0;

  std::string pending_;
  bool seen_call_ = false, any_kept_ = false, content_started_ = false;
  std::string held_, post_;
  // The open call's arguments as streamed, and whether that stream broke.
  std::string streamed_;
  bool broken_ = false;
};

}  // namespace vllm::api
