// Incremental tool-call parsers (see the header for each format).
#include "api/server/tool_parsers.h"

#include <random>
#include <thread>

#include "api/server/deepseek_tool_parser.h"
#include "api/server/ernie_tool_parser.h"
#include "api/server/glm_tool_parser.h"
#include "api/server/granite_tool_parser.h"
#include "api/server/json_call_reader.h"
#include "api/server/kimi_tool_parser.h"
#include "api/server/marked_calls_parser.h"
#include "api/server/minimax_tool_parser.h"
#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/pythonic_tool_parser.h"
#include "api/server/qwen3_coder_tool_parser.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMistralBot = "[TOOL_CALLS]";

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
        if (close_ == 0 && is_json_ws(c)) return;
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
    if (is_json_ws(c)) return;
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
  // vLLM 0.33 registers qwen3_json as its hermes parser and llama4_json as llama3_json's.
  if (name == "hermes" || name == "qwen3_json") return ToolParserKind::kHermes;
  if (name == "llama3_json" || name == "llama4_json") return ToolParserKind::kLlama3Json;
  if (name == "mistral") return ToolParserKind::kMistral;
  if (name == "openai") return ToolParserKind::kOpenAI;  // gpt-oss only (openai_server.cpp)
  // vLLM registers both names for one GLM parser (GLM-4.7 may write the name and its first
  // <arg_key> on one line, which the glm45 parser reads too).
  if (name == "glm45" || name == "glm47") return ToolParserKind::kGlm45;
  if (name == "minimax_m2") return ToolParserKind::kMinimaxM2;
  // One parser under both names in vLLM 0.33 (Qwen3-Coder, Qwen3.5).
  if (name == "qwen3_coder" || name == "qwen3_xml") return ToolParserKind::kQwen3Coder;
  if (name == "pythonic") return ToolParserKind::kPythonic;
  if (name == "seed_oss") return ToolParserKind::kSeedOss;
  if (name == "deepseek_v3") return ToolParserKind::kDeepseekV3;
  if (name == "deepseek_v31") return ToolParserKind::kDeepseekV31;
  if (name == "olmo3") return ToolParserKind::kOlmo3;
  if (name == "phi4_mini_json") return ToolParserKind::kPhi4MiniJson;
  if (name == "granite") return ToolParserKind::kGranite;
  if (name == "internlm") return ToolParserKind::kInternlm;
  if (name == "kimi_k2") return ToolParserKind::kKimiK2;
  if (name == "ernie45") return ToolParserKind::kErnie45;
  return std::nullopt;
}

