// Incremental tool-call parsers (see the header for each format).
#include "api/server/tool_parsers.h"

#include <random>
#include <thread>

#include "api/server/glm_tool_parser.h"
#include "api/server/minimax_tool_parser.h"
#include "api/server/py_json.h"
#include "api/server/py_str.h"

namespace vllm::api {
namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMistralBot = "[TOOL_CALLS]";

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Length of the longest proper suffix of `s` that begins `tag`.
size_t partial_suffix(const std::string& s, std::string_view tag) {
  const size_t max = std::min(s.size(), tag.size() - 1);
  for (size_t n = max; n > 0; --n)
    if (std::string_view(s).substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

// Finds `tag` in a stream: text before it is released (to `out`, or dropped when out is
// null), a possible beginning of the tag at the end is held back.
class TagScanner {
 public:
  explicit TagScanner(std::string_view tag) : tag_(tag) {}
  // True when the tag was completed by c.
  bool feed(char c, std::string* out) {
    pending_ += c;
    if (pending_.size() >= tag_.size() &&
        std::string_view(pending_).substr(pending_.size() - tag_.size()) == tag_) {
      if (out) out->append(pending_, 0, pending_.size() - tag_.size());
      pending_.clear();
      return true;
    }
    const size_t hold = partial_suffix(pending_, tag_);
    if (out) out->append(pending_, 0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return false;
  }
  std::string take() {
    std::string s;
    s.swap(pending_);
    return s;
  }

 private:
  std::string_view tag_;
  std::string pending_;
};

// One call object {"name": "...", <args key>: <value>, ...}: reports the name once known and
// the arguments' canonical text as it comes (held until the name is known).
class CallReader {
 public:
  enum class R { kMore, kDone, kError };
  CallReader(std::vector<std::string_view> args_keys, bool skip_leading_ws)
      : args_keys_(std::move(args_keys)), skip_ws_(skip_leading_ws) {}

  R feed(char c) {
    for (;;) {
      switch (st_) {
        case St::kStart:
          if (skip_ws_ && is_ws(c)) return R::kMore;
          if (c != '{') return R::kError;
          st_ = St::kKeyOrEnd;
          return R::kMore;
        case St::kKeyOrEnd:
        case St::kKey:
          if (is_ws(c)) return R::kMore;
          if (c == '}' && st_ == St::kKeyOrEnd) return end_object();
          if (c != '"') return R::kError;
          key_ = JsonCanonicalizer();
          st_ = St::kInKey;
          break;  // the quote goes to the key's reader
        case St::kInKey: {
          std::string sink;
          const auto s = key_.feed(c, sink);
          if (s == JsonCanonicalizer::Step::kError) return R::kError;
          if (s == JsonCanonicalizer::Step::kDone) st_ = St::kColon;
          return R::kMore;
        }
        case St::kColon:
          if (is_ws(c)) return R::kMore;
          if (c != ':') return R::kError;
          st_ = St::kValueStart;
          return R::kMore;
        case St::kValueStart: {
          if (is_ws(c)) return R::kMore;
          const std::string& k = key_.string_value();
          target_ = Target::kOther;
          if (k == "name") {
            if (name_known_) return R::kError;
            target_ = Target::kName;
          } else {
            for (std::string_view a : args_keys_)
              if (k == a) target_ = Target::kArgs;
            // Python keeps the last of duplicate keys; a stream cannot, so refuse them.
            if (target_ == Target::kArgs && args_seen_) return R::kError;
            if (target_ == Target::kArgs) args_seen_ = true;
          }
          value_ = JsonCanonicalizer();
          st_ = St::kInValue;
          break;
        }
        case St::kInValue: {
          std::string piece;
          const auto s = value_.feed(c, piece);
          if (target_ == Target::kArgs) args_ += piece;
          if (s == JsonCanonicalizer::Step::kError) return R::kError;
          if (s == JsonCanonicalizer::Step::kMore) return R::kMore;
          if (target_ == Target::kName) {
            if (!value_.is_string()) return R::kError;
            name_ = value_.string_value();
            name_known_ = true;
          }
          st_ = St::kCommaOrEnd;
          if (s == JsonCanonicalizer::Step::kDone) return R::kMore;
          break;  // a number ended before c: c is the delimiter
        }
        case St::kCommaOrEnd:
          if (is_ws(c)) return R::kMore;
          if (c == ',') {
            st_ = St::kKey;
            return R::kMore;
          }
          if (c == '}') return end_object();
          return R::kError;
        case St::kDone:
          return R::kError;
      }
    }
  }
  bool name_known() const { return name_known_; }
  const std::string& name() const { return name_; }
  std::string take_args() {
    std::string s;
    s.swap(args_);
    return s;
  }

 private:
  enum class St {
    kStart,
    kKeyOrEnd,
    kKey,
    kInKey,
    kColon,
    kValueStart,
    kInValue,
    kCommaOrEnd,
    kDone
  };
  enum class Target { kName, kArgs, kOther };
  R end_object() {
    if (!name_known_ || !args_seen_) return R::kError;  // vLLM: a KeyError
    st_ = St::kDone;
    return R::kDone;
  }

  std::vector<std::string_view> args_keys_;
  bool skip_ws_;
  St st_ = St::kStart;
  Target target_ = Target::kOther;
  JsonCanonicalizer key_, value_;
  std::string name_, args_;
  bool name_known_ = false, args_seen_ = false;
};

// Shared by the parsers: the current call's reader and the deltas it reports.
class CallEmitter {
 public:
  CallEmitter(ToolParserKind kind, std::vector<std::string_view> args_keys, bool skip_ws)
      : kind_(kind), args_keys_(std::move(args_keys)), skip_ws_(skip_ws) {}
  void begin() {
    reader_ = std::make_unique<CallReader>(args_keys_, skip_ws_);
    header_sent_ = false;
  }
  CallReader::R feed(char c, ParsedDelta& out, int& num_calls) {
    const auto r = reader_->feed(c);
    if (r == CallReader::R::kError) return r;
    if (!header_sent_ && reader_->name_known()) {
      ToolCallDelta h;
      h.index = num_calls++;
      h.header = true;
      h.id = make_tool_call_id(kind_);
      h.name = reader_->name();
      out.calls.push_back(std::move(h));
      header_sent_ = true;
    }
    if (header_sent_) {
      std::string a = reader_->take_args();
      if (!a.empty()) {
        if (!out.calls.empty() && !out.calls.back().header &&
            out.calls.back().index == num_calls - 1) {
          out.calls.back().arguments += a;
        } else {
          ToolCallDelta f;
          f.index = num_calls - 1;
          f.arguments = std::move(a);
          out.calls.push_back(std::move(f));
        }
      }
    }
    return r;
  }

 private:
  ToolParserKind kind_;
  std::vector<std::string_view> args_keys_;
  bool skip_ws_;
  std::unique_ptr<CallReader> reader_;
  bool header_sent_ = false;
};

class HermesParser : public ToolCallParser {
 public:
  void feed(std::string_view text, ParsedDelta& out) override {
    for (char c : text) step(c, out);
  }
  void finish(ParsedDelta& out) override {
    if (st_ == St::kContent) out.content += open_.take();
    if (st_ == St::kCall && (!call_done_ || close_ > 0)) fail(out);
  }

 private:
  enum class St { kContent, kCall, kAfter, kRaw };
  void fail(ParsedDelta& out) {
    failed_ = true;
    out.content += raw_;
    st_ = St::kRaw;
  }
  void step(char c, ParsedDelta& out) {
    switch (st_) {
      case St::kContent:
      case St::kAfter:
        if (open_.feed(c, st_ == St::kContent ? &out.content : nullptr)) {
          st_ = St::kCall;
          raw_ = kHermesOpen;
          call_done_ = false;
          close_ = 0;
          em_.begin();
        }
        return;
      case St::kCall:
        raw_ += c;
        if (!call_done_) {
          const auto r = em_.feed(c, out, num_calls_);
          if (r == CallReader::R::kError) return fail(out);
          call_done_ = r == CallReader::R::kDone;
          // vLLM's regex ends a call at the first </tool_call>, even inside a JSON string.
          if (!call_done_ && raw_.size() >= kHermesClose.size() &&
              raw_.compare(raw_.size() - kHermesClose.size(), kHermesClose.size(), kHermesClose) ==
                  0)
            return fail(out);
          return;
        }
        if (close_ == 0 && is_ws(c)) return;
        if (c != kHermesClose[close_]) return fail(out);
        if (++close_ == kHermesClose.size()) st_ = St::kAfter;
        return;
      case St::kRaw:
        out.content += c;
        return;
    }
  }

  St st_ = St::kContent;
  TagScanner open_{kHermesOpen};
  CallEmitter em_{ToolParserKind::kHermes, {"arguments"}, true};
  std::string raw_;
  bool call_done_ = false;
  size_t close_ = 0;
};

class Llama3Parser : public ToolCallParser {
 public:
  void feed(std::string_view text, ParsedDelta& out) override {
    for (char c : text) step(c, out);
  }
  void finish(ParsedDelta& out) override {
    if (st_ == St::kStart) out.content += pending_;
    if (st_ == St::kCall) fail(out);
  }

 private:
  enum class St { kStart, kContent, kCall, kSkip, kRaw };
  void fail(ParsedDelta& out) {
    failed_ = true;
    out.content += raw_;
    st_ = St::kRaw;
  }
  void start_call() {
    st_ = St::kCall;
    raw_.clear();
    em_.begin();
  }
  void step(char c, ParsedDelta& out) {
    switch (st_) {
      case St::kStart:
        pending_ += c;
        if (pending_ == kPythonTag) {
          start_call();
          return;
        }
        if (kPythonTag.substr(0, pending_.size()) == pending_) return;
        if (pending_ == "{") {
          start_call();
          break;  // the brace is the call's first character
        }
        st_ = St::kContent;
        out.content += pending_;
        return;
      case St::kContent:
      case St::kRaw:
        out.content += c;
        return;
      case St::kSkip:
        raw_ += c;
        // json raw_decode resumes two characters after each object ("; ").
        if (skip_ > 0) {
          --skip_;
          return;
        }
        if (c != '{') return fail(out);
        start_call();
        break;
      case St::kCall:
        break;
    }
    raw_ += c;
    const auto r = em_.feed(c, out, num_calls_);
    if (r == CallReader::R::kError) return fail(out);
    if (r == CallReader::R::kDone) {
      st_ = St::kSkip;
      skip_ = 2;
    }
  }

  St st_ = St::kStart;
  std::string pending_, raw_;
  int skip_ = 0;
  // raw_decode does not skip leading whitespace.
  CallEmitter em_{ToolParserKind::kLlama3Json, {"arguments", "parameters"}, false};
};

// A JSON array of call objects: Mistral's after [TOOL_CALLS] (waiting for the token first)
// and tool_choice "required"'s whole output.
class CallArrayParser : public ToolCallParser {
 public:
  CallArrayParser(ToolParserKind kind, std::string_view args_key, bool wait_for_bot)
      : kind_(kind), em_(kind, {args_key}, true), st_(wait_for_bot ? St::kContent : St::kOpen) {}
  void feed(std::string_view text, ParsedDelta& out) override {
    for (char c : text) step(c, out);
  }
  void finish(ParsedDelta& out) override {
    if (st_ == St::kContent) {
      out.content += bot_.take();
      return;
    }
    if (st_ != St::kDone && st_ != St::kRaw) fail(out);
  }
  bool saw_bot() const { return st_ != St::kContent; }

 private:
  enum class St { kContent, kOpen, kItemOrEnd, kItem, kInItem, kCommaOrEnd, kDone, kRaw };
  void fail(ParsedDelta& out) {
    failed_ = true;
    if (kind_ == ToolParserKind::kMistral) out.content += raw_;
    st_ = St::kRaw;
  }
  void step(char c, ParsedDelta& out) {
    if (st_ == St::kContent) {
      if (bot_.feed(c, &out.content)) {
        st_ = St::kOpen;
        raw_ = kMistralBot;
      }
      return;
    }
    if (st_ == St::kRaw) {
      if (kind_ == ToolParserKind::kMistral) out.content += c;
      return;
    }
    if (st_ == St::kDone) return;  // text after the array: vLLM's regex ignores it
    raw_ += c;
    if (st_ == St::kInItem) {
      const auto r = em_.feed(c, out, num_calls_);
      if (r == CallReader::R::kError) return fail(out);
      if (r == CallReader::R::kDone) st_ = St::kCommaOrEnd;
      return;
    }
    if (is_ws(c)) return;
    switch (st_) {
      case St::kOpen:
        if (c != '[') return fail(out);
        st_ = St::kItemOrEnd;
        return;
      case St::kItemOrEnd:
      case St::kItem:
        if (c == ']' && st_ == St::kItemOrEnd) {
          st_ = St::kDone;
          return;
        }
        em_.begin();
        st_ = St::kInItem;
        if (em_.feed(c, out, num_calls_) == CallReader::R::kError) fail(out);
        return;
      case St::kCommaOrEnd:
        if (c == ',')
          st_ = St::kItem;
        else if (c == ']')
          st_ = St::kDone;
        else
          fail(out);
        return;
      default:
        return;
    }
  }

  ToolParserKind kind_;
  TagScanner bot_{kMistralBot};
  CallEmitter em_;
  St st_;
  std::string raw_;
};

// tool_choice naming a function: every output character belongs to its arguments.
class NamedParser : public ToolCallParser {
 public:
  explicit NamedParser(std::string name) : name_(std::move(name)) {}
  void feed(std::string_view text, ParsedDelta& out) override {
    header(out);
    if (text.empty()) return;
    ToolCallDelta f;
    f.arguments = text;
    out.calls.push_back(std::move(f));
  }
  void finish(ParsedDelta& out) override { header(out); }

 private:
  void header(ParsedDelta& out) {
    if (num_calls_ > 0) return;
    ToolCallDelta h;
    h.header = true;
    h.id = make_tool_call_id(ToolParserKind::kNamed);
    h.name = name_;
    out.calls.push_back(std::move(h));
    num_calls_ = 1;
  }
  std::string name_;
};

std::string strip_ws(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\n\r\f\v");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n\r\f\v") - b + 1);
}

}  // namespace

std::optional<ToolParserKind> tool_parser_by_name(const std::string& name) {
  if (name == "hermes") return ToolParserKind::kHermes;
  if (name == "llama3_json") return ToolParserKind::kLlama3Json;
  if (name == "mistral") return ToolParserKind::kMistral;
  if (name == "openai") return ToolParserKind::kOpenAI;  // gpt-oss only (openai_server.cpp)
  // vLLM registers both names for one GLM parser (GLM-4.7 may write the name and its first
  // <arg_key> on one line, which the glm45 parser reads too).
  if (name == "glm45" || name == "glm47") return ToolParserKind::kGlm45;
  if (name == "minimax_m2") return ToolParserKind::kMinimaxM2;
  return std::nullopt;
}

const char* tool_parser_names() {
  return "hermes, llama3_json, mistral, glm45, glm47, minimax_m2, openai (gpt-oss)";
}

std::string make_tool_call_id(ToolParserKind kind) {
  thread_local std::mt19937_64 rng(std::random_device{}() ^
                                   std::hash<std::thread::id>{}(std::this_thread::get_id()));
  if (kind == ToolParserKind::kMistral) {
    static const char* alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    std::string s;
    for (int i = 0; i < 9; ++i) s += alnum[rng() % 62];
    return s;
  }
  static const char* hex = "0123456789abcdef";
  std::string s = "chatcmpl-tool-";
  for (int i = 0; i < 32; ++i) s += hex[rng() & 15];
  return s;
}

std::unique_ptr<ToolCallParser> ToolCallParser::make(ToolParserKind kind,
                                                     const std::string& named_function) {
  ToolParserOptions o;
  o.named_function = named_function;
  return make(kind, o);
}

std::unique_ptr<ToolCallParser> ToolCallParser::make(ToolParserKind kind,
                                                     const ToolParserOptions& o) {
  const std::string& named_function = o.named_function;
  switch (kind) {
    case ToolParserKind::kHermes:
      return std::make_unique<HermesParser>();
    case ToolParserKind::kLlama3Json:
      return std::make_unique<Llama3Parser>();
    case ToolParserKind::kMistral:
      return std::make_unique<CallArrayParser>(kind, "arguments", true);
    case ToolParserKind::kRequired:
      return std::make_unique<CallArrayParser>(kind, "parameters", false);
    case ToolParserKind::kNamed:
      return std::make_unique<NamedParser>(named_function);
    case ToolParserKind::kGlm45:
      return make_glm45_tool_parser(o);
    case ToolParserKind::kMinimaxM2:
      return make_minimax_m2_tool_parser(o);
    case ToolParserKind::kOpenAI:
      return nullptr;
  }
  return nullptr;
}

ExtractedToolCalls extract_tool_calls(ToolParserKind kind, const std::string& output,
                                      const std::string& named_function) {
  ToolParserOptions o;
  o.named_function = named_function;
  return extract_tool_calls(kind, output, std::move(o));
}

ExtractedToolCalls extract_tool_calls(ToolParserKind kind, const std::string& output,
                                      ToolParserOptions o) {
  o.whole_response = true;
  auto p = ToolCallParser::make(kind, o);
  ExtractedToolCalls none;
  none.content = output;
  if (!p) return none;  // kOpenAI: harmony_parser.h reads those calls
  ParsedDelta d;
  p->feed(output, d);
  p->finish(d);
  ExtractedToolCalls r;
  for (ToolCallDelta& t : d.calls) {
    if (t.header)
      r.calls.push_back({std::move(t.id), std::move(t.name), ""});
    else if (!r.calls.empty())
      r.calls.back().arguments += t.arguments;
  }
  if (p->failed()) {
    r.calls.clear();
    if (kind == ToolParserKind::kMistral) {
      // vLLM falls back to the output without its [TOOL_CALLS] tokens, stripped.
      std::string s = output;
      for (size_t at; (at = s.find(kMistralBot)) != std::string::npos;)
        s.erase(at, kMistralBot.size());
      r.content = strip_ws(s);
    } else {
      r.content = kind == ToolParserKind::kRequired ? std::string() : output;
    }
    return r;
  }
  switch (kind) {
    case ToolParserKind::kNamed:
    case ToolParserKind::kRequired:
      r.tools_called = !r.calls.empty();
      r.content = "";
      return r;
    case ToolParserKind::kLlama3Json:
      r.tools_called = !r.calls.empty();
      if (!r.tools_called) r.content = output;
      return r;
    case ToolParserKind::kHermes:
    case ToolParserKind::kMistral: {
      const bool saw = kind == ToolParserKind::kHermes
                           ? !r.calls.empty()
                           : static_cast<CallArrayParser*>(p.get())->saw_bot();
      r.tools_called = saw;
      if (!saw)
        r.content = output;
      else if (!d.content.empty())
        r.content = d.content;
      return r;
    }
    case ToolParserKind::kGlm45:
    case ToolParserKind::kMinimaxM2: {
      // vLLM: with calls, the content before the first one, stripped; without, the text
      // outside the (dropped) call blocks. Either way null when empty.
      r.tools_called = !r.calls.empty();
      std::string c = r.tools_called ? py_strip(d.content) : d.content;
      r.content = c.empty() ? std::nullopt : std::optional<std::string>(std::move(c));
      return r;
    }
    case ToolParserKind::kOpenAI:
      break;
  }
  return r;
}

}  // namespace vllm::api
