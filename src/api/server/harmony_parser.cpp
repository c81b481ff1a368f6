// Harmony (gpt-oss) output splitting, whole and streaming (see the header for the rules).
#include "api/server/harmony_parser.h"

#include <cstdio>

#include "api/server/py_json.h"

namespace vllm::api {
namespace {

constexpr std::string_view kStart = "<|start|>";
constexpr std::string_view kChannel = "<|channel|>";
constexpr std::string_view kMessage = "<|message|>";
constexpr std::string_view kConstrain = "<|constrain|>";
// Tags that end a message: <|end|>, and the stop tokens <|return|> and <|call|> (present when
// the request keeps its stop strings or ignores EOS); <|endoftext|> is read the same way.
constexpr std::string_view kEndTags[] = {"<|end|>", "<|return|>", "<|call|>", "<|endoftext|>"};
constexpr std::string_view kTags[] = {kStart,    kChannel,     kMessage,   kConstrain,
                                      "<|end|>", "<|return|>", "<|call|>", "<|endoftext|>"};
constexpr std::string_view kFunctions = "functions.";

bool is_end_tag(std::string_view t) {
  for (std::string_view e : kEndTags)
    if (t == e) return true;
  return false;
}

bool is_ascii_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> w;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_ascii_ws(s[i])) ++i;
    const size_t b = i;
    while (i < s.size() && !is_ascii_ws(s[i])) ++i;
    if (i > b) w.emplace_back(s.substr(b, i - b));
  }
  return w;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size())
    s.replace(at, from.size(), to);
  return s;
}

// Python's json.dumps default (ensure_ascii=True) over text already in its ensure_ascii=False
// form: every character outside printable ASCII becomes \uXXXX (a surrogate pair past U+FFFF).
// Such characters only occur inside strings, where the escape is valid.
std::string ascii_escape(const std::string& s) {
  std::string out;
  char buf[16];
  auto put = [&](uint32_t u) {
    std::snprintf(buf, sizeof buf, "\\u%04x", u);
    out += buf;
  };
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == 0x7f)
        put(c);
      else
        out += static_cast<char>(c);
      ++i;
      continue;
    }
    const int n = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
    uint32_t cp = c & (n == 4 ? 0x07 : n == 3 ? 0x0f : 0x1f);
    for (int k = 1; k < n && i + k < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    i += n;
    if (cp > 0xffff) {
      cp -= 0x10000;
      put(0xd800 + (cp >> 10));
      put(0xdc00 + (cp & 0x3ff));
    } else {
      put(cp);
    }
  }
  return out;
}

}  // namespace

bool is_harmony_architecture(const std::string& architecture) {
  return architecture == "GptOssForCausalLM";
}

HarmonyDelta HarmonyStreamSplitter::feed(std::string_view in) {
  HarmonyDelta out;
  pending_ += in;
  const std::string_view p(pending_);
  size_t from = 0;  // start of the text not yet routed
  size_t scan = 0;  // where to look for the next '<'
  for (;;) {
    const size_t at = p.find('<', scan);
    if (at == std::string_view::npos) break;
    const std::string_view rest = p.substr(at);
    std::string_view full;
    bool partial = false;
    for (std::string_view t : kTags) {
      if (rest.size() >= t.size()) {
        if (starts_with(rest, t)) {
          full = t;
          break;
        }
      } else if (starts_with(t, rest)) {
        partial = true;
      }
    }
    if (!full.empty()) {
      text(p.substr(from, at - from), out);
      tag(full, out);
      from = scan = at + full.size();
      continue;
    }
    if (partial) {  // the output so far ends inside what may be a tag: hold it back
      text(p.substr(from, at - from), out);
      pending_.erase(0, at);
      return out;
    }
    scan = at + 1;
  }
  text(p.substr(from), out);
  pending_.clear();
  return out;
}

HarmonyDelta HarmonyStreamSplitter::finish() {
  HarmonyDelta out;
  text(pending_, out);
  pending_.clear();
  if (state_ == State::kHeader) close_header(out);
  // A body cut short counts as it is (harmony's process_eos completes the message).
  start_header(false);
  return out;
}

void HarmonyStreamSplitter::text(std::string_view s, HarmonyDelta& out) {
  if (s.empty()) return;
  if (state_ == State::kHeader)
    header_ += s;
  else
    emit(kind_, s, out);
}

void HarmonyStreamSplitter::tag(std::string_view t, HarmonyDelta& out) {
  if (state_ == State::kBody) {
    // <|channel|>, <|message|>, <|constrain|> inside a body are markup, never text.
    if (is_end_tag(t) || t == kStart) start_header(t == kStart);
    return;
  }
  if (t == kMessage) return open_body(out);
  if (t == kChannel || t == kConstrain) {
    header_ += t;
    return;
  }
  close_header(out);  // <|start|> or an end tag before this header's <|message|>
  start_header(t == kStart);
}

void HarmonyStreamSplitter::start_header(bool by_start) {
  state_ = State::kHeader;
  header_.clear();
  header_by_start_ = by_start;
  header_has_role_ = true;  // only the prompt's own <|start|>assistant names the first author
  kind_ = Kind::kDrop;
}

