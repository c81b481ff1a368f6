// Small text helpers the output parsers share: the part of a stream held back because it may
// begin a tag, JSON's whitespace, and where JSON text is inside a string literal.
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

// Whether JSON text is inside a string literal, one character at a time (escapes included), for
// scanners that count brackets or look for characters outside strings.
struct JsonStrings {
  bool in_str = false, esc = false;
  // Feeds c: true when it stands outside every string literal and is not a quote.
  bool structural(char c) {
    if (esc) {
      esc = false;
    } else if (in_str) {
      if (c == '\\')
        esc = true;
      else if (c == '"')
        in_str = false;
    } else if (c == '"') {
      in_str = true;
    } else {
      return true;
    }
    return false;
  }
};

}  // namespace vllm::api
