// Regex -> grammar IR. A recursive-descent parser over code points; classes stay classes
// until the CharMapper spells them (as UTF-8, or as JSON string content for `pattern`).
#include <cctype>
#include <cstdio>
#include <string>

#include "engine/structured_output/front_ends.h"

namespace vllm::engine::so {
namespace {

bool decode_utf8(std::string_view s, size_t& i, uint32_t& cp) {
  const auto b = static_cast<unsigned char>(s[i]);
  int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return false;
  cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (int k = 1; k < n; ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if ((c & 0xC0) != 0x80) return false;
    cp = (cp << 6) | (c & 0x3F);
  }
  i += n;
  return true;
}

const std::vector<CodeRange> kDigit{{'0', '9'}};
const std::vector<CodeRange> kWord{{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}};
const std::vector<CodeRange> kSpace{{'\t', '\r'}, {' ', ' '}};

class RegexParser {
 public:
  RegexParser(std::string_view p, const CharMapper& m, const std::string& what)
      : p_(p), map_(m), what_(what) {}

  Expr parse() {
    Expr e = alternation(/*top=*/true);
    if (i_ < p_.size()) fail("unbalanced ')'");
    return e;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw GrammarError("invalid " + what_ + " '" + std::string(p_) + "' at offset " +
                       std::to_string(i_) + ": " + msg);
  }
  bool eof() const { return i_ >= p_.size(); }
  char peek() const { return p_[i_]; }

  uint32_t next_cp() {
    uint32_t cp;
    if (!decode_utf8(p_, i_, cp)) fail("invalid UTF-8");
    return cp;
  }

  Expr alternation(bool top) {
    std::vector<Expr> alts{sequence(top)};
    while (!eof() && peek() == '|') {
      ++i_;
      alts.push_back(sequence(top));
    }
    return alt(std::move(alts));
  }

  Expr sequence(bool top) {
    std::vector<Expr> items;
    const size_t begin = i_;
    while (!eof() && peek() != '|' && peek() != ')') {
      if (peek() == '^') {
        if (!(top && i_ == begin)) fail("'^' is only supported at the start of the pattern");
        ++i_;
        continue;
      }
      if (peek() == '$') {
        ++i_;
        if (!(top && (eof() || peek() == '|')))
          fail("'$' is only supported at the end of the pattern");
        continue;
      }
      Expr a = atom(top, begin);
      if (a.kind == Expr::Kind::kEmpty && anchor_) {
        anchor_ = false;
        continue;
      }
      items.push_back(quantified(std::move(a)));
    }
    return seq(std::move(items));
  }

  bool read_int(int64_t& v) {
    if (eof() || !isdigit(static_cast<unsigned char>(peek()))) return false;
    v = 0;
    while (!eof() && isdigit(static_cast<unsigned char>(peek()))) {
      v = v * 10 + (peek() - '0');
      if (v > 1000000000) fail("repetition count too large");
      ++i_;
    }
    return true;
  }

  Expr quantified(Expr a) {
    while (!eof()) {
      const char c = peek();
      int64_t lo = 0, hi = -1;
      if (c == '*') {
        ++i_;
      } else if (c == '+') {
        lo = 1;
        ++i_;
      } else if (c == '?') {
        hi = 1;
        ++i_;
      } else if (c == '{') {
        const size_t save = i_;
        ++i_;
        int64_t m = -1, n = -1;
        const bool has_m = read_int(m);
        bool ok = true;
        if (!eof() && peek() == ',') {
          ++i_;
          if (!read_int(n)) n = -1;
          if (!has_m) m = 0;
        } else {
          n = m;
          ok = has_m;
        }
        if (!ok || eof() || peek() != '}') {
          i_ = save;  // not a quantifier: a literal '{' (as Python's re reads it)
          return a;
        }
        ++i_;
        if (n >= 0 && n < m)
          fail("repetition {" + std::to_string(m) + "," + std::to_string(n) + "} has max < min");
        if (m > 10000 || n > 10000)
          fail("repetition bound " + std::to_string(std::max(m, n)) +
               " exceeds the limit of 10000");
        lo = m;
        hi = n;
      } else {
        return a;
      }
      if (!eof() && peek() == '?') {
        ++i_;  // lazy: the same language, matched greedily
      } else if (!eof() && peek() == '+') {
        fail("possessive quantifiers are not supported");
      }
      if (a.kind == Expr::Kind::kEmpty) fail("nothing to repeat");
      a = rep(std::move(a), static_cast<int32_t>(lo), static_cast<int32_t>(hi));
    }
    return a;
  }

