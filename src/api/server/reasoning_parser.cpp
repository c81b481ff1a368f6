// <think> splitting (qwen3, deepseek_r1 / v3, glm45, minimax_m2), whole and streaming.
#include "api/server/reasoning_parser.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "api/server/py_str.h"
#include "api/server/tag_scan.h"

namespace vllm::api {
namespace {

constexpr std::string_view kStart = "<think>";
constexpr std::string_view kEnd = "</think>";
constexpr std::string_view kToolCall = "<tool_call>";  // glm45: ends the reasoning, stays
constexpr std::string_view kMinimaxCall = "<minimax:tool_call>";  // minimax_m2: the same
constexpr std::string_view kMinimaxCallEnd = "</minimax:tool_call>";
constexpr std::string_view kMinimaxInvoke = "<invoke name=";
constexpr std::string_view kGlmTags[] = {kStart, kEnd, kToolCall};
// The engine parsers' start, end and implicit end: Seed-OSS's, everyone else's.
constexpr std::string_view kSeedTags[] = {"<seed:think>", "</seed:think>", "<seed:tool_call>"};
using EngineTags = std::string_view[3];
const EngineTags& engine_tags(ReasoningParserKind k) {
  return k == ReasoningParserKind::kSeedOss ? kSeedTags : kGlmTags;
}
// Granite's phrases (vLLM's valid_think_starts / valid_response_starts).
constexpr std::string_view kGraniteThink[] = {"Here's my thought process:",
                                              "Here is my thought process:"};
constexpr std::string_view kGraniteResponse[] = {"Here's my response:", "Here is my response:"};
constexpr std::string_view kMinimaxWholeTags[] = {kStart, kEnd, kMinimaxCall, kMinimaxCallEnd,
                                                  kMinimaxInvoke};
// ernie45: the answer's wrapper in the content.
constexpr std::string_view kResponse = "<response>";
constexpr std::string_view kResponseEnd = "</response>";
// kimi_k2: the tool section's start ends the reasoning; the other markers are text in it.
constexpr std::string_view kKimiSection = "<|tool_calls_section_begin|>";
constexpr std::string_view kKimiTags[] = {kStart, kEnd, kKimiSection};

// The earliest of `tags` in `s` from `pos` (npos when none) and which one.
template <size_t N>
size_t find_tag(const std::string& s, size_t pos, const std::string_view (&tags)[N],
                std::string_view& tag) {
  size_t at = std::string::npos;
  for (std::string_view t : tags) {
    const size_t f = s.find(t, pos);
    if (f < at) {
      at = f;
      tag = t;
    }
  }
  return at;
}

}  // namespace

std::optional<ReasoningParserKind> reasoning_parser_by_name(const std::string& name) {
  if (name == "qwen3") return ReasoningParserKind::kQwen3;
  if (name == "seed_oss") return ReasoningParserKind::kSeedOss;
  if (name == "deepseek_r1") return ReasoningParserKind::kDeepseekR1;
  if (name == "deepseek_v3") return ReasoningParserKind::kDeepseekV3;
  if (name == "glm45" || name == "glm47") return ReasoningParserKind::kGlm45;
  if (name == "minimax_m2") return ReasoningParserKind::kMinimaxM2;
  if (name == "minimax_m2_append_think") return ReasoningParserKind::kMinimaxM2AppendThink;
  if (name == "olmo3") return ReasoningParserKind::kOlmo3;
  if (name == "granite") return ReasoningParserKind::kGranite;
  if (name == "kimi_k2") return ReasoningParserKind::kKimiK2;
  if (name == "ernie45") return ReasoningParserKind::kErnie45;
  return std::nullopt;
}

const char* reasoning_parser_names() {
  return "qwen3, seed_oss, deepseek_r1, deepseek_v3, glm45, glm47, minimax_m2, "
         "minimax_m2_append_think, olmo3, granite, kimi_k2, ernie45, openai_gptoss (gpt-oss)";
}

namespace {

// Python's truth value of a JSON value.
bool truthy(const nlohmann::ordered_json& v) {
  if (v.is_null()) return false;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string()) return !v.get_ref<const std::string&>().empty();
  if (v.is_array() || v.is_object()) return !v.empty();
  return true;
}

}  // namespace

