// The held-to-the-end stream of marked_calls_parser.h, and Phi-4-mini's functools[...] calls.
#include "api/server/marked_calls_parser.h"

#include <nlohmann/json.hpp>

#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

constexpr size_t npos = std::string_view::npos;

class MarkedCallsParser : public ToolCallParser {
 public:
  MarkedCallsParser(MarkedCallsFormat f, bool whole) : f_(std::move(f)), whole_(whole) {
    if (!f_.start_may_be_calls) mode_ = Mode::kWatch;
  }

  void feed(std::string_view text, ParsedDelta& out) override {
    all_ += text;
    if (whole_) return;
    buf_ += text;
    if (mode_ == Mode::kHold) return;
    if (mode_ == Mode::kStart) {
      // Leading whitespace waits with the rest: a call list may follow it.
      const std::string_view s = std::string_view(buf_).substr(space_run(buf_, 0));
      if (s.empty()) return;
      if (s.size() >= f_.marker.size() && s.substr(0, f_.marker.size()) == f_.marker) {
        mode_ = Mode::kHold;
        return;
      }
      const bool marker_prefix = s.size() < f_.marker.size() && f_.marker.substr(0, s.size()) == s;
      const std::optional<bool> calls = f_.start_may_be_calls(s);
      if (calls && *calls) {
        mode_ = Mode::kHold;
        return;
      }
      if (!calls || marker_prefix) return;
      mode_ = Mode::kWatch;
    }
    // kWatch: content up to the marker; a possible beginning of it waits.
    const size_t at = buf_.find(f_.marker);
    if (at != npos) {
      out.content.append(buf_, 0, at);
      buf_.erase(0, at);
      mode_ = Mode::kHold;
      return;
    }
    const size_t keep = partial_tag_suffix(buf_, f_.marker);
    out.content.append(buf_, 0, buf_.size() - keep);
    buf_.erase(0, buf_.size() - keep);
  }

  void finish(ParsedDelta& out) override {
    // Calls are read from the whole output (as vLLM reads it) once the held text may hold them.
    const bool may_hold_calls = whole_ || mode_ != Mode::kWatch;
    std::optional<NamedCalls> calls = may_hold_calls ? f_.read(all_) : std::nullopt;
    if (!calls) {
      out.content += whole_ ? all_ : buf_;
    } else {
      if (whole_ && f_.keep_text_before) out.content += all_.substr(0, all_.find(f_.marker));
      for (auto& [name, args] : *calls)
        emit_whole_call(f_.kind, std::move(name), std::move(args), out);
    }
    all_.clear();
    buf_.clear();
  }

 private:
  // kStart: the output so far may still begin a call list (held); kWatch: content, looking for
  // the marker; kHold: everything from the start or the marker on waits for the end.
  enum class Mode { kStart, kWatch, kHold };
  MarkedCallsFormat f_;
  bool whole_;
  Mode mode_ = Mode::kStart;
  std::string all_, buf_;
};

// The end of the JSON value starting at s[i] (a string, an array or object with its nesting,
// or a scalar up to its delimiter), for text already known to be JSON.
size_t json_value_end(std::string_view s, size_t i) {
  int depth = 0;
  JsonStrings strings;
  for (size_t k = i; k < s.size(); ++k) {
    const char c = s[k];
    const bool was_in = strings.in_str;
    if (!strings.structural(c)) {
      if (was_in && !strings.in_str && depth == 0) return k + 1;  // a string value ended
      continue;
    }
    if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      if (depth == 0) return k;  // a scalar's delimiter
      if (--depth == 0) return k + 1;
    } else if (depth == 0 && (c == ',' || is_json_ws(c))) {
      return k;
    }
  }
  return depth == 0 && !strings.in_str ? s.size() : npos;
}

size_t skip_json_ws(std::string_view s, size_t i) {
  while (i < s.size() && is_json_ws(s[i])) ++i;
  return i;
}

}  // namespace

