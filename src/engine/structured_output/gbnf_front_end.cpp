// GBNF / EBNF text -> grammar IR. Tokens are read with one-token lookahead so a rule may
// span lines: a sequence ends at '|', ')', the end of the text, or the next `name ::=`.
#include <cctype>
#include <cstdio>
#include <string>

#include "engine/structured_output/front_ends.h"

namespace vllm::engine::so {
namespace {

bool name_char(char c) { return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

class GbnfParser {
 public:
  explicit GbnfParser(std::string_view t) : t_(t) {}

  Grammar parse(const std::string& root) {
    skip_space();
    if (eof()) fail("the grammar is empty");
    while (!eof()) {
      const size_t at = i_;
      const std::string name = read_name();
      if (name.empty()) fail("expected a rule name");
      skip_space();
      if (t_.substr(i_, 3) != "::=") fail("expected '::=' after rule name '" + name + "'");
      i_ += 3;
      const int32_t id = g_.rule_id(name);
      if (g_.rules[id].defined) {
        i_ = at;
        fail("rule '" + name + "' is defined twice");
      }
      g_.define(id, alternatives());
      skip_space();
      if (!eof() && !at_rule_start()) fail("unexpected '" + std::string(1, peek()) + "'");
    }
    auto it = g_.by_name.find(root);
    if (it == g_.by_name.end() || !g_.rules[it->second].defined)
      throw GrammarError("grammar has no rule named '" + root + "' (the start rule)");
    for (const auto& r : g_.rules)
      if (!r.defined) throw GrammarError("grammar: rule '" + r.name + "' is used but not defined");
    g_.root = it->second;
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    int line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < t_.size(); ++k) {
      if (t_[k] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw GrammarError("grammar syntax error at line " + std::to_string(line) + ", column " +
                       std::to_string(col) + ": " + msg);
  }
  bool eof() const { return i_ >= t_.size(); }
  char peek() const { return t_[i_]; }

  void skip_space() {
    while (!eof()) {
      if (isspace(static_cast<unsigned char>(peek()))) {
        ++i_;
      } else if (peek() == '#') {
        while (!eof() && peek() != '\n') ++i_;
      } else {
        break;
      }
    }
  }

  std::string read_name() {
    const size_t b = i_;
    while (!eof() && name_char(peek())) ++i_;
    return std::string(t_.substr(b, i_ - b));
  }

  bool at_rule_start() {
    const size_t save = i_;
    const std::string n = read_name();
    skip_space();
    const bool yes = !n.empty() && t_.substr(i_, 3) == "::=";
    i_ = save;
    return yes;
  }

  Expr alternatives() {
    std::vector<Expr> alts{sequence()};
    skip_space();
    while (!eof() && peek() == '|') {
      ++i_;
      alts.push_back(sequence());
      skip_space();
    }
    return alt(std::move(alts));
  }

  Expr sequence() {
    std::vector<Expr> items;
    while (true) {
      skip_space();
      if (eof() || peek() == '|' || peek() == ')' || at_rule_start()) break;
      items.push_back(postfix(primary()));
    }
    return seq(std::move(items));
  }

  int64_t read_int() {
    if (eof() || !isdigit(static_cast<unsigned char>(peek()))) fail("expected a number");
    int64_t v = 0;
    while (!eof() && isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > 1000000000) fail("repetition count too large");
      ++i_;
    }
    return v;
  }

  Expr postfix(Expr e) {
    while (!eof()) {
      const char c = peek();
      if (c == '*' || c == '+' || c == '?') {
        ++i_;
        e = c == '*' ? star(std::move(e)) : c == '+' ? plus(std::move(e)) : opt(std::move(e));
      } else if (c == '{') {
        ++i_;
        skip_space();
        int64_t m = 0, n;
        if (peek() != ',') m = read_int();
        skip_space();
        if (!eof() && peek() == ',') {
          ++i_;
          skip_space();
          n = (!eof() && peek() == '}') ? -1 : read_int();
        } else {
          n = m;
        }
        skip_space();
        if (eof() || peek() != '}') fail("expected '}' to close a repetition");
        if (n >= 0 && n < m) fail("repetition {m,n} with n < m");
        if (m > 10000 || n > 10000)
          fail("repetition bound " + std::to_string(std::max(m, n)) +
               " exceeds the limit of 10000");
        ++i_;
        e = rep(std::move(e), static_cast<int32_t>(m), static_cast<int32_t>(n));
      } else {
        break;
      }
    }
    return e;
  }

  uint32_t hex(int n) {
    uint32_t v = 0;
    for (int k = 0; k < n; ++k) {
      if (eof() || !isxdigit(static_cast<unsigned char>(peek()))) fail("bad hex escape");
      const char c = peek();
      v = v * 16 + (isdigit(static_cast<unsigned char>(c)) ? c - '0' : (tolower(c) - 'a' + 10));
      ++i_;
    }
    return v;
  }

  uint32_t utf8_cp() {
    const auto b = static_cast<unsigned char>(peek());
    const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
    if (n == 0 || i_ + n > t_.size()) fail("invalid UTF-8");
    uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(t_[i_ + k]) & 0x3F);
    i_ += n;
    return cp;
  }

  // One (possibly escaped) character of a literal or class; `raw` says it was \xHH (a byte).
  uint32_t char_or_escape(bool& raw) {
    raw = false;
    if (peek() != '\\') return utf8_cp();
    ++i_;
    if (eof()) fail("unterminated escape");
    const char c = peek();
    ++i_;
    switch (c) {
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      case '0':
        return 0;
      case 'x':
        return hex(2);
      case 'u':
        return hex(4);
      case 'U':
        return hex(8);
      case '\\':
      case '"':
      case '\'':
      case '[':
      case ']':
      case '-':
      case '^':
      case '/':
      case '.':
      case '(':
      case ')':
      case '|':
      case '*':
      case '+':
      case '?':
      case '{':
      case '}':
        return static_cast<unsigned char>(c);
      default:
        --i_;
        fail(std::string("unknown escape '\\") + c + "'");
    }
  }

  Expr primary() {
    const char c = peek();
    if (c == '"' || c == '\'') {
      const size_t open = i_++;
      std::string s;
      while (true) {
        if (eof() || peek() == '\n') {
          i_ = open;
          fail("unterminated string literal");
        }
        if (peek() == c) {
          ++i_;
          break;
        }
        bool raw;
        const uint32_t cp = char_or_escape(raw);
        if (cp > kMaxCodePoint) fail("code point out of range");
        utf8_append(s, cp);
      }
      return lit(s);
    }
    if (c == '[') {
      ++i_;
      bool neg = false;
      if (!eof() && peek() == '^') {
        neg = true;
        ++i_;
      }
      std::vector<CodeRange> r;
      const size_t open = i_ - (neg ? 2 : 1);
      while (true) {
        if (eof()) {
          i_ = open;
          fail("unterminated character class");
        }
        if (peek() == ']') {
          ++i_;
          break;
        }
        bool raw;
        const uint32_t lo = char_or_escape(raw);
        uint32_t hi = lo;
        if (i_ + 1 < t_.size() && peek() == '-' && t_[i_ + 1] != ']') {
          ++i_;
          hi = char_or_escape(raw);
          if (hi < lo) fail("character range out of order");
        }
        r.push_back({lo, hi});
      }
      auto n = normalize_ranges(r, neg);
      if (n.empty()) fail("character class matches nothing");
      Expr e;
      e.kind = Expr::Kind::kClass;
      e.ranges = std::move(n);
      return e;
    }
    if (c == '.') {
      ++i_;
      return any_char();
    }
    if (c == '(') {
      ++i_;
      if (!eof() && peek() == '=') fail("lookahead assertions (= ...) are not supported");
      Expr e = alternatives();
      skip_space();
      if (eof() || peek() != ')') fail("expected ')'");
      ++i_;
      return e;
    }
    if (name_char(c)) {
      const std::string n = read_name();
      return ref(g_.rule_id(n));
    }
    fail("unexpected '" + std::string(1, c) + "'");
  }

  std::string_view t_;
  size_t i_ = 0;
  Grammar g_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text, const std::string& root) {
  return GbnfParser(text).parse(root);
}

}  // namespace vllm::engine::so