bool kwarg_truthy(const nlohmann::ordered_json& kwargs, const char* key) {
  return kwargs.is_object() && kwargs.contains(key) && truthy(kwargs[key]);
}

bool reasoning_enabled(ReasoningParserKind kind, const nlohmann::ordered_json& kwargs) {
  static const nlohmann::ordered_json none;
  auto arg = [&](const char* key) -> const nlohmann::ordered_json& {
    return kwargs.is_object() && kwargs.contains(key) ? kwargs[key] : none;
  };
  const nlohmann::ordered_json& thinking = arg("thinking");
  const nlohmann::ordered_json& enable = arg("enable_thinking");
  switch (kind) {
    case ReasoningParserKind::kQwen3:  // chat_kwargs.get("enable_thinking", True)
    case ReasoningParserKind::kSeedOss:
      return !kwargs.is_object() || !kwargs.contains("enable_thinking") || truthy(enable);
    case ReasoningParserKind::kGlm45:
    case ReasoningParserKind::kKimiK2:
      if (thinking.is_null() && enable.is_null()) return true;
      return truthy(thinking) || truthy(enable);
    case ReasoningParserKind::kDeepseekV3:
      return truthy(thinking) || truthy(enable);
    case ReasoningParserKind::kDeepseekR1:
    case ReasoningParserKind::kErnie45:
    case ReasoningParserKind::kMinimaxM2:
    case ReasoningParserKind::kMinimaxM2AppendThink:
    case ReasoningParserKind::kOlmo3:
    case ReasoningParserKind::kGranite:
      break;
  }
  return true;
}

ThinkTags think_tags(const tok::Tokenizer& tokenizer) {
  return {tokenizer.token_to_id(kStart), tokenizer.token_to_id(kEnd), {}, {}};
}

ThinkTags think_tags(const tok::Tokenizer& tokenizer, ReasoningParserKind kind) {
  return think_tags([&](std::string_view s) { return tokenizer.token_to_id(s); }, kind);
}

ThinkTags think_tags(const TokenLookup& id_of, ReasoningParserKind kind) {
  ThinkTags t{id_of(kStart), id_of(kEnd), {}, {}};
  auto add = [&](std::vector<int32_t>& v, std::string_view tag) {
    if (auto id = id_of(tag)) v.push_back(*id);
  };
  switch (kind) {
    case ReasoningParserKind::kMinimaxM2:
      add(t.implicit_end, kMinimaxCall);
      add(t.uncounted, kMinimaxCallEnd);
      break;
    case ReasoningParserKind::kKimiK2:
      add(t.implicit_end, kKimiSection);
      for (const char* u : {"<|tool_calls_section_end|>", "<|tool_call_begin|>",
                            "<|tool_call_argument_begin|>", "<|tool_call_end|>"})
        add(t.uncounted, u);
      break;
    case ReasoningParserKind::kGlm45:
      add(t.implicit_end, kToolCall);
      add(t.uncounted, "</tool_call>");
      for (const char* b : {"<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"})
        add(t.boundaries, b);
      break;
    case ReasoningParserKind::kQwen3:
      add(t.implicit_end, kToolCall);
      add(t.uncounted, "</tool_call>");
      for (const char* b : {"<|im_start|>", "<|im_end|>"}) add(t.boundaries, b);
      break;
    case ReasoningParserKind::kSeedOss:
      t.start = id_of(kSeedTags[0]);
      t.end = id_of(kSeedTags[1]);
      add(t.implicit_end, kSeedTags[2]);
      add(t.uncounted, "</seed:tool_call>");
      for (const char* b : {"<seed:bos>", "<seed:eos>"}) add(t.boundaries, b);
      break;
    case ReasoningParserKind::kOlmo3: {
      t.start = t.end = std::nullopt;  // plain text in Olmo's vocabulary
      const auto first = id_of("</"), first_g = id_of("\u0120</"), think = id_of("think"),
                 close = id_of(">");
      if (first && first_g && think && close) {
        t.end_first = {*first_g, *first};
        t.end_rest = {*think, *close};
      }
      break;
    }
    case ReasoningParserKind::kGranite:
      t.start = t.end = std::nullopt;  // its phrases are text
      break;
    case ReasoningParserKind::kMinimaxM2AppendThink:
    case ReasoningParserKind::kDeepseekR1:
    case ReasoningParserKind::kDeepseekV3:
    case ReasoningParserKind::kErnie45:
      break;
  }
  return t;
}

bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, std::optional<int32_t> start_id,
                           std::optional<int32_t> end_id) {
  if (!end_id) return false;
  for (size_t i = prompt.size(); i-- > 0;) {
    if (prompt[i] == *end_id) return true;
    if (start_id && prompt[i] == *start_id) return false;
  }
  return false;
}

bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, const ThinkTags& tags) {
  if (!tags.end) return false;
  auto in = [](const std::vector<int32_t>& v, int32_t id) {
    for (int32_t x : v)
      if (x == id) return true;
    return false;
  };
  for (size_t i = prompt.size(); i-- > 0;) {
    if (prompt[i] == *tags.end || in(tags.implicit_end, prompt[i])) return true;
    if ((tags.start && prompt[i] == *tags.start) || in(tags.boundaries, prompt[i])) return false;
  }
  return false;
}

bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, const ThinkTags& tags,
                           ReasoningParserKind kind) {
  if (kind == ReasoningParserKind::kGlm45 || kind == ReasoningParserKind::kMinimaxM2 ||
      kind == ReasoningParserKind::kQwen3 || kind == ReasoningParserKind::kSeedOss ||
      kind == ReasoningParserKind::kKimiK2)
    return prompt_ends_reasoning(prompt, tags);
  if (kind == ReasoningParserKind::kOlmo3) {
    // "</" (either form) followed by "think", ">" anywhere in the prompt.
    const size_t n = tags.end_rest.size();
    if (n == 0) return false;
    for (size_t i = 0; i + n < prompt.size(); ++i)
      if (std::find(tags.end_first.begin(), tags.end_first.end(), prompt[i]) !=
              tags.end_first.end() &&
          std::equal(tags.end_rest.begin(), tags.end_rest.end(), prompt.begin() + i + 1))
        return true;
    return false;
  }
  return prompt_ends_reasoning(prompt, tags.start, tags.end);
}

int64_t count_reasoning_tokens(ReasoningParserKind kind, const ThinkTags& tags,
                               const std::vector<int32_t>& ids, bool prompt_ended) {
  const auto is = [](std::optional<int32_t> tag, int32_t id) { return tag && *tag == id; };
  int64_t n = 0;
  switch (kind) {
    case ReasoningParserKind::kMinimaxM2AppendThink:
    case ReasoningParserKind::kOlmo3:
    case ReasoningParserKind::kGranite:
      return 0;
    case ReasoningParserKind::kDeepseekR1:
    case ReasoningParserKind::kDeepseekV3:
    case ReasoningParserKind::kErnie45: {
      int64_t depth = 0;
      for (int32_t id : ids) {
        if (is(tags.start, id)) {
          ++depth;
        } else if (is(tags.end, id)) {
          depth -= depth > 0;
        } else {
          n += depth > 0;
        }
      }
      return n;
    }
    case ReasoningParserKind::kQwen3:
    case ReasoningParserKind::kSeedOss:
    case ReasoningParserKind::kGlm45:
    case ReasoningParserKind::kMinimaxM2:
    case ReasoningParserKind::kKimiK2:
      break;
  }
  const bool glm = kind == ReasoningParserKind::kGlm45;
  bool reasoning = !prompt_ended;
  for (int32_t id : ids) {
    const bool ends =
        is(tags.end, id) || std::find(tags.implicit_end.begin(), tags.implicit_end.end(), id) !=
                                tags.implicit_end.end();
    if (is(tags.start, id))
      reasoning = reasoning || glm;  // glm45's content reopens the reasoning
    else if (ends)
      reasoning = false;
    else if (std::find(tags.uncounted.begin(), tags.uncounted.end(), id) == tags.uncounted.end())
      n += reasoning;
  }
  return n;
}

