// The tag scan, content and argument dict of the tag-driven tool-call parsers (see the header).
#include "api/server/tag_call_parser.h"

#include <algorithm>

#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/schema_coerce.h"
#include "api/server/tag_scan.h"

namespace vllm::api {

std::string arg_pairs_json(const std::vector<ArgPair>& pairs,
                           const nlohmann::ordered_json& properties, bool stable, bool* cut,
                           std::vector<std::string>* keys) {
  std::vector<std::pair<std::string, std::string>> dict;
  size_t first_repeat = pairs.size();
  for (const ArgPair& p : pairs) {
    size_t i = 0;
    while (i < dict.size() && dict[i].first != p.key) ++i;
    if (i < dict.size()) {
      dict[i].second = p.value;
      first_repeat = std::min(first_repeat, i);
    } else {
      dict.emplace_back(p.key, p.value);
    }
  }
  if (cut) *cut = first_repeat < dict.size();
  if (stable && first_repeat < dict.size()) dict.resize(first_repeat);
  std::string s = "{";
  for (size_t i = 0; i < dict.size(); ++i) {
    if (i) s += ", ";
    s += py_json_quote(dict[i].first) + ": " +
         property_value_json(properties, dict[i].first, dict[i].second);
    if (keys) keys->push_back(dict[i].first);
  }
  return s;
}

TagCallParser::TagCallParser(const ToolParserOptions& o, ToolParserKind kind)
    : tools_(o.tools.is_array() ? o.tools : nlohmann::ordered_json::array()),
      markup_(o.reasoning_markup),
      whole_(o.whole_response),
      suppress_(o.suppress_calls),
      kind_(kind) {}

void TagCallParser::feed(std::string_view text, ParsedDelta& out) {
  scan(text, out);
  if (in_args() && !whole_) stream_args(out);
}

void TagCallParser::finish(ParsedDelta& out) {
  scan_rest(out);
  if (in_name()) decide_name(out);
  if (in_name() || in_args()) end_call(out);
  to_content();
  finish_content(out);
}

void TagCallParser::begin_call() {
  name_raw_.clear();
  args_raw_.clear();
  streamed_.clear();
  kept_ = broken_ = false;
  open_at_ = std::string::npos;
}

void TagCallParser::decide_name(ParsedDelta& out) {
  name_ = py_strip(name_raw_);
  kept_ = !suppress_ && keeps(name_);
  if (!kept_) return;
  call_kept();
  properties_ = tool_properties(tools_, name_);
  ToolCallDelta h;
  h.index = num_calls_++;
  h.header = true;
  h.id = make_tool_call_id(kind_);
  h.name = name_;
  out.calls.push_back(std::move(h));
}

const nlohmann::ordered_json* TagCallParser::schema_of(const std::string& key) const {
  if (properties_.empty()) return nullptr;
  auto it = properties_.find(key);
  if (it == properties_.end() || !it->is_object()) return nullptr;
  return &*it;
}

void TagCallParser::end_call(ParsedDelta& out) {
  if (kept_ && !broken_)
    emit_args(arg_pairs_json(complete_args(), properties_, /*stable=*/false) + "}", out);
  kept_ = false;
  open_at_ = std::string::npos;
  name_raw_.clear();
  args_raw_.clear();
}

void TagCallParser::scan(std::string_view text, ParsedDelta& out) {
  pending_ += text;
  size_t pos = 0;
  for (;;) {
    size_t at = std::string::npos;
    std::string_view tag;
    for (std::string_view t : tags()) {
      const size_t f = pending_.find(t, pos);
      if (f < at) {
        at = f;
        tag = t;
      }
    }
    if (at == std::string::npos) break;
    on_text(std::string_view(pending_).substr(pos, at - pos), out);
    on_tag(tag, out);
    pos = at + tag.size();
  }
  size_t hold = 0;
  for (std::string_view t : tags())
    hold = std::max(hold, partial_tag_suffix(std::string_view(pending_).substr(pos), t));
  on_text(std::string_view(pending_).substr(pos, pending_.size() - pos - hold), out);
  pending_.erase(0, pending_.size() - hold);
}

void TagCallParser::scan_rest(ParsedDelta& out) {
  std::string rest;
  rest.swap(pending_);
  on_text(rest, out);
}

void TagCallParser::content_text(std::string_view t, ParsedDelta& out) {
  if (suppress_) {
    suppressed_text(t, held_, content_started_, out.content);
    return;
  }
  if (seen_call_) {
    if (!any_kept_) post_ += t;
    return;
  }
  if (release_before_trailing_space(held_, t, out.content)) content_started_ = true;
}

void TagCallParser::call_kept() {
  any_kept_ = true;
  held_.clear();
  post_.clear();
}

void TagCallParser::finish_content(ParsedDelta& out) {
  if (suppress_)
    out.content += held_;
  else if (!any_kept_ && !(seen_call_ && !content_started_ && py_all_space(held_ + post_)))
    out.content += held_ + post_;
  held_.clear();
  post_.clear();
}

void TagCallParser::emit_args(const std::string& args, ParsedDelta& out) {
  if (!stream_args_extension(streamed_, args, num_calls_ - 1, out)) broken_ = true;
}

}  // namespace vllm::api
