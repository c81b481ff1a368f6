// DeepSeek V3 / V3.1 tool calls, whole and streaming (see the header).
#include "api/server/deepseek_tool_parser.h"

#include <string_view>

#include "api/server/py_str.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

constexpr size_t npos = std::string_view::npos;
constexpr std::string_view kCallsBegin = "<｜tool▁calls▁begin｜>";
constexpr std::string_view kCallsEnd = "<｜tool▁calls▁end｜>";
constexpr std::string_view kCallBegin = "<｜tool▁call▁begin｜>";
constexpr std::string_view kCallEnd = "<｜tool▁call▁end｜>";
constexpr std::string_view kSep = "<｜tool▁sep｜>";
constexpr std::string_view kFence = "\n```json\n";
constexpr std::string_view kFenceEnd = "\n```";

struct Call {
  std::string name, arguments;
};

// deepseek_v3's regex at a <｜tool▁call▁begin｜> at b (non-DOTALL .* stays on its line):
//   BEGIN(?P<type>.*)SEP(?P<name>.*)\n```json\n(?P<args>[\s\S]*?)\n```END
bool match_v3(std::string_view s, size_t b, Call& c, size_t& end, std::string& type) {
  const size_t from = b + kCallBegin.size();
  const size_t eol = s.find('\n', from);
  const std::string_view line = s.substr(from, eol == npos ? npos : eol - from);
  const size_t sep = line.rfind(kSep);  // the type is greedy: the line's last separator
  if (sep == npos || eol == npos || s.substr(eol, kFence.size()) != kFence) return false;
  const size_t args = eol + kFence.size();
  for (size_t k = s.find(kFenceEnd, args); k != npos; k = s.find(kFenceEnd, k + 1)) {
    if (s.substr(k + kFenceEnd.size(), kCallEnd.size()) != kCallEnd) continue;
    type = std::string(line.substr(0, sep));
    c.name = std::string(line.substr(sep + kSep.size()));
    c.arguments = std::string(s.substr(args, k - args));
    end = k + kFenceEnd.size() + kCallEnd.size();
    return true;
  }
  return false;
}

// deepseek_v31's: BEGIN(?P<name>.*?)SEP(?P<args>[\s\S]*?)END
bool match_v31(std::string_view s, size_t b, Call& c, size_t& end) {
  const size_t from = b + kCallBegin.size();
  const size_t sep = s.find(kSep, from);
  if (sep == npos || s.substr(from, sep - from).find('\n') != npos) return false;
  const size_t args = sep + kSep.size();
  const size_t e = s.find(kCallEnd, args);
  if (e == npos) return false;
  c.name = std::string(s.substr(from, sep - from));
  c.arguments = std::string(s.substr(args, e - args));
  end = e + kCallEnd.size();
  return true;
}

class DeepseekParser : public ToolCallParser {
 public:
  explicit DeepseekParser(bool v31) : v31_(v31) {}

  void feed(std::string_view text, ParsedDelta& out) override {
    buf_ += text;
    if (in_calls_) return;
    const size_t at = buf_.find(kCallsBegin, sent_);
    size_t upto = at;
    if (at == npos)
      upto = buf_.size() - partial_tag_suffix(std::string_view(buf_).substr(sent_), kCallsBegin);
    send(std::string_view(buf_).substr(sent_, upto - sent_), out);
    sent_ = upto;
    in_calls_ = at != npos;
  }

  void finish(ParsedDelta& out) override {
    if (!in_calls_) {
      send(std::string_view(buf_).substr(sent_), out);
      out.content += held_;  // whitespace-only content without calls is content
      return;
    }
    std::vector<Call> calls;
    const std::string_view s = buf_;
    for (size_t b = s.find(kCallBegin, sent_); b != npos;) {
      Call c;
      size_t end = 0;
      std::string type;
      if (!(v31_ ? match_v31(s, b, c, end) : match_v3(s, b, c, end, type))) {
        b = s.find(kCallBegin, b + 1);
        continue;
      }
      if (!v31_ && type != "function") {
        // vLLM's ToolCall takes only type "function": the whole extraction fails and the
        // output is the content.
        failed_ = true;
        out.content += held_;
        out.content += buf_.substr(sent_);
        return;
      }
      calls.push_back(std::move(c));
      b = s.find(kCallBegin, end);
    }
    for (Call& c : calls) {
      ToolCallDelta h;
      h.index = num_calls_++;
      h.header = true;
      h.id = make_tool_call_id(v31_ ? ToolParserKind::kDeepseekV31 : ToolParserKind::kDeepseekV3);
      h.name = std::move(c.name);
      out.calls.push_back(std::move(h));
      ToolCallDelta a;
      a.index = num_calls_ - 1;
      a.arguments = std::move(c.arguments);
      out.calls.push_back(std::move(a));
    }
    std::string after;
    if (!v31_) {  // deepseek_v3 keeps the text after the last <｜tool▁calls▁end｜>
      const size_t e = s.rfind(kCallsEnd);
      if (e != npos && e >= sent_) after = buf_.substr(e + kCallsEnd.size());
    }
    // Content that is only whitespace is null beside the calls (held back until now).
    if (started_ || !py_all_space(held_ + after)) out.content += held_ + after;
  }

  // The whole response's tools_called: the calls' start token was seen (and read).
  bool saw_calls() const { return in_calls_ && !failed_; }

 private:
  // Content before the calls: sent as it comes once it has more than whitespace.
  void send(std::string_view t, ParsedDelta& out) {
    if (!started_) {
      held_ += t;
      if (py_all_space(held_)) return;
      started_ = true;
      out.content += held_;
      held_.clear();
      return;
    }
    out.content += t;
  }

  bool v31_;
  std::string buf_, held_;
  size_t sent_ = 0;
  bool in_calls_ = false, started_ = false;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_deepseek_tool_parser(bool v31) {
  return std::make_unique<DeepseekParser>(v31);
}

bool deepseek_saw_calls(const ToolCallParser& p) {
  return static_cast<const DeepseekParser&>(p).saw_calls();
}

}  // namespace vllm::api
