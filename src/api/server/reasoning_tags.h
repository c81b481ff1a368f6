// The tags the reasoning splitters look for (reasoning_parser.cpp's whole outputs,
// reasoning_stream.cpp's streams); internal to those two files.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "api/server/reasoning_parser.h"

namespace vllm::api::reasoning_tags {

inline constexpr std::string_view kStart = "<think>";
inline constexpr std::string_view kEnd = "</think>";
inline constexpr std::string_view kToolCall = "<tool_call>";  // glm45: ends the reasoning, stays
inline constexpr std::string_view kMinimaxCall = "<minimax:tool_call>";  // minimax_m2: the same
inline constexpr std::string_view kMinimaxCallEnd = "</minimax:tool_call>";
inline constexpr std::string_view kMinimaxInvoke = "<invoke name=";
inline constexpr std::string_view kGlmTags[] = {kStart, kEnd, kToolCall};
// The engine parsers' start, end and implicit end: Seed-OSS's, everyone else's.
inline constexpr std::string_view kSeedTags[] = {"<seed:think>", "</seed:think>",
                                                 "<seed:tool_call>"};
using EngineTags = std::string_view[3];
inline const EngineTags& engine_tags(ReasoningParserKind k) {
  return k == ReasoningParserKind::kSeedOss ? kSeedTags : kGlmTags;
}
// Granite's phrases (vLLM's valid_think_starts / valid_response_starts).
inline constexpr std::string_view kGraniteThink[] = {"Here's my thought process:",
                                                     "Here is my thought process:"};
inline constexpr std::string_view kGraniteResponse[] = {"Here's my response:",
                                                        "Here is my response:"};
inline constexpr std::string_view kMinimaxWholeTags[] = {kStart, kEnd, kMinimaxCall,
                                                         kMinimaxCallEnd, kMinimaxInvoke};
// ernie45: the answer's wrapper in the content.
inline constexpr std::string_view kResponse = "<response>";
inline constexpr std::string_view kResponseEnd = "</response>";
// kimi_k2: the tool section's start ends the reasoning; the other markers are text in it.
inline constexpr std::string_view kKimiSection = "<|tool_calls_section_begin|>";
inline constexpr std::string_view kKimiTags[] = {kStart, kEnd, kKimiSection};

// The earliest of `tags` in `s` from `pos` (npos when none) and which one.
template <size_t N>
inline size_t find_tag(const std::string& s, size_t pos, const std::string_view (&tags)[N],
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

}  // namespace vllm::api::reasoning_tags
