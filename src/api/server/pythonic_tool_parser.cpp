// Pythonic tool calls: vLLM's regex check and the stream that holds a possible call list until
// the end (see the header); the Python it reads is py_literal.h's.
#include "api/server/pythonic_tool_parser.h"

#include <string_view>
#include <utility>

#include "api/server/marked_calls_parser.h"
#include "api/server/py_literal.h"
#include "api/server/py_str.h"

namespace vllm::api {
namespace {

constexpr size_t npos = std::string_view::npos;

// [a-zA-Z]+\w* at s[i]: where it ends, or npos.
size_t regex_ident_end(std::string_view s, size_t i) {
  if (i >= s.size() || !py_ascii_letter(s[i])) return npos;
  while (++i < s.size() && py_word_byte(s[i])) {
  }
  return i;
}

// Whether \)\s*\] occurs at or after i.
bool close_then_bracket(std::string_view s, size_t i) {
  for (size_t k = s.find(')', i); k != npos; k = s.find(')', k + 1)) {
    const size_t j = k + 1 + space_run(s, k + 1, /*regex_s=*/true);
    if (j < s.size() && s[j] == ']') return true;
  }
  return false;
}

// vLLM's TOOL_CALL_REGEX.match (DOTALL):
//   \[ (P\((P=.*,\s*)*(P=.*\s)?\),\s*)* (P\((P=.*,\s*)*(P=.*\s*)?\)\s*)+ \]
// with P = [a-zA-Z]+\w*. A call with a keyword argument lets .* run to any later )\s*], so it
// matches as soon as one exists; calls without arguments chain by "," (the first part) and
// then by whitespace (the second).
bool regex_matches(std::string_view s) {
  if (s.empty() || s[0] != '[') return false;
  bool second_part = false;
  for (size_t i = 1;;) {
    const size_t e = regex_ident_end(s, i);
    if (e == npos || e >= s.size() || s[e] != '(') return false;
    i = e + 1;
    const size_t k = regex_ident_end(s, i);
    if (k != npos && k < s.size() && s[k] == '=') return close_then_bracket(s, k + 1);
    if (i >= s.size() || s[i] != ')') return false;
    ++i;
    if (!second_part && i < s.size() && s[i] == ',') {
      i += 1 + space_run(s, i + 1, /*regex_s=*/true);
      continue;
    }
    i += space_run(s, i, /*regex_s=*/true);
    if (i < s.size() && s[i] == ']') return true;
    second_part = true;
  }
}

// Whether a stream that begins with `s` may still be a call list: "[" name "(" then ")" or a
// keyword and "=" (kYes), not yet known (kMaybe), or not (kNo).
enum class Prefix { kNo, kMaybe, kYes };
Prefix call_prefix(std::string_view s) {
  if (s.empty()) return Prefix::kMaybe;
  if (s[0] != '[') return Prefix::kNo;
  size_t i = 1;
  if (i == s.size()) return Prefix::kMaybe;
  if (!py_ascii_letter(s[i])) return Prefix::kNo;
  while (i < s.size() && py_word_byte(s[i])) ++i;
  if (i == s.size()) return Prefix::kMaybe;
  if (s[i++] != '(') return Prefix::kNo;
  if (i == s.size()) return Prefix::kMaybe;
  if (s[i] == ')') return Prefix::kYes;
  if (!py_ascii_letter(s[i])) return Prefix::kNo;
  while (i < s.size() && py_word_byte(s[i])) ++i;
  if (i == s.size()) return Prefix::kMaybe;
  return s[i] == '=' ? Prefix::kYes : Prefix::kNo;
}

class PythonicParser : public ToolCallParser {
 public:
  void feed(std::string_view text, ParsedDelta& out) override {
    if (mode_ == Mode::kContent) {
      out.content += text;
      return;
    }
    buf_ += text;
    if (mode_ == Mode::kHold) return;
    switch (call_prefix(buf_)) {
      case Prefix::kNo:
        mode_ = Mode::kContent;
        out.content += buf_;
        buf_.clear();
        return;
      case Prefix::kYes:
        mode_ = Mode::kHold;
        return;
      case Prefix::kMaybe:
        return;
    }
  }

  void finish(ParsedDelta& out) override {
    if (mode_ == Mode::kContent) return;
    auto calls = parse_pythonic_calls(buf_);
    if (!calls) {
      out.content += buf_;
      buf_.clear();
      return;
    }
    for (auto& [name, args] : *calls)
      emit_whole_call(ToolParserKind::kPythonic, std::move(name), std::move(args), out);
    buf_.clear();
  }

 private:
  enum class Mode { kUndecided, kHold, kContent };
  Mode mode_ = Mode::kUndecided;
  std::string buf_;
};

}  // namespace

std::optional<std::vector<std::pair<std::string, std::string>>> parse_pythonic_calls(
    std::string_view text) {
  if (!regex_matches(text)) return std::nullopt;
  std::vector<std::pair<std::string, std::string>> calls;
  if (!read_python_call_list(text, calls)) return std::nullopt;
  return calls;
}

std::unique_ptr<ToolCallParser> make_pythonic_tool_parser() {
  return std::make_unique<PythonicParser>();
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_olmo3_calls(
    std::string_view text) {
  constexpr std::string_view kOpen = "<function_calls>", kClose = "</function_calls>";
  std::string_view body = text;
  std::string stripped;
  if (const size_t a = text.find(kOpen); a != npos) {
    const size_t b = text.find(kClose, a + kOpen.size());
    if (b != npos) {
      stripped = py_strip(text.substr(a + kOpen.size(), b - a - kOpen.size()));
      body = stripped;
    }
  }
  std::string list = "[";
  for (std::string_view line : py_splitlines(body)) {
    const std::string s = py_strip(line);
    if (s.empty()) continue;
    if (list.size() > 1) list += ", ";
    list += s;
  }
  list += "]";
  return parse_pythonic_calls(list);
}

std::unique_ptr<ToolCallParser> make_olmo3_tool_parser(bool whole_response) {
  MarkedCallsFormat f;
  f.kind = ToolParserKind::kOlmo3;
  f.marker = "<function_calls>";
  // A bare first line "name(" then ")" or "keyword=" is a call list's start, as the whole
  // response reads the lines.
  f.start_may_be_calls = [](std::string_view s) -> std::optional<bool> {
    switch (call_prefix("[" + std::string(s))) {
      case Prefix::kYes:
        return true;
      case Prefix::kNo:
        return false;
      case Prefix::kMaybe:
        break;
    }
    return std::nullopt;
  };
  f.read = parse_olmo3_calls;
  return make_marked_calls_parser(std::move(f), whole_response);
}

}  // namespace vllm::api