namespace {

// The engine-based parsers' whole-output rules (glm45: `glm`, qwen3: not): see the header.
ReasoningSplit split_engine(const std::string& text, bool prompt_ended, bool glm,
                            const EngineTags& tags = kGlmTags) {
  std::string reasoning, content;
  bool in_reasoning = !prompt_ended;
  for (size_t pos = 0;;) {
    std::string_view tag;
    const size_t at = find_tag(text, pos, tags, tag);
    (in_reasoning ? reasoning : content)
        .append(text, pos, at == std::string::npos ? std::string::npos : at - pos);
    if (at == std::string::npos) break;
    if (tag == tags[0]) {
      // Dropped in the reasoning; in the content glm45 opens reasoning again, qwen3 keeps it.
      if (!in_reasoning && !glm) content += tag;
      in_reasoning = in_reasoning || glm;
    } else if (tag == tags[1]) {
      in_reasoning = false;  // dropped; a stray one in the content too
    } else {
      in_reasoning = false;  // <tool_call> ends the reasoning and stays for the tool parser
      content += tag;
    }
    pos = at + tag.size();
  }
  ReasoningSplit r;
  if (glm) reasoning = py_rstrip(reasoning);
  if (!reasoning.empty()) r.reasoning = std::move(reasoning);
  if (!content.empty()) r.content = std::move(content);
  return r;
}

}  // namespace

ReasoningSplit split_reasoning_glm45(const std::string& text, bool prompt_ended) {
  return split_engine(text, prompt_ended, true);
}

ReasoningSplit split_reasoning_qwen3(const std::string& text, bool prompt_ended) {
  return split_engine(text, prompt_ended, false);
}

namespace {

// The stream's rules, all at once: a stream reassembles to this by construction.
ReasoningSplit split_as_stream(ReasoningParserKind kind, const std::string& text) {
  ReasoningStreamSplitter sp(kind, false);
  auto [reasoning, content] = sp.feed(text);
  auto [r2, c2] = sp.finish();
  reasoning += r2;
  content += c2;
  ReasoningSplit r;
  if (!reasoning.empty()) r.reasoning = std::move(reasoning);
  if (!content.empty()) r.content = std::move(content);
  return r;
}

}  // namespace

ReasoningSplit split_reasoning_minimax_m2(const std::string& text) {
  return split_as_stream(ReasoningParserKind::kMinimaxM2, text);
}

ReasoningSplit split_reasoning(ReasoningParserKind kind, const std::string& text,
                               bool prompt_ended) {
  switch (kind) {
    case ReasoningParserKind::kKimiK2:
      return split_as_stream(kind, text);
    case ReasoningParserKind::kGlm45:
      return split_reasoning_glm45(text, prompt_ended);
    case ReasoningParserKind::kMinimaxM2:
      return split_reasoning_minimax_m2(text);
    case ReasoningParserKind::kMinimaxM2AppendThink:
      return {std::nullopt, std::string(kStart) + text};
    case ReasoningParserKind::kQwen3:
      return split_reasoning_qwen3(text, prompt_ended);
    case ReasoningParserKind::kSeedOss:
      return split_engine(text, prompt_ended, false, kSeedTags);
    case ReasoningParserKind::kOlmo3: {
      // ^(?:<think>)?(.*?)</think>(.*)$ (DOTALL)
      const size_t body = text.compare(0, kStart.size(), kStart) == 0 ? kStart.size() : 0;
      const size_t e = text.find(kEnd, body);
      if (e == std::string::npos) return {std::nullopt, text};
      ReasoningSplit r;
      if (e > body) r.reasoning = text.substr(body, e - body);
      if (e + kEnd.size() < text.size()) r.content = text.substr(e + kEnd.size());
      return r;
    }
    case ReasoningParserKind::kGranite: {
      // (?:Here's|Here is) my thought process:(.*?)(?:Here's|Here is) my response:(.*), searched
      size_t think = std::string::npos, body = 0;
      for (std::string_view p : kGraniteThink)
        if (const size_t f = text.find(p); f < think) think = f, body = f + p.size();
      size_t resp = std::string::npos, after = 0;
      if (think != std::string::npos)
        for (std::string_view p : kGraniteResponse)
          if (const size_t f = text.find(p, body); f < resp) resp = f, after = f + p.size();
      if (resp == std::string::npos) return {std::nullopt, text};
      ReasoningSplit r;
      r.reasoning = text.substr(body, resp - body);
      if (after < text.size()) r.content = text.substr(after);
      return r;
    }
    case ReasoningParserKind::kErnie45: {
      ReasoningSplit r = split_reasoning(text);
      if (r.content) {
        const size_t s = r.content->find(kResponse), e = r.content->rfind(kResponseEnd);
        if (s != std::string::npos && e != std::string::npos && s < e)
          *r.content = r.content->substr(s + kResponse.size(), e - s - kResponse.size());
        if (r.content->empty()) r.content.reset();
      }
      return r;
    }
    case ReasoningParserKind::kDeepseekR1:
    case ReasoningParserKind::kDeepseekV3:
      break;
  }
  return split_reasoning(text);
}