  Expr group() {
    // at '('
    ++i_;
    if (!eof() && peek() == '?') {
      ++i_;
      if (eof()) fail("unterminated group");
      const char c = peek();
      if (c == ':') {
        ++i_;
      } else if (c == '=' || c == '!') {
        fail(std::string("lookahead (?") + c + " is not supported");
      } else if (c == '<' && i_ + 1 < p_.size() && (p_[i_ + 1] == '=' || p_[i_ + 1] == '!')) {
        fail(std::string("lookbehind (?<") + p_[i_ + 1] + " is not supported");
      } else if (c == 'P' && i_ + 1 < p_.size() && p_[i_ + 1] == '<') {
        i_ += 2;
        skip_name();
      } else if (c == '<') {
        ++i_;
        skip_name();
      } else if (c == 'P' && i_ + 1 < p_.size() && p_[i_ + 1] == '=') {
        fail("backreference (?P= is not supported");
      } else if (c == '#') {
        while (!eof() && peek() != ')') ++i_;
        if (eof()) fail("unterminated comment group");
        ++i_;
        return empty();
      } else {
        fail(std::string("inline flags or group type (?") + c + " are not supported");
      }
    }
    Expr e = alternation(false);
    if (eof() || peek() != ')') fail("missing ')'");
    ++i_;
    return e;
  }

