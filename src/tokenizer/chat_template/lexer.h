// Lexer for the Jinja2 subset: splits a template into data and tag tokens, applying Jinja2's
// whitespace rules exactly as transformers configures them (trim_blocks, lstrip_blocks, the
// `-`/`+` modifiers, newline normalisation, dropping one trailing newline).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vllm::tok::jinja {

enum class Tok { Data, VarBegin, VarEnd, BlockBegin, BlockEnd, Name, String, Int, Float, Op, Eof };

struct Token {
  Tok type;
  std::string text;  // data, name, decoded string literal, or operator spelling
  int line = 1;
  int64_t ival = 0;
  double fval = 0.0;
};

// Throws ChatTemplateError on an unterminated tag/comment/string or a stray character.
std::vector<Token> lex_template(const std::string& source);

}  // namespace vllm::tok::jinja
