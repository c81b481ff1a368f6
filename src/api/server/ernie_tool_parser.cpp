// ERNIE 4.5's tool-call parser (ernie_tool_parser.h).
#include "api/server/ernie_tool_parser.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

constexpr std::string_view kOpen = "<tool_call>";
constexpr std::string_view kClose = "</tool_call>";

struct Call {
  std::string name, arguments;
};

// vLLM's tool_call_regex.findall over `text`, each body read as its extract_tool_calls reads it.
// False when one is not a call vLLM can read (it then answers the output as content).
bool read_calls(const std::string& text, std::vector<Call>& calls) {
  // The closing braces a match may end at: "}" then \s* then </tool_call>.
  std::vector<size_t> ends;
  for (size_t k = text.find('}'); k != std::string::npos; k = text.find('}', k + 1)) {
    const size_t m = k + 1 + space_run(text, k + 1, /*regex_s=*/true);
    if (text.compare(m, kClose.size(), kClose) == 0) ends.push_back(k);
  }
  for (size_t pos = 0;;) {
    const size_t i = text.find(kOpen, pos);
    if (i == std::string::npos) break;
    const size_t j = i + kOpen.size() + space_run(text, i + kOpen.size(), true);
    const auto e = j < text.size() && text[j] == '{' ? std::upper_bound(ends.begin(), ends.end(), j)
                                                     : ends.end();
    if (e == ends.end()) {  // no match here: the regex tries the next position
      pos = i + 1;
      continue;
    }
    const std::string body = text.substr(j, *e - j + 1);
    pos = *e + 1 + space_run(text, *e + 1, true) + kClose.size();
    nlohmann::ordered_json d;
    try {
      d = nlohmann::ordered_json::parse(body);
    } catch (const nlohmann::json::exception&) {
      return false;
    }
    Call c;
    if (d.contains("name")) {
      if (!d["name"].is_string()) return false;  // FunctionCall(name=...) rejects it
      c.name = d["name"].get<std::string>();
    }
    const std::string args = d.contains("arguments") ? d["arguments"].dump() : "{}";
    if (!py_json_dumps(args, c.arguments)) return false;
    calls.push_back(std::move(c));
  }
  return true;
}

class Ernie45Parser : public ToolCallParser {
 public:
  void feed(std::string_view text, ParsedDelta& out) override {
    if (seen_) {
      rest_ += text;
      return;
    }
    held_ += text;
    const size_t at = held_.find(kOpen);
    if (at != std::string::npos) {
      seen_ = true;
      release(held_.substr(0, at), out);
      rest_ = held_.substr(at);
      held_.clear();
      return;
    }
    // Trailing line feeds and a possible start of <tool_call> wait.
    size_t keep = partial_tag_suffix(held_, kOpen);
    size_t end = held_.size() - keep;
    while (end > 0 && held_[end - 1] == '\n') --end;
    out.content += held_.substr(0, end);
    held_.erase(0, end);
  }

  void finish(ParsedDelta& out) override {
    if (!seen_) {
      out.content += held_;
      held_.clear();
      return;
    }
    std::vector<Call> calls;
    if (!read_calls(rest_, calls)) {
      // vLLM answers the whole output as content.
      failed_ = true;
      out.content += newlines_ + rest_;
    } else {
      called_ = true;
      for (Call& c : calls)
        emit_whole_call(ToolParserKind::kErnie45, std::move(c.name), std::move(c.arguments), out);
    }
    newlines_.clear();
    rest_.clear();
  }

  bool called() const { return called_; }

 private:
  // The text before <tool_call>: all but its trailing line feeds, which go out only if the
  // calls cannot be read.
  void release(const std::string& before, ParsedDelta& out) {
    size_t end = before.size();
    while (end > 0 && before[end - 1] == '\n') --end;
    out.content += before.substr(0, end);
    newlines_ = before.substr(end);
  }

  bool seen_ = false, called_ = false;
  std::string held_, newlines_, rest_;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_ernie45_tool_parser() {
  return std::make_unique<Ernie45Parser>();
}

bool ernie45_called(const ToolCallParser& p) {
  const auto* e = dynamic_cast<const Ernie45Parser*>(&p);
  return e && e->called();
}

}  // namespace vllm::api
