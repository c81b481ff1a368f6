// Python's whitespace rules on UTF-8 text, for parsers that must cut text where vLLM's Python
// does: str.strip() / rstrip() (str.isspace: also U+001C..U+001F) and the `regex` module's \s
// (the Unicode White_Space property: not U+001C..U+001F).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vllm::api {

// The code point starting at s[i] and its length in bytes (1 for a byte that does not start
// a well-formed sequence, read as itself).
inline uint32_t utf8_at(std::string_view s, size_t i, size_t& len) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  len = 1;
  if (c < 0x80) return c;
  size_t n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return c;
  uint32_t cp = c & (0x3F >> (n - 1));
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xC0) != 0x80) return c;
    cp = (cp << 6) | (b(i + k) & 0x3F);
  }
  len = n;
  return cp;
}

// Unicode White_Space (the `regex` module's \s).
inline bool is_unicode_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

// Python's str.isspace() for one code point.
inline bool is_py_space(uint32_t cp) { return is_unicode_space(cp) || (cp >= 0x1C && cp <= 0x1F); }

// Length of the run of is_py_space (or is_unicode_space with `regex_s`) code points at s[i].
inline size_t space_run(std::string_view s, size_t i, bool regex_s = false) {
  const size_t start = i;
  while (i < s.size()) {
    size_t len;
    const uint32_t cp = utf8_at(s, i, len);
    if (!(regex_s ? is_unicode_space(cp) : is_py_space(cp))) break;
    i += len;
  }
  return i - start;
}

// Where the trailing run of Python whitespace begins.
inline size_t py_rstrip_end(std::string_view s) {
  size_t end = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    const uint32_t cp = utf8_at(s, i, len);
    i += len;
    if (!is_py_space(cp)) end = i;
  }
  return end;
}

// Streaming text whose trailing whitespace must wait (it is dropped if the text ends there, as
// Python's rstrip would): appends `t` to `held`, moves all but held's trailing whitespace to
// `out`; true when anything moved.
inline bool release_before_trailing_space(std::string& held, std::string_view t, std::string& out) {
  held += t;
  const size_t end = py_rstrip_end(held);
  if (end == 0) return false;
  out.append(held, 0, end);
  held.erase(0, end);
  return true;
}

inline std::string py_rstrip(std::string_view s) {
  return std::string(s.substr(0, py_rstrip_end(s)));
}

inline std::string py_strip(std::string_view s) {
  const size_t b = space_run(s, 0);
  return py_rstrip(s.substr(b));
}

inline bool py_all_space(std::string_view s) { return space_run(s, 0) == s.size(); }

// Python's str.splitlines(): lines cut at \n, \r, \r\n, \v, \f, U+001C..U+001E, U+0085,
// U+2028 and U+2029, the breaks dropped, no empty last line after a final break.
inline std::vector<std::string_view> py_splitlines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  for (size_t i = 0; i < s.size();) {
    size_t len;
    const uint32_t cp = utf8_at(s, i, len);
    const bool brk = cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C ||
                     (cp >= 0x1C && cp <= 0x1E) || cp == 0x85 || cp == 0x2028 || cp == 0x2029;
    if (!brk) {
      i += len;
      continue;
    }
    lines.push_back(s.substr(start, i - start));
    i += len;
    if (cp == '\r' && i < s.size() && s[i] == '\n') ++i;
    start = i;
  }
  if (start < s.size()) lines.push_back(s.substr(start));
  return lines;
}

// Content under suppressed tool calls (ToolParserOptions::suppress_calls): sent as it comes once
// a word began, whitespace before the first word held in `held` (the end of the output sends it).
inline void suppressed_text(std::string_view t, std::string& held, bool& started,
                            std::string& out) {
  if (started) {
    out += t;
    return;
  }
  held += t;
  if (py_all_space(held)) return;
  out += held;
  held.clear();
  started = true;
}

}  // namespace vllm::api