void HarmonyStreamSplitter::close_header(HarmonyDelta& out) {
  std::string s = replace_all(header_, kConstrain, "");
  header_.clear();
  if (header_by_start_ || s.find(kChannel) != std::string::npos) return;
  for (const std::string& w : split_words(s))
    if (starts_with(w, "to=")) return;  // a recipient: an unfinished tool call header
  if (split_words(s).empty()) return;
  // Text the model wrote outside any message: content, as a message of its own.
  message_emitted_ = false;
  emit(Kind::kContent, s, out);
}

void HarmonyStreamSplitter::open_body(HarmonyDelta& out) {
  // As harmony's parse_header_from_string: the channel is the word after <|channel|> (up to
  // whitespace or '<'); of the other words, the first is the author when the output opened
  // this message itself, the last is a content type unless it is to=RECIPIENT (or the only
  // word, then a recipient), and the one before the content type is the recipient.
  std::string h = header_;
  header_.clear();
  std::optional<std::string> channel, recipient;
  std::string content_type;
  if (const size_t at = h.find(kChannel); at != std::string::npos) {
    const size_t b = at + kChannel.size();
    size_t e = b;
    while (e < h.size() && !is_ascii_ws(h[e]) && h[e] != '<') ++e;
    if (e > b) channel = h.substr(b, e - b);
    h = h.substr(0, at) + " " + h.substr(e);
  }
  std::vector<std::string> words = split_words(replace_all(h, kConstrain, " <|constrain|>"));
  if (!words.empty() &&
      (header_has_role_ ? !starts_with(words[0], "to=") : words[0] == "assistant"))
    words.erase(words.begin());
  if (!words.empty()) {
    const size_t n = words.size();
    std::string last = words.back();
    words.pop_back();
    if (starts_with(last, "to=")) {
      recipient = last.substr(3);
    } else if (n == 1) {
      recipient = last;
    } else {
      content_type = last;
      const std::string& r = words.back();
      recipient = starts_with(r, "to=") ? r.substr(3) : r;
    }
  }
  state_ = State::kBody;
  message_emitted_ = false;
  if (recipient && starts_with(*recipient, kFunctions) && recipient->size() > kFunctions.size()) {
    kind_ = Kind::kTool;
    HarmonyCall call{make_tool_call_id(ToolParserKind::kOpenAI),
                     recipient->substr(kFunctions.size()), content_type};
    ToolCallDelta d;
    d.index = num_calls();
    d.header = true;
    d.id = call.id;
    d.name = call.name;
    out.calls.push_back(std::move(d));
    calls_.push_back(std::move(call));
  } else if (channel == "analysis") {
    kind_ = Kind::kReasoning;
  } else if (channel == "final" || (channel == "commentary" && !recipient)) {
    kind_ = Kind::kContent;
  } else {
    kind_ = Kind::kDrop;  // unknown channel, no channel, a built-in tool's recipient
  }
}

void HarmonyStreamSplitter::emit(Kind kind, std::string_view s, HarmonyDelta& out) {
  if (s.empty()) return;
  switch (kind) {
    case Kind::kDrop:
      return;
    case Kind::kTool: {
      const int index = num_calls() - 1;
      if (!out.calls.empty() && !out.calls.back().header && out.calls.back().index == index) {
        out.calls.back().arguments += s;
      } else {
        ToolCallDelta d;
        d.index = index;
        d.arguments = s;
        out.calls.push_back(std::move(d));
      }
      return;
    }
    case Kind::kReasoning:
    case Kind::kContent: {
      const bool reasoning = kind == Kind::kReasoning;
      bool& any = reasoning ? any_reasoning_ : any_content_;
      std::string& dst = reasoning ? out.reasoning : out.content;
      // vLLM joins the messages of a whole response with "\n"; the stream says so too.
      if (!message_emitted_ && any) dst += '\n';
      dst += s;
      message_emitted_ = any = true;
      return;
    }
  }
}

HarmonySplit split_harmony(std::string_view text) {
  HarmonyStreamSplitter s;
  HarmonyDelta d = s.feed(text);
  HarmonyDelta tail = s.finish();
  d.reasoning += tail.reasoning;
  d.content += tail.content;
  for (ToolCallDelta& c : tail.calls) d.calls.push_back(std::move(c));
  HarmonySplit r;
  if (!d.reasoning.empty()) r.reasoning = std::move(d.reasoning);
  if (!d.content.empty()) r.content = std::move(d.content);
  for (ToolCallDelta& c : d.calls) {
    if (c.header)
      r.calls.push_back({c.id, c.name, s.calls()[static_cast<size_t>(c.index)].content_type, ""});
    else
      r.calls[static_cast<size_t>(c.index)].arguments += c.arguments;
  }
  return r;
}

std::string harmony_arguments(const HarmonyToolCall& call) {
  if (!call.content_type.empty() && call.content_type.find("json") == std::string::npos)
    return call.arguments;
  std::string canonical;
  if (!py_json_dumps(call.arguments, canonical)) return call.arguments;
  return ascii_escape(canonical);
}

}  // namespace vllm::api
