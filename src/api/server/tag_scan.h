// Small text helpers the output parsers share: the part of a stream held back because it may
// begin a tag, and JSON's whitespace.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace vllm::api {

// Length of the longest suffix of `s` that is a proper prefix of `tag` (a tag split across
// deltas: that much of the text waits for the next one).
inline size_t partial_tag_suffix(std::string_view s, std::string_view tag) {
  for (size_t n = std::min(s.size(), tag.empty() ? 0 : tag.size() - 1); n > 0; --n)
    if (s.substr(s.size() - n) == tag.substr(0, n)) return n;
  return 0;
}

// JSON's insignificant whitespace (RFC 8259: space, tab, line feed, carriage return).
inline bool is_json_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace vllm::api
