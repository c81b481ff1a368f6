// MiniMax-M2 XML tool calls, whole and streaming (see the header).
#include "api/server/minimax_tool_parser.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include "api/server/minimax_params.h"
#include "api/server/py_json.h"
#include "api/server/py_str.h"
#include "api/server/schema_coerce.h"

namespace vllm::api {
namespace {

using ojson = nlohmann::ordered_json;
constexpr size_t npos = std::string_view::npos;

// ---- The lexer: vLLM's IncrementalLexer over minimax_m2_config()'s terminals. ----

enum class Term : uint8_t {
  kThinkStart,
  kThinkEnd,
  kToolStart,
  kToolEnd,
  kParamStart,
  kParamEnd,
  kInvokeDq,
  kInvokeSq,
  kInvokeBare,
  kInvokeEnd,
  kNameEndDq,
  kNameEndSq,
  kNameEndBare,
};

struct Literal {
  std::string_view text;
  Term term;
};

constexpr Literal kLiterals[] = {
    {"<think>", Term::kThinkStart},
    {"</think>", Term::kThinkEnd},
    {"<minimax:tool_call>", Term::kToolStart},
    {"</minimax:tool_call>", Term::kToolEnd},
    {"<parameter name=", Term::kParamStart},
    {"</parameter>", Term::kParamEnd},
    {"<invoke name=\"", Term::kInvokeDq},
    {"<invoke name='", Term::kInvokeSq},
    {"<invoke name=", Term::kInvokeBare},
    {"</invoke>", Term::kInvokeEnd},
    {"\">", Term::kNameEndDq},
    {"'>", Term::kNameEndSq},
    {">", Term::kNameEndBare},
};
constexpr std::string_view kFirstChars = "<\"'>";

bool is_invoke(Term t) {
  return t == Term::kInvokeDq || t == Term::kInvokeSq || t == Term::kInvokeBare;
}
bool is_name_end(Term t) {
  return t == Term::kNameEndDq || t == Term::kNameEndSq || t == Term::kNameEndBare;
}

// `s` is a proper prefix of a terminal (the lexer's prefix_set).
bool proper_prefix_of_literal(std::string_view s) {
  for (const Literal& l : kLiterals)
    if (l.text.size() > s.size() && l.text.substr(0, s.size()) == s) return true;
  return false;
}

// ---- The parser. ----

class MinimaxM2Parser : public ToolCallParser {
 public:
  explicit MinimaxM2Parser(const ToolParserOptions& o)
      : tools_(o.tools.is_array() ? o.tools : ojson::array()),
        markup_(o.reasoning_markup),
        whole_(o.whole_response),
        suppress_(o.suppress_calls) {}

  void feed(std::string_view text, ParsedDelta& out) override {
    out_ = &out;
    pending_ += text;
    lex(/*final=*/false);
    if (st_ == St::kArgs && !whole_) stream_args();
    out_ = nullptr;
  }

  void finish(ParsedDelta& out) override {
    out_ = &out;
    lex(/*final=*/true);
    // The engine ends the call the output ends inside.
    if (st_ == St::kName || st_ == St::kArgs) end_call();
    st_ = St::kContent;
    // The rest of the content, as vLLM's whole response has it: the text after the first call
    // only when no call name was taken as written; whitespace-only content dropped once a call
    // was seen; stripped when a call is returned.
    std::string rest = held_ + (raw_kept_ ? "" : post_);
    if (suppress_)
      ;  // every text chunk is content as written
    else if (called_)
      rest = content_started_ ? py_rstrip(rest) : py_strip(rest);
    else if (seen_call_ && !content_started_ && py_all_space(rest))
      rest.clear();
    out.content += rest;
    held_.clear();
    post_.clear();
    out_ = nullptr;
  }

 private:
  enum class St { kContent, kPreamble, kName, kArgs, kBetween };

  // vLLM's IncrementalLexer._drain over pending_: terminals and text, in order. Text that may
  // still begin a terminal waits unless `final`.
  void lex(bool final) {
    const std::string_view b = pending_;
    size_t p = 0;
    size_t next_first = b.find_first_of(kFirstChars);
    while (p < b.size()) {
      if (next_first != npos && next_first < p) next_first = b.find_first_of(kFirstChars, p);
      if (next_first == npos) {
        on_text(b.substr(p));
        p = b.size();
        break;
      }
      const std::string_view buf = b.substr(p);
      const Literal* best = nullptr;
      for (const Literal& l : kLiterals)
        if (buf.substr(0, l.text.size()) == l.text && (!best || l.text.size() > best->text.size()))
          best = &l;
      // All that is left may still become a terminal (or a longer one than it already is):
      // wait for more.
      if (!final && buf.size() < 20 && proper_prefix_of_literal(buf)) break;
      if (best) {
        on_term(*best);
        p += best->text.size();
        continue;
      }
      // Text up to the next place a terminal may start.
      size_t end = buf.size();
      for (size_t i = buf.find_first_of(kFirstChars, 1); i != npos;
           i = buf.find_first_of(kFirstChars, i + 1)) {
        bool may_start = false;
        for (const Literal& l : kLiterals) {
          const size_t n = std::min(buf.size() - i, l.text.size());
          if (buf.substr(i, n) == l.text.substr(0, n)) {
            may_start = true;
            break;
          }
        }
        if (may_start) {
          end = i;
          break;
        }
      }
      on_text(buf.substr(0, end));
      p += end;
    }
    if (final) {
      on_text(b.substr(p));
      p = b.size();
    }
    pending_.erase(0, p);
  }

