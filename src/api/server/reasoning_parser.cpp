// Reasoning parsers (reasoning_parser.h): names, thinking switches, tag ids, the prompt check,
// reasoning token counts and whole-output splits; streams are in reasoning_stream.cpp.
#include "api/server/reasoning_parser.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "api/server/py_str.h"
#include "api/server/reasoning_tags.h"

namespace vllm::api {

using namespace reasoning_tags;

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
  ThinkTags t;
  t.start = tokenizer.token_to_id(kStart);
  t.end = tokenizer.token_to_id(kEnd);
  return t;
}

ThinkTags think_tags(const tok::Tokenizer& tokenizer, ReasoningParserKind kind) {
  return think_tags([&](std::string_view s) { return tokenizer.token_to_id(s); }, kind);
}

ThinkTags think_tags(const TokenLookup& id_of, ReasoningParserKind kind) {
  ThinkTags t;
  t.start = id_of(kStart);
  t.end = id_of(kEnd);
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

bool engine_based(ReasoningParserKind kind) {
  return kind == ReasoningParserKind::kGlm45 || kind == ReasoningParserKind::kMinimaxM2 ||
         kind == ReasoningParserKind::kQwen3 || kind == ReasoningParserKind::kSeedOss ||
         kind == ReasoningParserKind::kKimiK2;
}

bool prompt_ends_reasoning(const std::vector<int32_t>& prompt, const ThinkTags& tags,
                           ReasoningParserKind kind) {
  if (engine_based(kind)) return prompt_ends_reasoning(prompt, tags);
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

}  // namespace vllm::api
