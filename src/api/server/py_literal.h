// The part of Python a pythonic tool-call list uses (vLLM's PythonicToolParser reads it with
// ast.parse and evaluates each keyword argument as a literal): a module whose first statement is
// a list of calls with keyword arguments, and whose other statements are call lists or literals.
// The literals: strings of every quoting, prefix, escape and implicit concatenation, f-strings
// without placeholders; ints in every base (any length); floats; True / False / None and JSON's
// true / false / null; lists, tuples and sets as lists; dicts with literal keys (keys equal as
// Python's == merges them); unary +/- on numbers; 200 levels of nesting at most.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vllm::api {

inline bool py_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool py_digit(char c) { return c >= '0' && c <= '9'; }
// \w of Python's regex and identifier characters (non-ASCII bytes taken as letters).
inline bool py_word_byte(char c) {
  return py_ascii_letter(c) || py_digit(c) || c == '_' || static_cast<unsigned char>(c) >= 0x80;
}

// Reads `text` as that module: each call's name and its keyword arguments written as
// json.dumps(..., ensure_ascii=False) writes the evaluated dict. False on anything else (a
// syntax error, a positional argument, a name, a nested call, bytes, an f-string placeholder).
bool read_python_call_list(std::string_view text,
                           std::vector<std::pair<std::string, std::string>>& calls);

}  // namespace vllm::api
