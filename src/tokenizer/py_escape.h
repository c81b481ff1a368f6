// Python's backslash escapes in a string literal that is not raw: what Jinja's string literals
// (the chat-template lexer) and Python literals (the pythonic tool-call reader,
// api/server/py_literal.h) both decode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vllm::tok {

enum class PyEscape {
  kOk,
  kTruncated,   // \x / \u / \U with fewer hex digits than it needs before the end
  kBadHex,      // ... or with a character that is not one
  kOutOfRange,  // \U above U+10FFFF
  kNamed,       // \N{name}: not decoded (nothing consumed past the N)
};

// `s[i]` is the character after a backslash. Appends what the escape stands for to `out` and
// moves `i` past it: \\ \' \" \a \b \f \n \r \t \v, \xHH, \uHHHH, \UHHHHHHHH (UTF-8, surrogates as
// utf8_append writes them), octal \o to \ooo, a backslash-newline nothing; any other escape
// keeps its backslash. `hex_cp` gets the code point of a \x / \u / \U escape.
PyEscape decode_py_escape(std::string_view s, size_t& i, std::string& out,
                          uint32_t* hex_cp = nullptr);

}  // namespace vllm::tok