ReasoningSplit split_reasoning(const std::string& text) {
  // str.partition(<think>): what precedes the first <think> is dropped.
  const size_t s = text.find(kStart);
  const size_t body = s == std::string::npos ? 0 : s + kStart.size();
  const size_t e = text.find(kEnd, body);
  ReasoningSplit r;
  r.reasoning = text.substr(body, e == std::string::npos ? std::string::npos : e - body);
  if (e == std::string::npos) return r;
  std::string content = text.substr(e + kEnd.size());
  if (!content.empty()) r.content = std::move(content);
  return r;
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_glm(const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  // glm45's reasoning text goes out but its trailing whitespace waits: it is dropped if the
  // reasoning ends there (qwen3 keeps it).
  auto add_reasoning = [&](std::string_view t) {
    if (kind_ == ReasoningParserKind::kQwen3 || kind_ == ReasoningParserKind::kSeedOss)
      reasoning += t;
    else
      release_before_trailing_space(held_ws_, t, reasoning);
  };
  const EngineTags& tags = engine_tags(kind_);
  while (state_ == State::kReasoning) {
    std::string_view tag;
    const size_t at = find_tag(pending_, 0, tags, tag);
    if (at == std::string::npos) {
      size_t hold = 0;
      for (std::string_view t : tags) hold = std::max(hold, partial_tag_suffix(pending_, t));
      add_reasoning(std::string_view(pending_).substr(0, pending_.size() - hold));
      pending_.erase(0, pending_.size() - hold);
      return {reasoning, content};
    }
    add_reasoning(std::string_view(pending_).substr(0, at));
    // <think> is dropped; </think> is dropped and ends; <tool_call> ends and stays.
    pending_.erase(0, tag == tags[2] ? at : at + tag.size());
    if (tag != tags[0]) {
      state_ = State::kAfter;
      held_ws_.clear();
    }
  }
  content += pending_;
  pending_.clear();
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_minimax(
    const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  auto add_reasoning = [&](std::string_view t) {
    release_before_trailing_space(held_ws_, t, reasoning);
  };
  auto add_text = [&](std::string_view t) {
    if (state_ == State::kReasoning)
      add_reasoning(t);
    else
      content += t;
  };
  // Where each tag next occurs (searched again only once passed).
  constexpr size_t n = std::size(kMinimaxWholeTags);
  size_t next[n];
  for (size_t i = 0; i < n; ++i) next[i] = pending_.find(kMinimaxWholeTags[i]);
  size_t pos = 0;
  for (;;) {
    size_t at = std::string::npos, which = 0;
    for (size_t i = 0; i < n; ++i) {
      if (next[i] != std::string::npos && next[i] < pos)
        next[i] = pending_.find(kMinimaxWholeTags[i], pos);
      if (next[i] < at) {
        at = next[i];
        which = i;
      }
    }
    if (at == std::string::npos) break;
    add_text(std::string_view(pending_).substr(pos, at - pos));
    const std::string_view tag = kMinimaxWholeTags[which];
    pos = at + tag.size();
    if (state_ == State::kReasoning) {
      // <think> is dropped; </think> is dropped and ends; <minimax:tool_call> ends and stays.
      if (tag == kEnd || tag == kMinimaxCall) {
        state_ = State::kAfter;
        held_ws_.clear();
        if (tag == kMinimaxCall) {
          span_ = true;
          content += tag;
        }
      } else if (tag != kStart) {
        if (tag == kMinimaxCallEnd) span_ = false;
        add_reasoning(tag);
      }
      continue;
    }
    // After the reasoning (vLLM's engine with tool parsing skipped): tool markup is text, but a
    // </minimax:tool_call> that no opener began is a stray closer (dropped), and so is </think>.
    if (tag == kEnd) continue;
    if (tag == kMinimaxCallEnd) {
      if (!span_) continue;
      span_ = false;
    } else if (tag == kMinimaxCall || tag == kMinimaxInvoke) {
      span_ = true;
    }
    content += tag;
  }
  size_t hold = 0;
  for (std::string_view t : kMinimaxWholeTags)
    hold = std::max(hold, partial_tag_suffix(pending_, t));
  hold = std::min(hold, pending_.size() - pos);
  add_text(std::string_view(pending_).substr(pos, pending_.size() - pos - hold));
  pending_.erase(0, pending_.size() - hold);
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_kimi(const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  size_t pos = 0;
  for (;;) {
    std::string_view tag;
    const size_t at = find_tag(pending_, pos, kKimiTags, tag);
    if (at == std::string::npos) break;
    const std::string_view text = std::string_view(pending_).substr(pos, at - pos);
    pos = at + tag.size();
    if (state_ == State::kAfter) {
      content += text;  // </think> is dropped, the rest is content
      if (tag != kEnd) content += tag;
      continue;
    }
    release_before_trailing_space(held_ws_, text, reasoning);
    if (tag == kStart) continue;  // dropped
    state_ = State::kAfter;       // </think> (dropped) or the tool section (kept)
    held_ws_.clear();
    if (tag == kKimiSection) content += tag;
  }
  size_t hold = 0;
  for (std::string_view t : kKimiTags) hold = std::max(hold, partial_tag_suffix(pending_, t));
  hold = std::min(hold, pending_.size() - pos);
  const std::string_view text =
      std::string_view(pending_).substr(pos, pending_.size() - pos - hold);
  if (state_ == State::kAfter)
    content += text;
  else
    release_before_trailing_space(held_ws_, text, reasoning);
  pending_.erase(0, pending_.size() - hold);
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed(const std::string& delta) {
  if (kind_ == ReasoningParserKind::kGlm45 || kind_ == ReasoningParserKind::kQwen3 ||
      kind_ == ReasoningParserKind::kSeedOss)
    return feed_glm(delta);
  if (kind_ == ReasoningParserKind::kMinimaxM2) return feed_minimax(delta);
  if (kind_ == ReasoningParserKind::kGranite) return feed_granite(delta);
  if (kind_ == ReasoningParserKind::kKimiK2) return feed_kimi(delta);
  if (kind_ == ReasoningParserKind::kMinimaxM2AppendThink) {
    // Nothing is reasoning: "<think>" goes first unless the prompt closed the reasoning.
    std::string content = state_ == State::kReasoning && !start_seen_ ? std::string(kStart) : "";
    start_seen_ = true;
    return {"", content + delta};
  }
  std::string reasoning, content;
  if (kind_ == ReasoningParserKind::kErnie45) {
    // deepseek_r1's split, then the content's <response> wrapper.
    const ReasoningParserKind k = kind_;
    kind_ = ReasoningParserKind::kDeepseekR1;
    auto [r, t] = feed(delta);
    kind_ = k;
    return {std::move(r), ernie_content(t, false)};
  }
  pending_ += delta;
  while (state_ == State::kReasoning) {
    const size_t end = pending_.find(kEnd);
    const size_t start = pending_.find(kStart);
    if (start != std::string::npos && start < end) {  // every <think> in the reasoning is dropped
      reasoning += pending_.substr(0, start);
      pending_.erase(0, start + kStart.size());
      continue;
    }
    if (end != std::string::npos) {
      reasoning += pending_.substr(0, end);
      pending_.erase(0, end + kEnd.size());
      state_ = State::kAfter;
      break;
    }
    const size_t hold =
        std::max(partial_tag_suffix(pending_, kEnd), partial_tag_suffix(pending_, kStart));
    reasoning += pending_.substr(0, pending_.size() - hold);
    pending_.erase(0, pending_.size() - hold);
    return {reasoning, content};
  }
  content += pending_;
  pending_.clear();
  return {reasoning, content};
}

std::pair<std::string, std::string> ReasoningStreamSplitter::feed_granite(
    const std::string& delta) {
  std::string reasoning, content;
  pending_ += delta;
  if (state_ == State::kReasoning && !start_seen_) {
    // The reasoning opens only with a thought phrase at the very start of the output.
    bool may_open = false;
    for (std::string_view p : kGraniteThink) {
      if (pending_.compare(0, p.size(), p) == 0) {
        pending_.erase(0, p.size());
        start_seen_ = true;
        break;
      }
      may_open = may_open || p.compare(0, pending_.size(), pending_) == 0;
    }
    if (!start_seen_) {
      if (may_open) return {"", ""};
      start_seen_ = true;
      state_ = State::kAfter;
    }
  }
  if (state_ == State::kReasoning) {
    size_t at = std::string::npos, len = 0;
    for (std::string_view p : kGraniteResponse)
      if (const size_t f = pending_.find(p); f < at) at = f, len = p.size();
    if (at == std::string::npos) {
      size_t hold = 0;
      for (std::string_view p : kGraniteResponse)
        hold = std::max(hold, partial_tag_suffix(pending_, p));
      reasoning = pending_.substr(0, pending_.size() - hold);
      pending_.erase(0, pending_.size() - hold);
      return {reasoning, content};
    }
    reasoning = pending_.substr(0, at);
    pending_.erase(0, at + len);
    state_ = State::kAfter;
  }
  content += pending_;
  pending_.clear();
  return {reasoning, content};
}

std::string ReasoningStreamSplitter::ernie_content(const std::string& text, bool end) {
  std::string out;
  if (resp_mode_ == 0) {
    // Before the content's first word: whitespace and the start of a <response> wait.
    held_ws_ += text;
    const size_t word = space_run(held_ws_, 0);
    const std::string_view rest = std::string_view(held_ws_).substr(word);
    if (rest.substr(0, kResponse.size()) == kResponse) {
      const std::string after(rest.substr(kResponse.size()));
      held_ws_.clear();
      resp_mode_ = 1;
      return ernie_content(after, end);
    }
    if (!end && (rest.empty() || kResponse.substr(0, rest.size()) == rest)) return out;
    out.swap(held_ws_);
    resp_mode_ = 2;
    return out;
  }
  if (resp_mode_ == 1) {
    // Inside the <response>: sent as it comes until a </response>.
    std::string p = held_ws_ + text;
    held_ws_.clear();
    const size_t e = p.find(kResponseEnd);
    if (e != std::string::npos) {
      out = p.substr(0, e);
      resp_tail_ = p.substr(e);
      resp_mode_ = 3;
    } else {
      const size_t hold = end ? 0 : partial_tag_suffix(p, kResponseEnd);
      out = p.substr(0, p.size() - hold);
      held_ws_ = p.substr(p.size() - hold);
      return out;
    }
  } else if (resp_mode_ == 3) {
    resp_tail_ += text;
  } else {
    return text;
  }
  if (end && resp_mode_ == 3) {
    // The answer runs to the last </response>: earlier ones and the text between them are in.
    out += resp_tail_.substr(0, resp_tail_.rfind(kResponseEnd));
    resp_tail_.clear();
  }
  return out;
}

std::pair<std::string, std::string> ReasoningStreamSplitter::finish() {
  if (kind_ == ReasoningParserKind::kErnie45) {
    const ReasoningParserKind k = kind_;
    kind_ = ReasoningParserKind::kDeepseekR1;
    auto [r, t] = finish();
    kind_ = k;
    return {std::move(r), ernie_content(t, true)};
  }
  std::string rest;
  rest.swap(pending_);
  // granite: an output too short to tell whether a thought phrase opened it is content.
  if (kind_ == ReasoningParserKind::kGranite && !start_seen_) return {"", rest};
  if (kind_ == ReasoningParserKind::kMinimaxM2AppendThink) {
    std::string content = state_ == State::kReasoning && !start_seen_ ? std::string(kStart) : "";
    start_seen_ = true;
    return {"", content};
  }
  const bool glm = kind_ == ReasoningParserKind::kGlm45 ||
                   kind_ == ReasoningParserKind::kMinimaxM2 ||
                   kind_ == ReasoningParserKind::kKimiK2;
  if (glm && state_ == State::kReasoning) {
    // A tag cut off by the end is text; trailing whitespace is dropped.
    held_ws_ += rest;
    std::string r = held_ws_.substr(0, py_rstrip_end(held_ws_));
    held_ws_.clear();
    return {r, ""};
  }
  if (state_ == State::kReasoning) return {rest, ""};
  return {"", rest};
}

}  // namespace vllm::api