  // minimax_m2_config()'s transitions; a terminal without one is text of the state.
  void on_term(const Literal& l) {
    const Term t = l.term;
    switch (st_) {
      case St::kContent:
        if (t == Term::kThinkEnd && markup_) return;  // reasoning markup: dropped
        if (t == Term::kToolStart) {
          st_ = St::kPreamble;
          return;
        }
        if (t == Term::kToolEnd) return;  // a stray closer is dropped
        if (is_invoke(t)) return start_call();
        break;
      case St::kPreamble:
      case St::kBetween:
        if (t == Term::kToolEnd) {
          st_ = St::kContent;
          return;
        }
        if (is_invoke(t)) return start_call();
        break;
      case St::kName:
        if (is_name_end(t)) {
          st_ = St::kArgs;
          decide_name();
          return;
        }
        break;
      case St::kArgs:
        if (t == Term::kInvokeEnd) {
          end_call();
          st_ = St::kBetween;
          return;
        }
        break;  // <parameter name= and </parameter> are argument text too
    }
    on_text(l.text);
  }

  void on_text(std::string_view t) {
    if (t.empty()) return;
    switch (st_) {
      case St::kContent:
        return content_text(t);
      case St::kName:
        name_raw_ += t;
        return;
      case St::kArgs:
        args_raw_ += t;
        return;
      case St::kPreamble:
      case St::kBetween:
        return;  // between the block's tags: dropped
    }
  }

  // Text in the content state. Before any call it is sent as it comes, but whitespace is held
  // while it may end the content (a returned call strips it) and while it is all there is
  // (vLLM's stream sends leading whitespace with the first word). After a call started it waits:
  // a call name taken as written drops it, otherwise it is content at the end.
  void content_text(std::string_view t) {
    if (suppress_) return suppressed_text(t, held_, content_started_, out_->content);
    if (seen_call_) {
      if (!raw_kept_) post_ += t;
      return;
    }
    if (release_before_trailing_space(held_, t, out_->content)) content_started_ = true;
  }

  void start_call() {
    seen_call_ = true;
    st_ = St::kName;
    name_raw_.clear();
    args_raw_.clear();
    streamed_.clear();
    kept_ = name_pending_ = false;
    fast_ = false;
  }

  // The name is complete: keep the call or drop it. An empty name waits for a "name" in the
  // body (vLLM retries it with every piece of the body and at the end).
  void decide_name() {
    name_pending_ = name_raw_.empty();
    if (!name_pending_) decide(name_raw_);
  }

  void try_name_from_body() {
    if (!name_pending_) return;
    const std::string n = minimax_name_in_body(args_raw_);
    if (n.empty()) return;
    name_pending_ = false;  // the first match stays the first: decided once
    decide(n);
  }

  // vLLM checks the name as written when it streams the call (the text after the first call is
  // dropped from the whole response's content only if a call passed that check) and stripped
  // when it builds the whole response's calls. The call is returned on the second.
  void decide(const std::string& written) {
    name_ = py_strip(written);
    if (suppress_) return;
    if (tool_call_allowed(tools_, written)) {
      raw_kept_ = true;
      post_.clear();
    }
    if (tool_call_allowed(tools_, name_)) keep();
  }

  void keep() {
    kept_ = true;
    called_ = true;
    properties_ = tool_properties(tools_, name_);
    ToolCallDelta h;
    h.index = num_calls_++;
    h.header = true;
    h.id = make_tool_call_id(ToolParserKind::kMinimaxM2);
    h.name = name_;
    out_->calls.push_back(std::move(h));
  }

  // vLLM's _fix_arg_types: a value is typed only by a property schema that is an object.
  std::string value_json(const std::string& key, const std::string& value) const {
    return property_value_json(properties_, key, value);
  }

