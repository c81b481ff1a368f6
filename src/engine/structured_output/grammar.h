// The grammar IR every front end (GBNF/EBNF, regex, choice, JSON, JSON Schema) compiles to:
// named rules whose bodies are expression trees over byte strings and code-point classes,
// with references to rules (recursion allowed, left recursion refused at compile time) and
// bounded or unbounded repetition. fsm.h turns it into per-rule byte automata.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/unicode.h"

namespace vllm::engine::so {

// Every user-facing failure (bad grammar text, unsupported keyword, limit exceeded) is a
// GrammarError; the server maps it to HTTP 400 with what() as the message.
class GrammarError : public std::invalid_argument {
 public:
  explicit GrammarError(const std::string& m) : std::invalid_argument(m) {}
};

struct CodeRange {
  uint32_t lo, hi;  // inclusive
};

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// Sorted, merged, surrogates removed; `negate` complements over all scalar values.
std::vector<CodeRange> normalize_ranges(std::vector<CodeRange> r, bool negate = false);

struct Expr {
  enum class Kind : uint8_t { kEmpty, kBytes, kClass, kSeq, kAlt, kRef, kRepeat };
  Kind kind = Kind::kEmpty;
  bool raw_bytes = false;         // kClass: ranges are bytes 0..255, not code points
  std::string bytes;              // kBytes
  std::vector<CodeRange> ranges;  // kClass, normalized
  std::vector<Expr> kids;         // kSeq, kAlt, kRepeat (one kid)
  int32_t rule = -1;              // kRef
  int32_t min = 0, max = -1;      // kRepeat; max -1 = unbounded
};

// Builders. They fold trivial cases (a sequence of one, an empty alternative list stays
// kAlt with no kids and matches nothing).
Expr empty();
Expr lit(std::string_view bytes);
Expr cls(std::vector<CodeRange> ranges, bool negate = false);
Expr byte_cls(std::vector<CodeRange> ranges);  // raw byte ranges
Expr any_char();                               // any Unicode scalar value
Expr seq(std::vector<Expr> kids);
Expr alt(std::vector<Expr> kids);
Expr ref(int32_t rule);
Expr rep(Expr e, int32_t min, int32_t max);
inline Expr opt(Expr e) { return rep(std::move(e), 0, 1); }
inline Expr star(Expr e) { return rep(std::move(e), 0, -1); }
inline Expr plus(Expr e) { return rep(std::move(e), 1, -1); }

struct Rule {
  std::string name;
  Expr body;
  bool defined = false;
};

struct Grammar {
  std::vector<Rule> rules;
  int32_t root = 0;
  std::unordered_map<std::string, int32_t> by_name;

  // Returns the id of `name`, creating an undefined rule on first use (forward references).
  int32_t rule_id(const std::string& name);
  int32_t add_rule(const std::string& name, Expr body);  // fresh name made unique
  void define(int32_t id, Expr body);
  std::string to_string() const;  // EBNF-like dump for debugging and error messages
};

std::string expr_to_string(const Grammar& g, const Expr& e);
std::string describe_code_point(uint32_t cp);  // 'a' or U+0001, for messages
using tok::utf8_append;                        // tokenizer/unicode.h

}  // namespace vllm::engine::so
