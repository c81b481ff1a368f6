// Qwen3-Coder XML tool calls, whole and streaming (see the header).
#include "api/server/qwen3_coder_tool_parser.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/schema_coerce.h"
#include "api/server/tag_call_parser.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::string_view kFunc = "<function=";
constexpr std::string_view kFuncEnd = "</function>";
constexpr std::string_view kNameEnd = ">";
constexpr std::string_view kParameter = "parameter";

size_t regex_space(std::string_view s, size_t i) { return space_run(s, i, /*regex_s=*/true); }

// <\s*parameter\s*=\s*([^>]*)> at s[i]: the name and where the tag ends.
bool param_open_at(std::string_view s, size_t i, std::string_view& name, size_t& end) {
  if (i >= s.size() || s[i] != '<') return false;
  i += 1 + regex_space(s, i + 1);
  if (s.substr(i, kParameter.size()) != kParameter) return false;
  i += kParameter.size();
  i += regex_space(s, i);
  if (i >= s.size() || s[i] != '=') return false;
  ++i;
  i += regex_space(s, i);
  const size_t gt = s.find('>', i);
  if (gt == std::string_view::npos) return false;
  name = s.substr(i, gt - i);
  end = gt + 1;
  return true;
}

// <\s*parameter\s*= at s[i] (the lookahead that ends a value without its closing tag).
bool param_start_at(std::string_view s, size_t i) {
  if (i >= s.size() || s[i] != '<') return false;
  i += 1 + regex_space(s, i + 1);
  if (s.substr(i, kParameter.size()) != kParameter) return false;
  i += kParameter.size();
  i += regex_space(s, i);
  return i < s.size() && s[i] == '=';
}

// <\s*/\s*parameter\s*> at s[i], and where it ends.
bool param_close_at(std::string_view s, size_t i, size_t& end) {
  if (i >= s.size() || s[i] != '<') return false;
  i += 1 + regex_space(s, i + 1);
  if (i >= s.size() || s[i] != '/') return false;
  ++i;
  i += regex_space(s, i);
  if (s.substr(i, kParameter.size()) != kParameter) return false;
  i += kParameter.size();
  i += regex_space(s, i);
  if (i >= s.size() || s[i] != '>') return false;
  end = i + 1;
  return true;
}

// Whether `t` (from a '<' to the end of the text so far) may still grow into a value's end: a
// closing tag or the start of the next parameter.
bool may_end_value(std::string_view t) {
  size_t i = 1 + regex_space(t, 1);
  if (i == t.size()) return true;
  if (t[i] == '/') i += 1 + regex_space(t, i + 1);
  for (size_t m = 0; m < kParameter.size(); ++m, ++i) {
    if (i == t.size()) return true;
    if (t[i] != kParameter[m]) return false;
  }
  return i + regex_space(t, i) == t.size();
}

// The value as the converter keeps it: one leading and one trailing newline taken off.
std::string_view trim_newlines(std::string_view v) {
  if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
  if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
  return v;
}

// The parameters of a call body that vLLM's finditer of _PARAM_RE (DOTALL) finds. `end` is
// where the search for the next one starts; `open_key` / `open_value` (when not null) get the
// parameter still open at the end of `s` (its tag seen, its value not yet ended).
std::vector<ArgPair> complete_params(std::string_view s, size_t& end, std::string* open_key,
                                     size_t* open_value) {
  std::vector<ArgPair> params;
  end = 0;
  if (open_value) *open_value = std::string_view::npos;
  for (size_t pos = 0;;) {
    std::string_view name;
    size_t vstart = 0, at = s.find('<', pos);
    while (at != std::string_view::npos && !param_open_at(s, at, name, vstart))
      at = s.find('<', at + 1);
    if (at == std::string_view::npos) return params;
    // The value runs (lazily) to the first closing tag or next parameter start; a value with
    // neither fails this match, and then every later one (they would have ended it).
    size_t k = s.find('<', vstart), close_end = 0;
    for (; k != std::string_view::npos; k = s.find('<', k + 1)) {
      if (param_close_at(s, k, close_end)) break;
      if (param_start_at(s, k)) {
        close_end = k;
        break;
      }
    }
    if (k == std::string_view::npos) {
      if (open_key) *open_key = std::string(name);
      if (open_value) *open_value = vstart;
      end = at;
      return params;
    }
    params.push_back({std::string(name), std::string(trim_newlines(s.substr(vstart, k - vstart)))});
    pos = end = close_end;
  }
}

class Qwen3CoderParser : public TagCallParser {
 public:
  Qwen3CoderParser(const ToolParserOptions& o, bool seed)
      : TagCallParser(o, seed ? ToolParserKind::kSeedOss : ToolParserKind::kQwen3Coder),
        kCall(seed ? "<seed:tool_call>" : "<tool_call>"),
        kCallEnd(seed ? "</seed:tool_call>" : "</tool_call>"),
        kThinkEnd(seed ? "</seed:think>" : "</think>") {}

 private:
  enum class St { kContent, kBlock, kName, kArgs };

