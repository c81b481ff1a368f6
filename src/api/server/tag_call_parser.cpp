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
  if (!any_kept_ && !(seen_call_ && !content_started_ && py_all_space(held_ + post_)))
    out.content += held_ + post_;
  held_.clear();
  post_.clear();
}

void TagCallParser::emit_args(const std::string& args, ParsedDelta& out) {
  if (!stream_args_extension(streamed_, args, num_calls_ - 1, out)) broken_ = true;
}

}  // namespace vllm::api
