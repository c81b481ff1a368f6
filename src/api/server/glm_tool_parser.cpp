// GLM-4.5 XML-style tool calls, whole and streaming (see the header).
#include "api/server/glm_tool_parser.h"

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

constexpr std::string_view kCall = "<tool_call>";
constexpr std::string_view kCallEnd = "</tool_call>";
constexpr std::string_view kKey = "<arg_key>";
constexpr std::string_view kKeyEnd = "</arg_key>";
constexpr std::string_view kValue = "<arg_value>";
constexpr std::string_view kValueEnd = "</arg_value>";
constexpr std::string_view kThink = "<think>";
constexpr std::string_view kThinkEnd = "</think>";

// The complete pairs of a call's argument text, as vLLM's finditer of
// <arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)</arg_value> (DOTALL) finds them: from each
// <arg_key>, the key runs to the first </arg_key> that whitespace and <arg_value> follow, the
// value to the next </arg_value>. `end` is where the last pair ended.
std::vector<ArgPair> complete_pairs(std::string_view s, size_t& end) {
  std::vector<ArgPair> pairs;
  end = 0;
  for (;;) {
    const size_t start = s.find(kKey, end);
    if (start == std::string_view::npos) return pairs;
    // A later start can only find the same key ends and value ends, so when this one fails no
    // later one succeeds.
    for (size_t k = s.find(kKeyEnd, start + kKey.size());; k = s.find(kKeyEnd, k + 1)) {
      if (k == std::string_view::npos) return pairs;
      size_t v = k + kKeyEnd.size();
      v += space_run(s, v, /*regex_s=*/true);
      if (s.substr(v, kValue.size()) != kValue) continue;
      const size_t vend = s.find(kValueEnd, v + kValue.size());
      if (vend == std::string_view::npos) return pairs;
      pairs.push_back({py_strip(s.substr(start + kKey.size(), k - start - kKey.size())),
                       std::string(s.substr(v + kValue.size(), vend - v - kValue.size()))});
      end = vend + kValueEnd.size();
      break;
    }
  }
}

// The pair still open at the end of `s` (its <arg_value> seen, its </arg_value> not yet), from
// position `from`: its key and where its value starts.
bool open_pair(std::string_view s, size_t from, std::string& key, size_t& value_start) {
  const size_t start = s.find(kKey, from);
  if (start == std::string_view::npos) return false;
  for (size_t k = s.find(kKeyEnd, start + kKey.size()); k != std::string_view::npos;
       k = s.find(kKeyEnd, k + 1)) {
    size_t v = k + kKeyEnd.size();
    v += space_run(s, v, /*regex_s=*/true);
    if (s.substr(v, kValue.size()) != kValue) continue;
    key = py_strip(s.substr(start + kKey.size(), k - start - kKey.size()));
    value_start = v + kValue.size();
    return true;
  }
  return false;
}

class Glm45Parser : public TagCallParser {
 public:
  explicit Glm45Parser(const ToolParserOptions& o) : TagCallParser(o, ToolParserKind::kGlm45) {}

 private:
  enum class St { kContent, kReasoning, kName, kArgs };

  bool in_name() const override { return st_ == St::kName; }
  bool in_args() const override { return st_ == St::kArgs; }
  void to_content() override { st_ = St::kContent; }
  // vLLM's GLM parser keeps only the request's tools.
  bool keeps(const std::string& name) const override { return tool_call_allowed(tools_, name); }
  std::vector<ArgPair> complete_args() const override {
    size_t end = 0;
    return complete_pairs(args_raw_, end);
  }

  std::vector<std::string_view> tags() const override {
    switch (st_) {
      case St::kContent:
        if (markup_) return {kCall, kThink, kThinkEnd};
        return {kCall};
      case St::kReasoning:
        return {kCall, kThink, kThinkEnd};
      case St::kName:
        return {kKey, kCallEnd};
      case St::kArgs:
        return {kCallEnd};
    }
    return {};
  }

  void on_text(std::string_view t, ParsedDelta& out) override {
    if (t.empty()) return;
    switch (st_) {
      case St::kContent:
        content_text(t, out);
        return;
      case St::kReasoning:
        return;  // reasoning inside the content is not content
      case St::kName:
        name_raw_ += t;
        return;
      case St::kArgs:
        args_raw_ += t;
        return;
    }
  }

  void on_tag(std::string_view tag, ParsedDelta& out) override {
    if (tag == kThink) {
      st_ = St::kReasoning;  // dropped again when already reasoning
    } else if (tag == kThinkEnd) {
      st_ = St::kContent;  // a stray </think> in the content is dropped
    } else if (tag == kCall) {
      seen_call_ = true;
      st_ = St::kName;
      begin_call();
    } else if (tag == kKey) {
      decide_name(out);
      st_ = St::kArgs;
      args_raw_ = kKey;
    } else if (tag == kCallEnd) {
      if (st_ == St::kName) decide_name(out);
      end_call(out);
      st_ = St::kContent;
    }
  }

  // Streaming: the part of the open call's arguments no later text can change.
  void stream_args(ParsedDelta& out) override {
    if (!kept_ || broken_) return;
    if (open_at_ != std::string::npos) {
      // A string value is being sent: while its </arg_value> has not come, only its new text
      // is new (linear in the value's length, however it is chunked).
      const size_t scan =
          std::max(open_at_, scanned_ >= kValueEnd.size() ? scanned_ - kValueEnd.size() + 1 : 0);
      scanned_ = args_raw_.size();
      if (args_raw_.find(kValueEnd, scan) == std::string::npos) {
        std::string_view v = std::string_view(args_raw_).substr(open_sent_);
        v.remove_suffix(partial_tag_suffix(v, kValueEnd));
        open_sent_ += v.size();
        if (v.empty()) return;
        const std::string q = py_json_quote(v);
        ToolCallDelta f;
        f.index = num_calls_ - 1;
        f.arguments = q.substr(1, q.size() - 2);
        streamed_ += f.arguments;
        out.calls.push_back(std::move(f));
        return;
      }
      open_at_ = std::string::npos;
    }
    size_t end = 0;
    const std::vector<ArgPair> pairs = complete_pairs(args_raw_, end);
    std::vector<std::string> keys;
    bool cut = false;
    std::string s = arg_pairs_json(pairs, properties_, /*stable=*/true, &cut, &keys);
    // The open value is sent as it arrives when it stays a string (its text can only grow).
    std::string key;
    size_t vstart = 0;
    if (!cut && open_pair(args_raw_, end, key, vstart) && !key.empty() &&
        std::find(keys.begin(), keys.end(), key) == keys.end()) {
      const ojson* schema = schema_of(key);
      if (!schema || schema_keeps_string(*schema)) {
        std::string_view v = std::string_view(args_raw_).substr(vstart);
        v.remove_suffix(partial_tag_suffix(v, kValueEnd));
        const std::string q = py_json_quote(v);
        s += (keys.empty() ? "" : ", ") + py_json_quote(key) + ": " + q.substr(0, q.size() - 1);
        open_at_ = vstart;
        open_sent_ = vstart + v.size();
        scanned_ = args_raw_.size();
      }
    }
    if (s != "{") emit_args(s, out);  // "{" alone: nothing certain yet
  }

  St st_ = St::kContent;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_glm45_tool_parser(const ToolParserOptions& o) {
  return std::make_unique<Glm45Parser>(o);
}

}  // namespace vllm::api