  bool in_name() const override { return st_ == St::kName; }
  bool in_args() const override { return st_ == St::kArgs; }
  void to_content() override { st_ = St::kContent; }
  // Qwen3's config does not validate names: any non-empty one is kept.
  bool keeps(const std::string& name) const override { return !name.empty(); }
  std::vector<ArgPair> complete_args() const override {
    size_t end = 0;
    return complete_params(args_raw_, end, nullptr, nullptr);
  }

  std::vector<std::string_view> tags() const override {
    switch (st_) {
      case St::kContent:
        if (markup_) return {kCall, kFunc, kThinkEnd};
        return {kCall, kFunc};
      case St::kBlock:  // inside <tool_call>, outside a function
        return {kCallEnd, kCall, kFunc};
      case St::kName:
        return {kNameEnd, kFuncEnd, kCallEnd, kCall, kFunc};
      case St::kArgs:
        return {kFuncEnd, kFunc};
    }
    return {};
  }

  void on_text(std::string_view t, ParsedDelta& out) override {
    if (t.empty()) return;
    switch (st_) {
      case St::kContent:
        content_text(t, out);
        return;
      case St::kBlock:
        return;  // dropped
      case St::kName:
        name_raw_ += t;
        return;
      case St::kArgs:
        args_raw_ += t;
        return;
    }
  }

  void on_tag(std::string_view tag, ParsedDelta& out) override {
    if (tag == kThinkEnd) return;  // a reasoning parser runs: a stray </think> is dropped
    if (tag == kNameEnd) {
      decide_name(out);
      st_ = St::kArgs;
      return;
    }
    if (st_ == St::kName) decide_name(out);
    if (st_ == St::kName || st_ == St::kArgs) end_call(out);
    seen_call_ = true;
    if (tag == kCall) {
      st_ = St::kBlock;
    } else if (tag == kFunc) {
      st_ = St::kName;
      begin_call();
    } else if (tag == kFuncEnd) {
      st_ = St::kBlock;  // between functions of one block (text there is dropped)
    } else {             // </tool_call>
      st_ = St::kContent;
    }
  }

  // The part of an open string value that can be sent: what may begin its end held back, its
  // first newline dropped and a trailing one held.
  std::string_view open_value_text(size_t vstart) const {
    std::string_view v = std::string_view(args_raw_).substr(vstart);
    const size_t lt = v.rfind('<');
    if (lt != std::string_view::npos && may_end_value(v.substr(lt))) v = v.substr(0, lt);
    if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
    if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
    return v;
  }

  // Streaming: the part of the open call's arguments no later text can change.
  void stream_args(ParsedDelta& out) override {
    if (!kept_ || broken_) return;
    if (open_at_ != std::string::npos) {
      // A string value is being sent: while nothing has ended it, only its new text is new.
      const size_t lt = args_raw_.find('<', std::max(open_at_, scanned_));
      bool ended = false;
      for (size_t k = lt; k != std::string::npos; k = args_raw_.find('<', k + 1)) {
        size_t e = 0;
        if (param_close_at(args_raw_, k, e) || param_start_at(args_raw_, k)) {
          ended = true;
          break;
        }
        if (may_end_value(std::string_view(args_raw_).substr(k))) break;  // wait for more
        scanned_ = k + 1;
      }
      if (!ended) {
        const std::string_view v = open_value_text(open_at_);
        if (v.size() <= open_sent_) return;
        const std::string q = py_json_quote(v.substr(open_sent_));
        open_sent_ = v.size();
        ToolCallDelta f;
        f.index = num_calls_ - 1;
        f.arguments = q.substr(1, q.size() - 2);
        streamed_ += f.arguments;
        out.calls.push_back(std::move(f));
        return;
      }
      open_at_ = std::string::npos;
    }
    size_t end = 0, vstart = std::string::npos;
    std::string key;
    const std::vector<ArgPair> params = complete_params(args_raw_, end, &key, &vstart);
    std::vector<std::string> keys;
    bool cut = false;
    std::string s = arg_pairs_json(params, properties_, /*stable=*/true, &cut, &keys);
    // The open value is sent as it arrives when it stays a string (its text can only grow).
    if (!cut && vstart != std::string::npos &&
        std::find(keys.begin(), keys.end(), key) == keys.end()) {
      const ojson* schema = schema_of(key);
      if (!schema || schema_keeps_string(*schema)) {
        const std::string_view v = open_value_text(vstart);
        const std::string q = py_json_quote(v);
        s += (keys.empty() ? "" : ", ") + py_json_quote(key) + ": " + q.substr(0, q.size() - 1);
        open_at_ = vstart;
        open_sent_ = v.size();
        scanned_ = vstart;
      }
    }
    if (s != "{") emit_args(s, out);  // "{" alone: nothing certain yet
  }

  // The block and reasoning tags: Qwen3's, or Seed-OSS's (<seed:tool_call>, </seed:think>).
  const std::string_view kCall, kCallEnd, kThinkEnd;
  St st_ = St::kContent;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_qwen3_coder_tool_parser(const ToolParserOptions& o,
                                                             bool seed) {
  return std::make_unique<Qwen3CoderParser>(o, seed);
}

}  // namespace vllm::api
