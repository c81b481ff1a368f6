// Template lexer. The whitespace handling mirrors jinja2.lexer.Lexer.tokeniter with
// trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=False: these rules decide every
// byte of output between tags, so they are reproduced case by case rather than approximated.
#include "tokenizer/chat_template/lexer.h"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/value.h"
#include "tokenizer/py_escape.h"
#include "tokenizer/unicode.h"

namespace vllm::tok::jinja {
namespace {

bool is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
         (c >= 0x1c && c <= 0x1f);
}

// Python str.rstrip() without arguments (ASCII and the common Unicode spaces).
std::string py_rstrip(const std::string& s) {
  auto cps = utf8_decode(s);
  size_t end = cps.size();
  while (end > 0 && is_py_space(cps[end - 1])) --end;
  if (end == cps.size()) return s;
  return utf8_encode(cps, 0, end);
}

bool all_py_space(const std::string& s) {
  if (s.empty()) return false;
  for (uint32_t cp : utf8_decode(s))
    if (!is_py_space(cp)) return false;
  return true;
}

int count_newlines(const std::string& s, size_t b, size_t e) {
  int n = 0;
  for (size_t k = b; k < e && k < s.size(); ++k) n += s[k] == '\n';
  return n;
}

std::string unexpected_char(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("unexpected char '") + c + "'";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "unexpected byte 0x%02x", u);
  return buf;
}

bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {}

  std::vector<Token> run() {
    size_t n = src_.size();
    bool line_starting = true;
    while (pos_ < n) {
      size_t q = find_tag_start(pos_);
      if (q == std::string::npos) {
        push(Tok::Data, src_.substr(pos_));
        line_ += count_newlines(src_, pos_, n);
        pos_ = n;
        break;
      }
      char kind = src_[q + 1];
      size_t after = q + 2;
      char sign = 0;
      if (after < n && (src_[after] == '-' || src_[after] == '+')) sign = src_[after++];
      std::string text = src_.substr(pos_, q - pos_);
      int text_lines = count_newlines(text, 0, text.size());
      if (sign == '-') {
        text = py_rstrip(text);
      } else if (sign != '+' && kind != '{') {
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if ((l_pos > 0 || line_starting) && all_py_space(text.substr(l_pos))) text.resize(l_pos);
      }
      if (!text.empty()) push(Tok::Data, text);
      line_ += text_lines;
      pos_ = after;
      if (kind == '#') {
        line_starting = lex_comment();
      } else if (kind == '%' && try_raw()) {
        line_starting = src_[pos_ - 1] == '\n';
      } else {
        line_starting = lex_tag(kind == '%');
      }
    }
    push(Tok::Eof, "");
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& msg) { throw ChatTemplateError(line_, msg); }

  void push(Tok t, std::string text) { out_.push_back(Token{t, std::move(text), line_}); }

  size_t find_tag_start(size_t from) const {
    for (size_t k = from; k + 1 < src_.size(); ++k)
      if (src_[k] == '{' && (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#'))
        return k;
    return std::string::npos;
  }

  // After a block end: `+%}` keeps everything, `-%}` eats all following whitespace, a plain
  // `%}` eats one newline (trim_blocks). Returns whether the consumed text ended in '\n'.
  bool consume_block_end_suffix(char mod) {
    size_t start = pos_;
    if (mod == '-') {
      while (pos_ < src_.size() && is_ws(src_[pos_])) ++pos_;
    } else if (mod == 0 && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
    }
    line_ += count_newlines(src_, start, pos_);
    return pos_ > start && src_[pos_ - 1] == '\n';
  }

  bool lex_comment() {
    size_t close = src_.find("#}", pos_);
    if (close == std::string::npos) fail("Missing end of comment tag");
    char mod = 0;
    size_t body_end = close;
    if (close > pos_ && (src_[close - 1] == '-' || src_[close - 1] == '+')) {
      mod = src_[close - 1];
      body_end = close - 1;
    }
    line_ += count_newlines(src_, pos_, body_end);
    pos_ = close + 2;
    if (mod == '+') return false;
    return consume_block_end_suffix(mod);
  }

  // `{% raw %}...{% endraw %}`: the body is data, untouched by the expression lexer.
  bool try_raw() {
    size_t p = pos_;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    while (p < src_.size() && is_ws(src_[p])) ++p;
    bool minus = false;
    if (src_.compare(p, 3, "-%}") == 0) {
      minus = true;
      p += 3;
    } else if (src_.compare(p, 2, "%}") == 0) {
      p += 2;
    } else {
      return false;
    }
    line_ += count_newlines(src_, pos_, p);
    pos_ = p;
    if (minus) consume_block_end_suffix('-');
    // Find `{%[-+]? endraw [-+]?%}`.
    for (size_t k = src_.find("{%", pos_); k != std::string::npos; k = src_.find("{%", k + 2)) {
      size_t e = k + 2;
      char sign = 0;
      if (e < src_.size() && (src_[e] == '-' || src_[e] == '+')) sign = src_[e++];
      while (e < src_.size() && is_ws(src_[e])) ++e;
      if (src_.compare(e, 6, "endraw") != 0) continue;
      e += 6;
      while (e < src_.size() && is_ws(src_[e])) ++e;
      char mod = 0;
      if (e < src_.size() && (src_[e] == '-' || src_[e] == '+')) mod = src_[e++];
      if (src_.compare(e, 2, "%}") != 0) continue;
      std::string text = src_.substr(pos_, k - pos_);
      int lines = count_newlines(text, 0, text.size());
      if (sign == '-') {
        text = py_rstrip(text);
      } else if (sign != '+') {
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if (l_pos > 0 && all_py_space(text.substr(l_pos))) text.resize(l_pos);
      }
      if (!text.empty()) push(Tok::Data, text);
      line_ += lines + count_newlines(src_, k, e);
      pos_ = e + 2;
      if (mod != '+') consume_block_end_suffix(mod);
      return true;
    }
    fail("Missing end of raw directive");
  }

  // Lexes the inside of `{% ... %}` or `{{ ... }}`. Returns whether the end tag's match
  // ended in a newline (Jinja2's line_starting for the next lstrip decision).
  bool lex_tag(bool block) {
    push(block ? Tok::BlockBegin : Tok::VarBegin, "");
    int depth = 0;
    size_t n = src_.size();
    while (true) {
      if (pos_ >= n)
        fail(block ? "unexpected end of template, expected '%}'"
                   : "unexpected end of template, expected '}}'");
      if (depth == 0) {
        const char* close = block ? "%}" : "}}";
        if (block && src_.compare(pos_, 3, "+%}") == 0) {
          push(Tok::BlockEnd, "");
          pos_ += 3;
          return false;
        }
        if (src_[pos_] == '-' && src_.compare(pos_ + 1, 2, close) == 0) {
          push(block ? Tok::BlockEnd : Tok::VarEnd, "");
          pos_ += 3;
          return consume_block_end_suffix('-');
        }
        if (src_.compare(pos_, 2, close) == 0) {
          push(block ? Tok::BlockEnd : Tok::VarEnd, "");
          pos_ += 2;
          return block ? consume_block_end_suffix(0) : false;
        }
      }
      char c = src_[pos_];
      if (is_ws(c)) {
        line_ += c == '\n';
        ++pos_;
        continue;
      }
      if (is_digit(c)) {
        lex_number();
        continue;
      }
      if (is_name_start(c)) {
        size_t b = pos_;
        while (pos_ < n && (is_name_start(src_[pos_]) || is_digit(src_[pos_]))) ++pos_;
        push(Tok::Name, src_.substr(b, pos_ - b));
        continue;
      }
      if (c == '\'' || c == '"') {
        lex_string(c);
        continue;
      }
      static const char* kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
      std::string op;
      for (const char* t : kTwo)
        if (src_.compare(pos_, 2, t) == 0) op = t;
      // strchr would match the string's own terminator for a NUL byte.
      if (op.empty() && c != '\0' && std::strchr("+-/*%~[](){}><=.:|,;", c) != nullptr)
        op = std::string(1, c);
      if (op.empty()) fail(unexpected_char(c));
      if (op == "(" || op == "[" || op == "{") ++depth;
      if (op == ")" || op == "]" || op == "}") {
        if (depth == 0) fail("unexpected '" + op + "'");
        --depth;
      }
      push(Tok::Op, op);
      pos_ += op.size();
    }
  }

  void lex_number() {
    size_t b = pos_, n = src_.size();
    auto digits = [&] {
      while (pos_ < n && (is_digit(src_[pos_]) ||
                          (src_[pos_] == '_' && pos_ + 1 < n && is_digit(src_[pos_ + 1]))))
        ++pos_;
    };
    digits();
    bool is_float = false;
    if (pos_ + 1 < n && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      // `foo.0.1` is attribute access, not a float: Jinja2 refuses floats right after a dot.
      if (!(b > 0 && src_[b - 1] == '.')) {
        is_float = true;
        ++pos_;
        digits();
      }
    }
    if (pos_ < n && (src_[pos_] == 'e' || src_[pos_] == 'E') && !(b > 0 && src_[b - 1] == '.')) {
      size_t save = pos_++;
      if (pos_ < n && (src_[pos_] == '+' || src_[pos_] == '-')) ++pos_;
      if (pos_ < n && is_digit(src_[pos_])) {
        is_float = true;
        digits();
      } else {
        pos_ = save;
      }
    }
    std::string text;
    for (size_t k = b; k < pos_; ++k)
      if (src_[k] != '_') text += src_[k];
    Token t{is_float ? Tok::Float : Tok::Int, text, line_};
    if (is_float) {
      // strtod, unlike stod, gives Python's answers for out-of-range literals: 1e999 is inf,
      // 1e-999 is 0.0.
      t.fval = std::strtod(text.c_str(), nullptr);
    } else {
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), t.ival);
      if (ec != std::errc() || end != text.data() + text.size())
        fail("integer literal " + text.substr(0, 40) + (text.size() > 40 ? "..." : "") +
             " is outside the 64-bit range templates support");
    }
    out_.push_back(t);
  }

  void lex_string(char quote) {
    int start_line = line_;
    std::string out;
    size_t n = src_.size();
    ++pos_;
    while (true) {
      if (pos_ >= n) fail("unexpected end of string");
      char c = src_[pos_++];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= n) fail("unexpected end of string");
      if (src_[pos_] == '\n') ++line_;  // a line continuation
      const char e = src_[pos_];
      switch (decode_py_escape(src_, pos_, out)) {
        case PyEscape::kOk:
          break;
        case PyEscape::kTruncated:
          fail("truncated \\x/\\u escape in string");
        case PyEscape::kBadHex:
          fail("invalid \\x/\\u/\\U escape in string");
        case PyEscape::kOutOfRange:
          fail("\\U escape outside the Unicode range in string");
        case PyEscape::kNamed:  // kept as written
          out += '\\';
          out += e;
          break;
      }
    }
    out_.push_back(Token{Tok::String, out, start_line});
  }

  std::string src_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> out_;
};

// Jinja2 splits on \r\n, \r and \n, drops one trailing empty line, and joins with \n.
std::string normalize_source(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t k = 0; k < s.size(); ++k) {
    if (s[k] == '\r') {
      out += '\n';
      if (k + 1 < s.size() && s[k + 1] == '\n') ++k;
    } else {
      out += s[k];
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

std::vector<Token> lex_template(const std::string& source) {
  return Lexer(normalize_source(source)).run();
}

}  // namespace vllm::tok::jinja