  // vLLM's _streamable_string_keys / _safe_arg_prefix: the last value's text may be sent before
  // it ends when the function has no properties, or when the key (as its JSON text reads) is a
  // property typed "string" and nothing else.
  bool streams(const std::string& key) const {
    if (properties_.empty()) return true;
    const std::string q = py_json_quote(key);
    auto it = properties_.find(q.substr(1, q.size() - 2));
    if (it == properties_.end()) return false;
    const std::vector<std::string> types = schema_types(*it);
    return types.size() == 1 && types[0] == "string";
  }

  // The parameters as a dict (first place, last value).
  static std::vector<std::pair<std::string, std::string>> as_dict(const MinimaxParams& p) {
    std::vector<std::pair<std::string, std::string>> d;
    auto put = [&](const std::string& k, const std::string& v) {
      for (auto& e : d)
        if (e.first == k) {
          e.second = v;
          return;
        }
      d.emplace_back(k, v);
    };
    for (const auto& [k, v] : p.closed) put(k, v);
    if (p.open) put(p.open_name, p.open_value);
    return d;
  }

  std::string entry_json(const std::pair<std::string, std::string>& e) const {
    return py_json_quote(e.first) + ": " + value_json(e.first, e.second);
  }

  void emit_args(const std::string& text) {
    // Not an extension of what was sent: vLLM sends nothing then.
    stream_args_extension(streamed_, text, num_calls_ - 1, *out_);
  }

  // Streaming: the part of the open call's arguments no later text can change.
  void stream_args() {
    try_name_from_body();
    if (!kept_) return;
    if (fast_) {
      // Only the open (last) value grows while no value end appears: its new text, less a tail
      // that may still become a closing tag, is new (linear in the value's length).
      std::string t = window_ + args_raw_.substr(fast_seen_);
      fast_seen_ = args_raw_.size();
      if (!minimax_has_value_end(t, 0, t.size())) {
        const size_t w = minimax_value_end_window(t);
        window_ = t.substr(t.size() - w);
        t.resize(t.size() - w);
        if (fast_streams_ && !t.empty()) {
          const std::string q = py_json_quote(t);
          ToolCallDelta f;
          f.index = num_calls_ - 1;
          f.arguments = q.substr(1, q.size() - 2);
          streamed_ += f.arguments;
          out_->calls.push_back(std::move(f));
        }
        return;
      }
      fast_ = false;
    }
    const MinimaxParams p = parse_minimax_params(args_raw_, /*partial=*/true);
    const auto d = as_dict(p);
    if (d.empty()) return;
    std::string s = "{";
    for (size_t i = 0; i + 1 < d.size(); ++i) s += entry_json(d[i]) + ", ";
    const auto& last = d.back();
    s += py_json_quote(last.first) + ": ";
    const bool open_last = p.open && last.first == p.open_name;
    const bool str = streams(last.first);
    // The open value's tail that may still become its end is held back.
    const size_t w = open_last ? minimax_value_end_window(last.second) : 0;
    if (str) {
      // A closed value goes whole but without its closing quote: a repeated key may still
      // replace it.
      const std::string q =
          py_json_quote(std::string_view(last.second).substr(0, last.second.size() - w));
      s += q.substr(0, q.size() - 1);
    }
    if (s.compare(0, streamed_.size(), streamed_) != 0) return;  // vLLM sends nothing then
    emit_args(s);
    if (open_last && p.open_extends) {
      fast_ = true;
      fast_streams_ = str;
      fast_seen_ = args_raw_.size();
      window_ = last.second.substr(last.second.size() - w);
    }
  }

  void end_call() {
    if (st_ == St::kName) decide_name();
    try_name_from_body();
    if (kept_) {
      const auto d = as_dict(parse_minimax_params(args_raw_, /*partial=*/false));
      std::string s = "{";
      for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + entry_json(d[i]);
      emit_args(s + "}");
    }
    kept_ = name_pending_ = fast_ = false;
    name_raw_.clear();
    args_raw_.clear();
  }

  ojson tools_;
  bool markup_, whole_, suppress_;
  ParsedDelta* out_ = nullptr;
  std::string pending_;  // text the lexer has not cut yet
  St st_ = St::kContent;
  // The call being read.
  std::string name_raw_, args_raw_, name_, streamed_;
  ojson properties_ = ojson::object();
  bool kept_ = false, name_pending_ = false;
  // The open value is being extended without re-reading the body (see stream_args): whether
  // its text is sent, how much of the body was read, the tail held back.
  bool fast_ = false, fast_streams_ = false;
  size_t fast_seen_ = 0;
  std::string window_;
  // Content.
  // A call started / a call name passed as written / a call returned / content was sent.
  bool seen_call_ = false, raw_kept_ = false, called_ = false, content_started_ = false;
  std::string held_, post_;
};

}  // namespace

std::unique_ptr<ToolCallParser> make_minimax_m2_tool_parser(const ToolParserOptions& o) {
  return std::make_unique<MinimaxM2Parser>(o);
}

}  // namespace vllm::api
