// What the tests replaying vLLM's own parser outputs share (tests/golden/tool_parsers/*.json,
// written by the tools/make_*_parser_goldens.py scripts from vLLM 0.33's parsers): a golden file,
// its stand-in tokenizer (the golden's tags are single tokens, every other character, a whole
// UTF-8 sequence, is a token of its own), the chat serving's parser composition run on a whole
// output and as a stream, and the comparisons against vLLM's whole response and stream.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "api/server/py_str.h"
#include "api/server/reasoning_parser.h"
#include "api/server/serving.h"
#include "api/server/tool_parsers.h"

namespace vllm::api::goldens {

using ojson = nlohmann::ordered_json;
using Calls = std::vector<std::pair<std::string, std::string>>;  // name, arguments

inline ojson load(const std::string& name) {
  std::ifstream f(std::string(VLLM_SOURCE_DIR) + "/tests/golden/tool_parsers/" + name);
  return ojson::parse(f);
}

// A golden file, read once per test binary.
inline const ojson& cached(const std::string& name) {
  static std::map<std::string, ojson> files;
  auto it = files.find(name);
  if (it == files.end()) it = files.emplace(name, load(name)).first;
  return it->second;
}

// The golden's tokens of `t`; `tags` maps each tag to its id.
inline std::vector<std::string> tokens(const std::string& t, const ojson& tags) {
  std::vector<std::string> out;
  for (size_t i = 0; i < t.size();) {
    size_t n = 0;
    for (const auto& [tag, id] : tags.items())
      if (t.compare(i, tag.size(), tag) == 0) n = tag.size();
    if (n == 0) utf8_at(t, i, n);
    out.push_back(t.substr(i, n));
    i += n;
  }
  return out;
}

inline std::optional<int32_t> id_in(const ojson& tags, std::string_view s) {
  const auto it = tags.find(std::string(s));
  if (it == tags.end()) return std::nullopt;
  return it->get<int32_t>();
}

// The token ids: a tag's own, 1000 + the code point for every other token.
inline std::vector<int32_t> ids(const std::string& text, const ojson& tags) {
  std::vector<int32_t> out;
  for (const std::string& t : tokens(text, tags)) {
    size_t n = 0;
    out.push_back(id_in(tags, t).value_or(1000 + static_cast<int32_t>(utf8_at(t, 0, n))));
  }
  return out;
}

// Cuts of `t`: whole, token by token, at every token boundary in two (and in three, every
// fourth second cut, when `triples` and the text is short), and in 20 random runs of tokens.
inline std::vector<std::vector<std::string>> chunkings(const std::string& t, const ojson& tags,
                                                       uint64_t seed, bool triples = false) {
  const std::vector<std::string> tok = tokens(t, tags);
  auto join = [&](size_t a, size_t b) {
    std::string s;
    for (size_t i = a; i < b; ++i) s += tok[i];
    return s;
  };
  std::vector<std::vector<std::string>> out = {{t}, tok};
  for (size_t a = 1; a < tok.size(); ++a) {
    out.push_back({join(0, a), join(a, tok.size())});
    if (triples && tok.size() <= 90)
      for (size_t b = a + 1; b < tok.size(); b += 4)
        out.push_back({join(0, a), join(a, b), join(b, tok.size())});
  }
  std::mt19937_64 rng(seed);
  for (int k = 0; k < 20; ++k) {
    std::vector<std::string> v;
    for (size_t i = 0; i < tok.size();) {
      const size_t n = std::min<size_t>(tok.size() - i, 1 + rng() % 7);
      v.push_back(join(i, i + n));
      i += n;
    }
    out.push_back(v);
  }
  return out;
}

// What Generation sets up for one request.
struct Composed {
  std::optional<ReasoningParserKind> reasoning;  // null when the request does not think
  bool thought = false;                          // the prompt closed the reasoning
  bool prompt_closed = false;                    // ... and a whole output starts in the content
  std::optional<ToolParserKind> tools;
  ToolParserOptions tool_options;
  bool drop_calls = false;  // tool_choice "none" under engine-based parsers (drop_tool_calls)
};

// Generation's set-up from the parsers' names (null for none), the request's
// chat_template_kwargs and the prompt's text.
inline Composed compose(const ojson& reasoning_parser, const ojson& kwargs,
                        const std::string& prompt, const ojson& tool_parser, const ojson& tools,
                        const ojson& vocab) {
  Composed s;
  if (!reasoning_parser.is_null()) {
    const ReasoningParserKind kind = *reasoning_parser_by_name(reasoning_parser.get<std::string>());
    if (reasoning_enabled(kind, kwargs)) s.reasoning = kind;
    const ThinkTags tags = think_tags([&](std::string_view x) { return id_in(vocab, x); }, kind);
    s.thought = prompt_ends_reasoning(ids(prompt, vocab), tags, kind);
    s.prompt_closed = s.thought && !tags.boundaries.empty();
  }
  if (!tool_parser.is_null()) {
    s.tools = tool_parser_by_name(tool_parser.get<std::string>());
    s.tool_options.tools = tools;
    s.tool_options.reasoning_markup = !reasoning_parser.is_null();  // as Generation
  }
  return s;
}

struct Result {
  std::optional<std::string> reasoning, content;
  Calls calls;
};

// A whole response (parse_chat_output).
inline Result whole(const Composed& s, const std::string& text) {
  ParsedChatOutput p =
      parse_chat_output(text, s.reasoning, s.prompt_closed, s.tools, s.tool_options);
  Result r{p.reasoning, p.content, {}};
  if (s.drop_calls) return r;  // as Generation::chat_message
  for (const ToolCall& t : p.tools.calls) {
    EXPECT_EQ(t.id.rfind("chatcmpl-tool-", 0), 0u) << t.id;
    r.calls.emplace_back(t.name, t.arguments);
  }
  return r;
}

struct Streamed {
  std::string reasoning, content;
  Calls calls;
  std::vector<std::string> ids;  // each call's id, from its header
};

// The serving's stream composition (Generation::stream_events): the reasoning splitter, then the
// tool parser over its content; the pieces reassembled as a client does.
inline Streamed stream(const Composed& s, const std::vector<std::string>& pieces) {
  std::optional<ReasoningStreamSplitter> sp;
  if (s.reasoning) sp.emplace(*s.reasoning, s.thought);
  std::unique_ptr<ToolCallParser> tp;
  if (s.tools) tp = ToolCallParser::make(*s.tools, s.tool_options);
  Streamed out;
  auto step = [&](const std::string& delta, bool done) {
    std::string text = delta;
    if (sp) {
      auto [r, t] = sp->feed(delta);
      if (done) {
        auto [r2, t2] = sp->finish();
        r += r2;
        t += t2;
      }
      out.reasoning += r;
      text = t;
    }
    if (!tp) {
      out.content += text;
      return;
    }
    ParsedDelta d;
    tp->feed(text, d);
    if (done) tp->finish(d);
    out.content += d.content;
    if (s.drop_calls) {
      // Suppressed calls (tool_choice "none" with tools) are not even reported.
      if (s.tool_options.suppress_calls) {
        EXPECT_TRUE(d.calls.empty());
      }
      return;
    }
    for (const ToolCallDelta& c : d.calls) {
      if (c.header) {
        EXPECT_EQ(c.index, static_cast<int>(out.calls.size()));
        out.calls.emplace_back(c.name, "");
        out.ids.push_back(c.id);
      } else {
        EXPECT_EQ(c.index + 1, static_cast<int>(out.calls.size())) << "a fragment for an old call";
        out.calls.back().second += c.arguments;
      }
    }
  };
  for (const std::string& p : pieces) step(p, false);
  step("", true);
  return out;
}

inline std::optional<std::string> opt_string(const ojson& v) {
  return v.is_null() ? std::nullopt : std::optional<std::string>(v.get<std::string>());
}

inline Calls calls_of(const ojson& v) {
  Calls c;
  for (const auto& t : v) c.emplace_back(t[0].get<std::string>(), t[1].get<std::string>());
  return c;
}

// A case's result against vLLM's whole response (`vw`: reasoning, content, tool_calls).
inline void expect_whole(const Result& w, const ojson& vw, const std::string& at) {
  EXPECT_EQ(w.reasoning, opt_string(vw["reasoning"])) << at;
  EXPECT_EQ(w.content, opt_string(vw["content"])) << at;
  EXPECT_EQ(w.calls, calls_of(vw["tool_calls"])) << at;
}

// A stream's reassembly against vLLM's token-by-token stream (`vs`).
inline void expect_stream(const Streamed& s, const ojson& vs, const std::string& at) {
  EXPECT_EQ(s.reasoning, vs["reasoning"].get<std::string>()) << at;
  EXPECT_EQ(s.content, vs["content"].get<std::string>()) << at;
  EXPECT_EQ(s.calls, calls_of(vs["tool_calls"])) << at;
}

// Whether vLLM's token-by-token stream of a case reassembles to its whole response.
inline bool vllm_stream_is_whole(const ojson& c) {
  const ojson& vw = c["whole"];
  const ojson& vs = c["stream"];
  const auto text_of = [](const ojson& v) { return v.is_null() ? ojson("") : v; };
  return vs["tool_calls"] == vw["tool_calls"] && vs["content"] == text_of(vw["content"]) &&
         vs["reasoning"] == text_of(vw["reasoning"]);
}

// A stream's content against the whole response's when calls were made: whitespace before the
// content's first word goes out with it, while the whole response strips it (vLLM's stream
// sends it too).
inline void expect_content_but_lead(const std::string& got, const std::string& expect, bool calls,
                                    const std::string& at) {
  if (calls && got.size() > expect.size()) {
    const std::string lead = got.substr(0, got.size() - expect.size());
    EXPECT_TRUE(py_all_space(lead)) << at;
    EXPECT_EQ(got.substr(lead.size()), expect) << at;
  } else {
    EXPECT_EQ(got, expect) << at;
  }
}

}  // namespace vllm::api::goldens