std::unique_ptr<ToolCallParser> make_marked_calls_parser(MarkedCallsFormat format,
                                                         bool whole_response) {
  return std::make_unique<MarkedCallsParser>(std::move(format), whole_response);
}

std::optional<NamedCalls> parse_phi4_mini_json_calls(std::string_view text) {
  constexpr std::string_view kMarker = "functools";
  const size_t at = text.find("functools[");
  if (at == npos) return std::nullopt;
  const size_t open = at + kMarker.size();
  const size_t end = json_value_end(text, open);
  if (end == npos) return std::nullopt;
  const std::string_view arr = text.substr(open, end - open);
  if (!nlohmann::json::accept(arr)) return std::nullopt;
  // json.loads semantics on the accepted array: each element an object with a string "name"
  // and "arguments" (or, without it, "parameters"); a repeated key keeps its last value.
  NamedCalls calls;
  size_t i = skip_json_ws(arr, 1);
  while (arr[i] != ']') {
    if (arr[i] != '{') return std::nullopt;
    std::string_view name, args, params;
    bool has_name = false, has_args = false, has_params = false;
    i = skip_json_ws(arr, i + 1);
    while (arr[i] != '}') {
      const size_t key_end = json_value_end(arr, i);
      const std::string key = nlohmann::json::parse(arr.substr(i, key_end - i)).get<std::string>();
      i = skip_json_ws(arr, skip_json_ws(arr, key_end) + 1);  // past ':'
      const size_t v_end = json_value_end(arr, i);
      const std::string_view v = arr.substr(i, v_end - i);
      if (key == "name") name = v, has_name = true;
      if (key == "arguments") args = v, has_args = true;
      if (key == "parameters") params = v, has_params = true;
      i = skip_json_ws(arr, v_end);
      if (arr[i] == ',') i = skip_json_ws(arr, i + 1);
    }
    if (!has_name || (!has_args && !has_params) || name.empty() || name[0] != '"')
      return std::nullopt;
    std::string dumped;
    if (!py_json_dumps(has_args ? args : params, dumped)) return std::nullopt;
    calls.emplace_back(nlohmann::json::parse(name).get<std::string>(), std::move(dumped));
    i = skip_json_ws(arr, i + 1);
    if (arr[i] == ',') i = skip_json_ws(arr, i + 1);
  }
  return calls;
}

std::optional<NamedCalls> parse_internlm_calls(std::string_view text) {
  constexpr std::string_view kMarker = "<|action_start|><|plugin|>", kEnd = "<|action_end|>";
  const size_t at = text.find(kMarker);
  if (at == npos || text.find(kMarker, at + 1) != npos) return std::nullopt;
  std::string_view action = text.substr(at + kMarker.size());
  action = action.substr(0, action.find(kEnd));
  const size_t brace = action.find('{');
  if (brace == npos) return std::nullopt;
  const nlohmann::ordered_json j =
      nlohmann::ordered_json::parse(action.substr(brace), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  const auto name = j.find("name");
  if (name == j.end() || !name->is_string()) return std::nullopt;
  std::string args = "{}";
  for (const char* key : {"parameters", "arguments"})  // vLLM's order
    if (auto it = j.find(key); it != j.end()) {
      args.clear();
      if (!py_json_dumps(it->dump(), args)) return std::nullopt;
      break;
    }
  return NamedCalls{{name->get<std::string>(), std::move(args)}};
}

std::unique_ptr<ToolCallParser> make_internlm_tool_parser(bool whole_response) {
  MarkedCallsFormat f{ToolParserKind::kInternlm, "<|action_start|><|plugin|>", nullptr,
                      parse_internlm_calls, /*keep_text_before=*/true};
  return make_marked_calls_parser(std::move(f), whole_response);
}

std::unique_ptr<ToolCallParser> make_phi4_mini_json_tool_parser(bool whole_response) {
  MarkedCallsFormat f{ToolParserKind::kPhi4MiniJson, "functools[", nullptr,
                      parse_phi4_mini_json_calls};
  return make_marked_calls_parser(std::move(f), whole_response);
}

}  // namespace vllm::api