const char* tool_parser_names() {
  return "hermes, qwen3_json, qwen3_coder, qwen3_xml, llama3_json, llama4_json, mistral, glm45, "
         "glm47, minimax_m2, pythonic, deepseek_v3, deepseek_v31, seed_oss, olmo3, phi4_mini_json, "
         "granite, internlm, kimi_k2, ernie45, openai (gpt-oss)";
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
    case ToolParserKind::kQwen3Coder:
      return make_qwen3_coder_tool_parser(o);
    case ToolParserKind::kSeedOss:
      return make_qwen3_coder_tool_parser(o, /*seed=*/true);
    case ToolParserKind::kPythonic:
      return make_pythonic_tool_parser();
    case ToolParserKind::kOlmo3:
      return make_olmo3_tool_parser(o.whole_response);
    case ToolParserKind::kPhi4MiniJson:
      return make_phi4_mini_json_tool_parser(o.whole_response);
    case ToolParserKind::kGranite:
      return make_granite_tool_parser(o);
    case ToolParserKind::kInternlm:
      return make_internlm_tool_parser(o.whole_response);
    case ToolParserKind::kDeepseekV3:
    case ToolParserKind::kDeepseekV31:
      return make_deepseek_tool_parser(kind == ToolParserKind::kDeepseekV31);
    case ToolParserKind::kKimiK2:
      return make_kimi_k2_tool_parser(o);
    case ToolParserKind::kErnie45:
      return make_ernie45_tool_parser();
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

namespace {

// vLLM 0.33's Llama3JsonToolParser.extract_tool_calls: every JSON object that starts at a "{"
// outside the objects already read is decoded (the text around them ignored); one that is not
// JSON or not a call ({"name": str, "arguments" | "parameters": ...}) makes the whole output
// content. Its stream (the incremental parser above) still reads only an output starting with
// "{" or <|python_tag|>, as vLLM's does.
ExtractedToolCalls llama3_json_whole(const std::string& output) {
  ExtractedToolCalls none;
  none.content = output;
  ExtractedToolCalls r;
  size_t end = 0;  // one past the last object read
  bool read_one = false;
  for (size_t i = output.find('{'); i != std::string::npos; i = output.find('{', i + 1)) {
    if (read_one && i <= end) continue;  // vLLM skips a "{" right at the end index too
    CallReader rd({"arguments", "parameters"}, false);
    CallReader::R res = CallReader::R::kMore;
    size_t j = i;
    std::string args;
    for (; j < output.size() && res == CallReader::R::kMore; ++j) {
      res = rd.feed(output[j]);
      if (rd.name_known()) args += rd.take_args();
    }
    if (res != CallReader::R::kDone) return none;
    r.calls.push_back({make_tool_call_id(ToolParserKind::kLlama3Json), rd.name(), args});
    end = j;
    read_one = true;
  }
  if (r.calls.empty()) return none;
  r.tools_called = true;
  return r;
}

}  // namespace

ExtractedToolCalls extract_tool_calls(ToolParserKind kind, const std::string& output,
                                      ToolParserOptions o) {
  if (kind == ToolParserKind::kLlama3Json) return llama3_json_whole(output);
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
    case ToolParserKind::kMinimaxM2:
    case ToolParserKind::kQwen3Coder:
    case ToolParserKind::kSeedOss:
    case ToolParserKind::kGranite: {
      // vLLM: with calls, the content before the first one, stripped; without, the text
      // outside the (dropped) call blocks. Either way null when empty.
      r.tools_called = !r.calls.empty();
      std::string c = r.tools_called ? py_strip(d.content) : d.content;
      r.content = c.empty() ? std::nullopt : std::optional<std::string>(std::move(c));
      return r;
    }
    case ToolParserKind::kPythonic:
      // vLLM: the whole output is the call list (content null) or the content.
      r.tools_called = !r.calls.empty();
      if (!r.tools_called) r.content = output;
      return r;
    case ToolParserKind::kOlmo3:
    case ToolParserKind::kPhi4MiniJson:
    case ToolParserKind::kInternlm:
      // vLLM: the calls, content null (also for a call list with none in it; internlm: the
      // text before the call) or the output.
      r.tools_called = !r.calls.empty();
      if (!d.content.empty() || output.empty()) r.content = d.content;
      return r;
    case ToolParserKind::kErnie45:
      // vLLM: calls once <tool_call> is there and every match reads (even none), the content
      // the text before it (null when empty); otherwise the output as written.
      r.tools_called = ernie45_called(*p);
      if (!d.content.empty() || !r.tools_called) r.content = std::move(d.content);
      return r;
    case ToolParserKind::kKimiK2:
      // The parser has the content as vLLM's whole response has it (kimi_tool_parser.h); null
      // when empty.
      r.tools_called = !r.calls.empty();
      if (!d.content.empty()) r.content = std::move(d.content);
      return r;
    case ToolParserKind::kDeepseekV3:
    case ToolParserKind::kDeepseekV31:
      // vLLM: once the calls' start token is there, tools were called (even if its regex then
      // finds none) and the content is the text around them, null when empty.
      r.tools_called = deepseek_saw_calls(*p);
      if (!r.tools_called)
        r.content = output;
      else if (!d.content.empty())
        r.content = d.content;
      return r;
    case ToolParserKind::kOpenAI:
      break;
  }
  return r;
}

}  // namespace vllm::api
