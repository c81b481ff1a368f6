// Granite's JSON-array tool calls, read as vLLM 0.33's parser engine reads them (see the header).
#include "api/server/granite_tool_parser.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/schema_coerce.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

using ojson = nlohmann::ordered_json;
constexpr std::string_view kMarkers[] = {"<|tool_call|>", "<tool_call>"};

// vLLM's scan_json_object_end: the end (exclusive) of the object starting at s[start], or
// npos while it is unterminated.
size_t object_end(std::string_view s, size_t start) {
  int depth = 0;
  JsonStrings strings;
  for (size_t i = start; i < s.size(); ++i) {
    const char c = s[i];
    if (!strings.structural(c)) continue;
    if (c == '{')
      ++depth;
    else if (c == '}' && --depth == 0)
      return i + 1;
  }
  return std::string_view::npos;
}

// vLLM's extract_json_member_object(raw, "arguments"): the span of the member's object value
// (unterminated: to the end); nullopt when the value has not started; `not_object` when it is
// there but not an object (vLLM's ValueError).
std::optional<std::string_view> member_object(std::string_view raw, std::string_view key,
                                              bool& not_object) {
  int depth = 0;
  JsonStrings strings;
  size_t str_start = 0;
  std::optional<std::string_view> last;  // the last string closed at depth 1
  for (size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    const bool was_in = strings.in_str;
    if (!strings.structural(c)) {
      if (!was_in && strings.in_str)
        str_start = i;
      else if (was_in && !strings.in_str && depth == 1)
        last = raw.substr(str_start + 1, i - str_start - 1);
      continue;
    }
    if (c == ':' && depth == 1 && last == key) {
      size_t v = i + 1;
      while (v < raw.size() && is_json_ws(raw[v])) ++v;
      if (v >= raw.size()) return std::nullopt;
      if (raw[v] != '{') {
        not_object = true;
        return std::nullopt;
      }
      const size_t e = object_end(raw, v);
      return raw.substr(v, e == std::string_view::npos ? std::string_view::npos : e - v);
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::nullopt;
}

// vLLM's _NAME_RE = "name"\s*:\s*"([^"]*)", searched in the element's text.
std::string regex_name(std::string_view s) {
  constexpr std::string_view kKey = "\"name\"";
  for (size_t at = s.find(kKey); at != std::string_view::npos; at = s.find(kKey, at + 1)) {
    size_t i = at + kKey.size();
    i += space_run(s, i, /*regex_s=*/true);
    if (i >= s.size() || s[i] != ':') continue;
    ++i;
    i += space_run(s, i, /*regex_s=*/true);
    if (i >= s.size() || s[i] != '"') continue;
    const size_t close = s.find('"', i + 1);
    if (close == std::string_view::npos) continue;
    if (close > i + 1) return std::string(s.substr(i + 1, close - i - 1));
  }
  return "";
}

// json.dumps of a JSON value's text (Python's formatting); the text itself when it is not JSON.
std::string py_dumps(std::string_view text) {
  std::string out;
  return py_json_dumps(text, out) ? out : std::string(text);
}

// vLLM's _extract_name_and_args over an element's text: (name, arguments).
std::pair<std::string, std::string> name_and_args(std::string_view element) {
  const std::string body = py_strip(element);
  const ojson j = ojson::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return {"", body};
  std::string name;
  if (auto it = j.find("name"); it != j.end() && it->is_string()) name = it->get<std::string>();
  for (const char* key : {"arguments", "parameters"})
    if (auto it = j.find(key); it != j.end())
      return {name, it->is_string() ? it->get<std::string>() : py_dumps(it->dump())};
  ojson rest = j;
  rest.erase("name");
  return {name, py_dumps(rest.dump())};
}

// _coerce_value over a JSON value's text: the text to write (changed: a string was coerced).
std::string coerce_text(std::string_view v, const ojson& schema, bool& changed);

std::string coerce_members(std::string_view v, const ojson& props, bool& changed) {
  const ojson j = ojson::parse(v, nullptr, false);
  if (!j.is_object()) return std::string(v);
  ojson out = ojson::object();
  bool any = false;
  std::string text = "{";
  for (auto it = j.begin(); it != j.end(); ++it) {
    std::string value = it.value().dump();
    const auto p = props.find(it.key());
    if (p != props.end() && p->is_object()) value = coerce_text(value, *p, any);
    if (text.size() > 1) text += ", ";
    text += ojson(it.key()).dump() + ": " + value;
  }
  text += "}";
  if (!any) return std::string(v);
  changed = true;
  return text;
}

std::string coerce_text(std::string_view v, const ojson& schema, bool& changed) {
  const ojson j = ojson::parse(v, nullptr, false);
  if (j.is_string()) {
    const std::string s = j.get<std::string>();
    std::string c = coerce_to_schema_json(s, schema);
    if (c == py_json_quote(s)) return std::string(v);
    changed = true;
    return c;
  }
  if (j.is_object()) {
    const auto p = schema.find("properties");
    if (p != schema.end() && p->is_object()) return coerce_members(v, *p, changed);
    return std::string(v);
  }
  if (j.is_array()) {
    const auto items = schema.find("items");
    if (items == schema.end() || !items->is_object()) return std::string(v);
    bool any = false;
    std::string text = "[";
    for (const auto& e : j) {
      if (text.size() > 1) text += ", ";
      text += coerce_text(e.dump(), *items, any);
    }
    text += "]";
    if (!any) return std::string(v);
    changed = true;
    return text;
  }
  return std::string(v);
}

class GraniteParser : public ToolCallParser {
 public:
  explicit GraniteParser(const ToolParserOptions& o) : o_(o) {}

  void feed(std::string_view text, ParsedDelta& out) override {
    for (char c : text) step(c, out);
    if (st_ == St::kContent) {
      size_t hold = 0;
      for (std::string_view m : kMarkers) hold = std::max(hold, partial_tag_suffix(cbuf_, m));
      put_content(cbuf_.substr(0, cbuf_.size() - hold), out);
      cbuf_.erase(0, cbuf_.size() - hold);
    }
  }

  void finish(ParsedDelta& out) override {
    if (st_ == St::kElement) end_element(out);  // the output ended inside a call
    put_content(cbuf_, out);
    cbuf_.clear();
    if (o_.suppress_calls) {
      out.content += held_;  // whitespace that no word followed
    } else if (o_.whole_response) {
      out.content += called_ ? before_ : before_ + after_;
    } else if (!called_) {
      out.content += held_ + after_;  // no call followed
    }
    held_.clear();
    before_.clear();
    after_.clear();
  }

 private:
  enum class St { kContent, kArrayStart, kBetween, kElement };

  void step(char c, ParsedDelta& out) {
    switch (st_) {
      case St::kContent:
        cbuf_ += c;
        for (std::string_view m : kMarkers)
          if (cbuf_.size() >= m.size() &&
              cbuf_.compare(cbuf_.size() - m.size(), m.size(), m) == 0) {
            cbuf_.resize(cbuf_.size() - m.size());
            put_content(cbuf_, out);
            cbuf_.clear();
            st_ = St::kArrayStart;
            return;
          }
        return;
      case St::kArrayStart:
        if (is_json_ws(c)) return;
        if (c == '[') {
          st_ = St::kBetween;
          return;
        }
        break;  // not an array: this character and the rest are text
      case St::kBetween:
        if (is_json_ws(c) || c == ',') return;
        if (c == '{') {
          st_ = St::kElement;
          elem_seen_ = true;
          elem_ = "{";
          depth_ = 1;
          strings_ = {};
          return;
        }
        if (c == ']') {
          st_ = St::kContent;
          return;
        }
        break;
      case St::kElement:
        elem_ += c;
        if (!strings_.structural(c)) return;
        if (c == '{' || c == '[') {
          ++depth_;
        } else if (c == '}' || c == ']') {
          if (depth_ > 0) --depth_;
          if (depth_ == 0 && c == '}') {
            end_element(out);
            st_ = St::kBetween;
          }
        }
        return;
    }
    st_ = St::kContent;
    cbuf_ += c;
  }

  // Text outside the arrays. As vLLM's whole response: when a call is made, only the text
  // before the first element (even one then dropped); else all of it.
  void put_content(std::string_view t, ParsedDelta& out) {
    if (t.empty()) return;
    if (o_.suppress_calls) {
      suppressed_text(t, held_, started_, out.content);
    } else if (called_) {
      // dropped
    } else if (elem_seen_) {
      after_ += t;  // kept only if no call comes
    } else if (o_.whole_response) {
      before_ += t;
    } else {
      // A call may follow: trailing whitespace waits (dropped with the call, else sent).
      release_before_trailing_space(held_, t, out.content);
    }
  }

  void end_element(ParsedDelta& out) {
    std::string name = py_strip(regex_name(elem_));
    std::string args;
    if (name.empty()) {
      if (py_strip(elem_).empty()) return;
      auto [n, a] = name_and_args(elem_);
      name = std::move(n);
      args = std::move(a);
    } else {
      args = granite_element_arguments(elem_);
    }
    elem_.clear();
    if (name.empty()) return;
    args = fix_arg_types(args, o_.tools, name);
    if (o_.suppress_calls) return;
    called_ = true;
    held_.clear();
    after_.clear();
    emit_whole_call(ToolParserKind::kGranite, std::move(name), std::move(args), out);
  }

  ToolParserOptions o_;
  St st_ = St::kContent;
  std::string cbuf_, elem_;
  std::string held_;            // streams: trailing whitespace before a possible call
  std::string before_, after_;  // text before the first element (whole responses) / after it
  int depth_ = 0;
  JsonStrings strings_;  // within the element
  bool elem_seen_ = false, called_ = false, started_ = false;
};

}  // namespace

std::string granite_element_arguments(const std::string& element) {
  bool not_object = false;
  const std::optional<std::string_view> span = member_object(element, "arguments", not_object);
  if (not_object) return name_and_args(element).second;
  return span ? std::string(*span) : "{}";
}

std::string fix_arg_types(const std::string& args, const ojson& tools, const std::string& name) {
  if (tools.empty() || name.empty()) return args;
  const ojson props = tool_properties(tools, name);
  if (props.empty()) return args;
  bool changed = false;
  const std::string text = coerce_members(args, props, changed);
  return changed ? py_dumps(text) : args;
}

std::unique_ptr<ToolCallParser> make_granite_tool_parser(const ToolParserOptions& o) {
  return std::make_unique<GraniteParser>(o);
}

}  // namespace vllm::api