  void skip_name() {
    while (!eof() && peek() != '>') ++i_;
    if (eof()) fail("unterminated group name");
    ++i_;
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

  // After a backslash. Returns true with `ranges` for a class escape, else the code point.
  bool escape(std::vector<CodeRange>& ranges, uint32_t& cp, bool in_class) {
    if (eof()) fail("trailing backslash");
    const char c = peek();
    ++i_;
    switch (c) {
      case 'd':
        ranges = kDigit;
        return true;
      case 'D':
        ranges = normalize_ranges(kDigit, true);
        return true;
      case 'w':
        ranges = kWord;
        return true;
      case 'W':
        ranges = normalize_ranges(kWord, true);
        return true;
      case 's':
        ranges = kSpace;
        return true;
      case 'S':
        ranges = normalize_ranges(kSpace, true);
        return true;
      case 'n':
        cp = '\n';
        return false;
      case 't':
        cp = '\t';
        return false;
      case 'r':
        cp = '\r';
        return false;
      case 'f':
        cp = '\f';
        return false;
      case 'v':
        cp = '\v';
        return false;
      case '0':
        cp = 0;
        return false;
      case 'x':
        cp = hex(2);
        return false;
      case 'u':
        if (!eof() && peek() == '{') {
          ++i_;
          cp = 0;
          int k = 0;
          while (!eof() && peek() != '}' && k < 6) {
            cp = cp * 16 + hex(1);
            ++k;
          }
          if (eof() || peek() != '}') fail("bad \\u{...} escape");
          ++i_;
        } else {
          cp = hex(4);
        }
        if (cp > kMaxCodePoint) fail("code point out of range");
        return false;
      case 'b':
        if (in_class) {
          cp = 8;
          return false;
        }
        fail("word boundary \\b is not supported");
      case 'B':
        fail("\\B is not supported");
      case 'p':
      case 'P':
        fail(std::string("Unicode property escapes \\") + c + " are not supported");
      case 'k':
        fail("backreference \\k is not supported");
      default:
        if (c >= '1' && c <= '9') fail(std::string("backreference \\") + c + " is not supported");
        if (isalnum(static_cast<unsigned char>(c)) && c != '_')
          fail(std::string("unknown escape \\") + c);
        --i_;
        cp = next_cp();
        return false;
    }
  }

  Expr char_class() {
    // at '['
    ++i_;
    bool neg = false;
    if (!eof() && peek() == '^') {
      neg = true;
      ++i_;
    }
    std::vector<CodeRange> r;
    bool first = true;
    while (true) {
      if (eof()) fail("missing ']'");
      if (peek() == ']' && !first) {
        ++i_;
        break;
      }
      first = false;
      uint32_t lo;
      std::vector<CodeRange> cr;
      if (peek() == '\\') {
        ++i_;
        if (escape(cr, lo, true)) {
          r.insert(r.end(), cr.begin(), cr.end());
          continue;
        }
      } else if (peek() == '[' && i_ + 1 < p_.size() && p_[i_ + 1] == ':') {
        fail("POSIX classes [:name:] are not supported");
      } else {
        lo = next_cp();
      }
      uint32_t hi = lo;
      if (i_ + 1 < p_.size() && peek() == '-' && p_[i_ + 1] != ']') {
        ++i_;
        if (peek() == '\\') {
          ++i_;
          if (escape(cr, hi, true)) fail("a class escape cannot end a range");
        } else {
          hi = next_cp();
        }
        if (hi < lo) fail("character range out of order");
      }
      r.push_back({lo, hi});
    }
    auto n = normalize_ranges(r, neg);
    if (n.empty()) fail("character class matches nothing");
    return map_(n);
  }

  Expr atom(bool top, size_t begin) {
    const char c = peek();
    switch (c) {
      case '(':
        return group();
      case '[':
        return char_class();
      case '.':
        ++i_;
        // ECMA-262 / JSON Schema: any character but line terminators.
        return map_(normalize_ranges({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}, true));
      case '*':
      case '+':
      case '?':
        fail("nothing to repeat");
      case '\\': {
        ++i_;
        if (!eof() && (peek() == 'A' || peek() == 'z' || peek() == 'Z')) {
          const char a = peek();
          ++i_;
          const bool at_start = a == 'A' && top && i_ - 2 == begin;
          const bool at_end = a != 'A' && top && (eof() || peek() == '|');
          if (!at_start && !at_end) fail(std::string("anchor \\") + a + " in the middle");
          anchor_ = true;
          return empty();
        }
        std::vector<CodeRange> cr;
        uint32_t cp;
        if (escape(cr, cp, false)) return map_(cr);
        return map_({{cp, cp}});
      }
      default: {
        const uint32_t cp = next_cp();
        return map_({{cp, cp}});
      }
    }
  }

  std::string_view p_;
  const CharMapper& map_;
  std::string what_;
  size_t i_ = 0;
  bool anchor_ = false;
};

}  // namespace

Expr plain_chars(const std::vector<CodeRange>& r) {
  if (r.size() == 1 && r[0].lo == r[0].hi) {
    std::string s;
    utf8_append(s, r[0].lo);
    return lit(s);
  }
  return cls(r);
}

Expr json_string_chars(const std::vector<CodeRange>& r) {
  // Characters JSON must escape are spelled the way json.dumps(ensure_ascii=False) and
  // nlohmann::json spell them; everything else raw.
  std::vector<CodeRange> safe;
  std::vector<Expr> alts;
  auto special = [&](uint32_t cp) {
    static const char* kShort[] = {nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                   nullptr, "\\b",   "\\t",   "\\n",   nullptr, "\\f",   "\\r"};
    if (cp == '"') return lit("\\\"");
    if (cp == '\\') return lit("\\\\");
    if (cp < 14 && kShort[cp]) return lit(kShort[cp]);
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    return lit(buf);
  };
  for (const auto& x : r) {
    for (uint32_t lo = x.lo; lo <= x.hi;) {
      if (lo < 0x20 || lo == '"' || lo == '\\') {
        alts.push_back(special(lo));
        ++lo;
        continue;
      }
      uint32_t hi = x.hi;
      if (lo < '"' && hi >= '"') hi = '"' - 1;
      if (lo < '\\' && hi >= '\\') hi = '\\' - 1;
      safe.push_back({lo, hi});
      if (hi == 0xFFFFFFFF) break;
      lo = hi + 1;
    }
  }
  if (!safe.empty()) alts.insert(alts.begin(), plain_chars(safe));
  return alt(std::move(alts));
}

Expr regex_expr(std::string_view pattern, const CharMapper& chars, const std::string& what) {
  return RegexParser(pattern, chars, what).parse();
}

Grammar regex_grammar(std::string_view pattern) {
  Grammar g;
  g.root = g.add_rule("root", regex_expr(pattern));
  return g;
}

Grammar choice_grammar(const std::vector<std::string>& choices) {
  if (choices.empty()) throw GrammarError("choice: the list of choices is empty");
  size_t total = 0;
  std::vector<Expr> alts;
  for (const auto& c : choices) {
    total += c.size();
    alts.push_back(lit(c));
  }
  if (total > (4u << 20))
    throw GrammarError("choice: the choices add up to " + std::to_string(total) +
                       " bytes, over the limit of 4 MiB");
  Grammar g;
  g.root = g.add_rule("root", alt(std::move(alts)));
  return g;
}

}  // namespace vllm::engine::so
