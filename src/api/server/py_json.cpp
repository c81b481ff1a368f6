// Streaming JSON -> Python json.dumps(ensure_ascii=False) text.
#include "api/server/py_json.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "api/server/tag_scan.h"
#include "tokenizer/unicode.h"

namespace vllm::api {
namespace {

bool is_number_char(char c) {
  return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
bool valid_number(const std::string& s, bool& is_int) {
  size_t i = 0;
  auto digits = [&] {
    const size_t b = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - b;
  };
  if (i < s.size() && s[i] == '-') ++i;
  if (i >= s.size()) return false;
  if (s[i] == '0') {
    ++i;
  } else if (digits() == 0) {
    return false;
  }
  is_int = true;
  if (i < s.size() && s[i] == '.') {
    ++i;
    is_int = false;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    is_int = false;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

using tok::utf8_append;

void append_u_escape(std::string& out, uint32_t v) {
  static const char* hex = "0123456789abcdef";
  out += "\\u";
  for (int s = 12; s >= 0; s -= 4) out += hex[(v >> s) & 15];
}

// json.dumps's two-character escapes (\" \\ \n \r \t \b \f): appends one and returns true, or
// returns false for any other character.
bool append_short_escape(std::string& out, uint32_t c) {
  switch (c) {
    case '"':
      out += "\\\"";
      return true;
    case '\\':
      out += "\\\\";
      return true;
    case '\n':
      out += "\\n";
      return true;
    case '\r':
      out += "\\r";
      return true;
    case '\t':
      out += "\\t";
      return true;
    case '\b':
      out += "\\b";
      return true;
    case '\f':
      out += "\\f";
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string py_float_repr(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string s(buf, r.ptr);  // [-]d[.ddd]e(+|-)dd, the shortest round trip
  const size_t e = s.find('e');
  std::string sign, digits;
  for (size_t i = 0; i < e; ++i) {
    if (s[i] == '-')
      sign = "-";
    else if (s[i] != '.')
      digits += s[i];
  }
  const int exp = std::atoi(s.c_str() + e + 1);
  const int decpt = exp + 1;  // where the decimal point goes, counted from the first digit
  const int n = static_cast<int>(digits.size());
  // Python's repr: positional notation while -4 < decpt <= 16, otherwise an exponent.
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return sign + "0." + std::string(-decpt, '0') + digits;
    if (decpt >= n) return sign + digits + std::string(decpt - n, '0') + ".0";
    return sign + digits.substr(0, decpt) + "." + digits.substr(decpt);
  }
  std::string m = digits.substr(0, 1);
  if (n > 1) m += "." + digits.substr(1);
  const int x = decpt - 1;
  std::string xs = std::to_string(x < 0 ? -x : x);
  if (xs.size() < 2) xs = "0" + xs;
  return sign + m + "e" + (x < 0 ? "-" : "+") + xs;
}

JsonCanonicalizer::Step JsonCanonicalizer::fail() {
  failed_ = true;
  return Step::kError;
}

void JsonCanonicalizer::emit_code_point(uint32_t cp, std::string& out) {
  const bool top = stack_.empty() && !in_key_;
  if (!append_short_escape(out, cp)) {
    // A lone surrogate stays an escape: it has no UTF-8 spelling.
    if (cp < 0x20 || (cp >= 0xD800 && cp <= 0xDFFF))
      append_u_escape(out, cp);
    else
      utf8_append(out, cp);
  }
  if (top && !(cp >= 0xD800 && cp <= 0xDFFF)) utf8_append(str_, cp);
}

JsonCanonicalizer::Step JsonCanonicalizer::value_end(std::string& out) {
  (void)out;
  if (stack_.empty()) {
    done_ = true;
    return Step::kDone;
  }
  return Step::kMore;
}

JsonCanonicalizer::Step JsonCanonicalizer::end_number(std::string& out) {
  bool is_int = true;
  if (!valid_number(lex_, is_int)) return fail();
  if (is_int)
    out += lex_ == "-0" ? "0" : lex_;
  else
    out += py_float_repr(std::strtod(lex_.c_str(), nullptr));
  tok_ = Tok::kNone;
  lex_.clear();
  return value_end(out);
}

JsonCanonicalizer::Step JsonCanonicalizer::string_char(char c, std::string& out) {
  const bool top = stack_.empty() && !in_key_;
  if (escape_) {
    if (lex_.empty()) {
      uint32_t cp = 0;
      switch (c) {
        case '"':
        case '\\':
        case '/':
          cp = static_cast<uint8_t>(c);
          break;
        case 'b':
          cp = '\b';
          break;
        case 'f':
          cp = '\f';
          break;
        case 'n':
          cp = '\n';
          break;
        case 'r':
          cp = '\r';
          break;
        case 't':
          cp = '\t';
          break;
        case 'u':
          lex_ = "u";
          return Step::kMore;
        default:
          return fail();
      }
      if (high_surrogate_) {
        emit_code_point(high_surrogate_, out);
        high_surrogate_ = 0;
      }
      escape_ = false;
      emit_code_point(cp, out);
      return Step::kMore;
    }
    if (hex_value(c) < 0) return fail();
    lex_ += c;
    if (lex_.size() < 5) return Step::kMore;
    uint32_t cp = 0;
    for (size_t i = 1; i < 5; ++i) cp = cp * 16 + static_cast<uint32_t>(hex_value(lex_[i]));
    lex_.clear();
    escape_ = false;
    if (high_surrogate_) {
      const uint32_t hi = high_surrogate_;
      high_surrogate_ = 0;
      if (cp >= 0xDC00 && cp <= 0xDFFF) {
        emit_code_point(0x10000 + ((hi - 0xD800) << 10) + (cp - 0xDC00), out);
        return Step::kMore;
      }
      emit_code_point(hi, out);
    }
    if (cp >= 0xD800 && cp <= 0xDBFF)
      high_surrogate_ = cp;  // wait for its low half
    else
      emit_code_point(cp, out);
    return Step::kMore;
  }
  if (high_surrogate_ && c != '\\') {
    emit_code_point(high_surrogate_, out);
    high_surrogate_ = 0;
  }
  if (c == '"') {
    out += '"';
    tok_ = Tok::kNone;
    if (in_key_) {
      in_key_ = false;
      return Step::kMore;
    }
    return value_end(out);
  }
  if (c == '\\') {
    escape_ = true;
    lex_.clear();
    return Step::kMore;
  }
  if (static_cast<uint8_t>(c) < 0x20) return fail();  // json.loads is strict about these
  out += c;
  if (top) str_ += c;
  return Step::kMore;
}

JsonCanonicalizer::Step JsonCanonicalizer::value_start(char c, std::string& out) {
  const bool top = stack_.empty();
  started_ = true;
  switch (c) {
    case '{':
      stack_.push_back(Ctx::kObjKeyOrEnd);
      out += '{';
      return Step::kMore;
    case '[':
      stack_.push_back(Ctx::kArrValueOrEnd);
      out += '[';
      return Step::kMore;
    case '"':
      tok_ = Tok::kString;
      in_key_ = false;
      out += '"';
      if (top) {
        top_is_string_ = true;
        str_.clear();
      }
      return Step::kMore;
    case 't':
    case 'f':
    case 'n':
      tok_ = Tok::kLiteral;
      lex_.assign(1, c);
      return Step::kMore;
    default:
      if (c == '-' || (c >= '0' && c <= '9')) {
        tok_ = Tok::kNumber;
        lex_.assign(1, c);
        return Step::kMore;
      }
      return fail();
  }
}

JsonCanonicalizer::Step JsonCanonicalizer::feed(char c, std::string& out) {
  if (failed_) return Step::kError;
  if (done_) return Step::kDoneNotUsed;
  if (tok_ == Tok::kString) return string_char(c, out);
  if (tok_ == Tok::kNumber) {
    if (is_number_char(c)) {
      lex_ += c;
      return Step::kMore;
    }
    const Step s = end_number(out);
    if (s == Step::kError) return s;
    if (s == Step::kDone) return Step::kDoneNotUsed;
  } else if (tok_ == Tok::kLiteral) {
    lex_ += c;
    for (const char* w : {"true", "false", "null"}) {
      const std::string_view word(w);
      if (word.substr(0, lex_.size()) != lex_) continue;
      if (lex_.size() < word.size()) return Step::kMore;
      out += lex_;
      tok_ = Tok::kNone;
      lex_.clear();
      return value_end(out);
    }
    return fail();
  }
  if (is_json_ws(c)) return Step::kMore;
  if (stack_.empty()) return value_start(c, out);
  Ctx& ctx = stack_.back();
  switch (ctx) {
    case Ctx::kObjKeyOrEnd:
    case Ctx::kObjKey:
      if (c == '}' && ctx == Ctx::kObjKeyOrEnd) {
        stack_.pop_back();
        out += '}';
        return value_end(out);
      }
      if (c != '"') return fail();
      ctx = Ctx::kObjColon;
      tok_ = Tok::kString;
      in_key_ = true;
      out += '"';
      return Step::kMore;
    case Ctx::kObjColon:
      if (c != ':') return fail();
      ctx = Ctx::kObjValue;
      out += ": ";
      return Step::kMore;
    case Ctx::kObjValue:
      ctx = Ctx::kObjCommaOrEnd;
      return value_start(c, out);
    case Ctx::kObjCommaOrEnd:
      if (c == ',') {
        ctx = Ctx::kObjKey;
        out += ", ";
        return Step::kMore;
      }
      if (c != '}') return fail();
      stack_.pop_back();
      out += '}';
      return value_end(out);
    case Ctx::kArrValueOrEnd:
      if (c == ']') {
        stack_.pop_back();
        out += ']';
        return value_end(out);
      }
      ctx = Ctx::kArrCommaOrEnd;
      return value_start(c, out);
    case Ctx::kArrValue:
      ctx = Ctx::kArrCommaOrEnd;
      return value_start(c, out);
    case Ctx::kArrCommaOrEnd:
      if (c == ',') {
        ctx = Ctx::kArrValue;
        out += ", ";
        return Step::kMore;
      }
      if (c != ']') return fail();
      stack_.pop_back();
      out += ']';
      return value_end(out);
  }
  return fail();
}

JsonCanonicalizer::Step JsonCanonicalizer::finish(std::string& out) {
  if (failed_) return Step::kError;
  if (done_) return Step::kDone;
  if (tok_ == Tok::kNumber && stack_.empty()) return end_number(out);
  return fail();
}

std::string py_json_quote(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<uint8_t>(ch);
    if (append_short_escape(out, c)) continue;
    if (c < 0x20)
      append_u_escape(out, c);
    else
      out += ch;
  }
  out += '"';
  return out;
}

bool py_json_dumps(std::string_view text, std::string& out) {
  JsonCanonicalizer j;
  size_t i = 0;
  for (; i < text.size() && !j.done(); ++i) {
    const auto s = j.feed(text[i], out);
    if (s == JsonCanonicalizer::Step::kError) return false;
    if (s == JsonCanonicalizer::Step::kDoneNotUsed) break;
  }
  if (!j.done() && j.finish(out) != JsonCanonicalizer::Step::kDone) return false;
  for (; i < text.size(); ++i)
    if (!is_json_ws(text[i])) return false;
  return true;
}

}  // namespace vllm::api
