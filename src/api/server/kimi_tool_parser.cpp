// Kimi K2's tool-call parser (kimi_tool_parser.h).
#include "api/server/kimi_tool_parser.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "api/server/py_str.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

constexpr std::string_view kSectionBegin = "<|tool_calls_section_begin|>";
constexpr std::string_view kSectionEnd = "<|tool_calls_section_end|>";
constexpr std::string_view kCallBegin = "<|tool_call_begin|>";
constexpr std::string_view kArgBegin = "<|tool_call_argument_begin|>";
constexpr std::string_view kCallEnd = "<|tool_call_end|>";
constexpr std::string_view kThinkEnd = "</think>";

// A call's id and name from its stripped header, as vLLM's _extract_tool_id_and_name: the id is
// _TOOL_ID_RE.match, `.+:\d+` from the start ('.' stops at a line feed), the longest match; the
// name is the id up to its first ":" less a "functions." prefix. Null without an id or a name.
std::optional<std::pair<std::string, std::string>> read_header(std::string_view header) {
  const std::string_view line = header.substr(0, header.find('\n'));
  for (size_t i = line.size(); i-- > 1;) {
    if (line[i] != ':' || i + 1 >= line.size() || line[i + 1] < '0' || line[i + 1] > '9') continue;
    size_t e = i + 1;
    while (e < line.size() && line[e] >= '0' && line[e] <= '9') ++e;
    const std::string_view id = line.substr(0, e);
    std::string_view name = id.substr(0, id.find(':'));
    constexpr std::string_view kPrefix = "functions.";
    if (name.substr(0, kPrefix.size()) == kPrefix) name.remove_prefix(kPrefix.size());
    if (name.empty()) return std::nullopt;
    return std::make_pair(std::string(id), std::string(name));
  }
  return std::nullopt;
}

class KimiK2Parser : public ToolCallParser {
 public:
  explicit KimiK2Parser(const ToolParserOptions& o)
      : markup_(o.reasoning_markup), suppress_(o.suppress_calls) {}

  void feed(std::string_view text, ParsedDelta& out) override {
    pending_ += text;
    scan(false, out);
  }

  void finish(ParsedDelta& out) override {
    scan(true, out);
    if (st_ == St::kName) {
      // The output ended inside the header: the call still counts (vLLM's _handle_tool_end).
      const std::string h = py_strip(header_);
      if (auto call = read_header(h))
        open_call(call->first, call->second, out);
      else if (!h.empty())
        open_call(make_tool_call_id(ToolParserKind::kKimiK2), h, out);
      st_ = St::kArgs;
    }
    if (st_ == St::kArgs) end_call(out);
    // Whitespace-only content is dropped once a call is returned.
    if (num_calls_ == 0) out.content += held_ws_;
    held_ws_.clear();
  }

 private:
  enum class St { kContent, kSection, kName, kArgs };

  // The markers that mean something in the current state; the rest is text of the state.
  bool is_marker(std::string_view tag) const {
    switch (st_) {
      case St::kContent:
        return tag == kSectionBegin || (markup_ && tag == kThinkEnd);
      case St::kSection:
        return tag == kCallBegin;
      case St::kName:
        return tag == kArgBegin;
      case St::kArgs:
        return tag == kCallEnd || tag == kSectionEnd;
    }
    return false;
  }

  void scan(bool final, ParsedDelta& out) {
    static constexpr std::string_view kTags[] = {kSectionBegin, kSectionEnd, kCallBegin,
                                                 kArgBegin,     kCallEnd,    kThinkEnd};
    size_t pos = 0;
    for (;;) {
      size_t at = std::string::npos;
      std::string_view tag;
      for (std::string_view t : kTags) {
        if (!is_marker(t)) continue;
        const size_t f = pending_.find(t, pos);
        if (f < at) at = f, tag = t;
      }
      if (at == std::string::npos) break;
      on_text(std::string_view(pending_).substr(pos, at - pos), out);
      pos = at + tag.size();
      on_marker(tag, out);
    }
    size_t hold = 0;
    if (!final)
      for (std::string_view t : kTags)
        if (is_marker(t)) hold = std::max(hold, partial_tag_suffix(pending_, t));
    hold = std::min(hold, pending_.size() - pos);
    on_text(std::string_view(pending_).substr(pos, pending_.size() - pos - hold), out);
    pending_.erase(0, pending_.size() - hold);
  }

  void on_text(std::string_view t, ParsedDelta& out) {
    if (t.empty()) return;
    switch (st_) {
      case St::kContent:
        // Whitespace before the first word waits: dropped when a call follows.
        if (content_started_) {
          out.content += t;
        } else {
          held_ws_ += t;
          if (!py_all_space(held_ws_)) {
            out.content += held_ws_;
            held_ws_.clear();
            content_started_ = true;
          }
        }
        break;
      case St::kSection:
        break;  // between calls and after the section: dropped
      case St::kName:
        header_ += t;
        break;
      case St::kArgs:
        if (!in_call_) break;
        // Stripped as the whole response strips them: leading whitespace dropped, trailing
        // whitespace held until more arguments follow.
        if (args_sent_.empty() && args_ws_.empty()) {
          const size_t b = space_run(t, 0);
          t.remove_prefix(b);
          if (t.empty()) break;
        }
        args_ws_ += t;
        if (const size_t e = py_rstrip_end(args_ws_); e > 0) {
          send_args(args_ws_.substr(0, e), out);
          args_ws_.erase(0, e);
        }
        break;
    }
  }

  void on_marker(std::string_view tag, ParsedDelta& out) {
    if (tag == kThinkEnd) return;  // content's stray </think>: dropped
    if (tag == kSectionBegin) {
      st_ = St::kSection;
    } else if (tag == kCallBegin) {
      st_ = St::kName;
      header_.clear();
    } else if (tag == kArgBegin) {
      if (auto call = read_header(py_strip(header_))) open_call(call->first, call->second, out);
      st_ = St::kArgs;
    } else {  // the call's end, or the section's
      end_call(out);
      st_ = St::kSection;
    }
  }

  void open_call(std::string id, std::string name, ParsedDelta& out) {
    in_call_ = true;
    args_sent_.clear();
    args_ws_.clear();
    if (suppress_) return;
    ToolCallDelta h;
    h.index = num_calls_++;
    h.header = true;
    h.id = std::move(id);
    h.name = std::move(name);
    out.calls.push_back(std::move(h));
    held_ws_.clear();  // whitespace-only content goes with the first call
  }

  void send_args(std::string_view a, ParsedDelta& out) {
    args_sent_ += a;
    if (suppress_) return;
    ToolCallDelta f;
    f.index = num_calls_ - 1;
    f.arguments = std::string(a);
    out.calls.push_back(std::move(f));
  }

  void end_call(ParsedDelta& out) {
    if (in_call_ && args_sent_.empty()) send_args("{}", out);
    in_call_ = false;
    args_ws_.clear();
  }

  const bool markup_, suppress_;
  St st_ = St::kContent;
  std::string pending_;
  std::string held_ws_;  // content that is only whitespace so far
  bool content_started_ = false;
  std::string header_;
  bool in_call_ = false;  // the current call's header was read
  std::string args_sent_, args_ws_;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_kimi_k2_tool_parser(const ToolParserOptions& o) {
  return std::make_unique<KimiK2Parser>(o);
}

}  // namespace vllm::api
