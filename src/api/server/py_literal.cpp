// The Python literals of a pythonic tool-call list, read as ast.parse and vLLM's evaluator read
// them (see the header).
#include "api/server/py_literal.h"

#include <cmath>
#include <cstdlib>
#include <string_view>

#include "api/server/py_json.h"
#include "tokenizer/py_escape.h"

namespace vllm::api {
namespace {

constexpr size_t npos = std::string_view::npos;

int hex_value(char c) {
  if (py_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Decimal digits of `digits` (in `base`) as a decimal string (arbitrary length).
std::string to_decimal(std::string_view digits, int base) {
  std::vector<int> dec = {0};  // little-endian decimal digits
  for (char c : digits) {
    int carry = hex_value(c);
    for (int& d : dec) {
      const int v = d * base + carry;
      d = v % 10;
      carry = v / 10;
    }
    while (carry) {
      dec.push_back(carry % 10);
      carry /= 10;
    }
  }
  std::string s;
  for (size_t i = dec.size(); i-- > 0;) s += static_cast<char>('0' + dec[i]);
  return s;
}

// A literal as ast.literal-style evaluation gives it.
struct Value {
  enum class Kind { kStr, kInt, kFloat, kBool, kNone, kList, kDict } kind = Kind::kNone;
  bool constant = false;     // an ast.Constant (what a dict key must be)
  std::string text;          // kStr: the string; kInt: decimal digits with a sign
  double number = 0;         // kFloat
  bool truth = false;        // kBool
  std::vector<Value> items;  // kList
  // kDict: keys[i] maps to values[i] (a pair of the incomplete Value would not compile).
  std::vector<Value> keys, values;
};

bool numeric(const Value& v) {
  return v.kind == Value::Kind::kInt || v.kind == Value::Kind::kFloat ||
         v.kind == Value::Kind::kBool;
}

double as_double(const Value& v) {
  if (v.kind == Value::Kind::kFloat) return v.number;
  if (v.kind == Value::Kind::kBool) return v.truth ? 1 : 0;
  return std::strtod(v.text.c_str(), nullptr);
}

// Python's == between dict keys (1 == 1.0 == True).
bool same_key(const Value& a, const Value& b) {
  if (a.kind == Value::Kind::kStr || b.kind == Value::Kind::kStr)
    return a.kind == b.kind && a.text == b.text;
  if (a.kind == Value::Kind::kNone || b.kind == Value::Kind::kNone) return a.kind == b.kind;
  if (a.kind == Value::Kind::kInt && b.kind == Value::Kind::kInt) return a.text == b.text;
  return numeric(a) && numeric(b) && as_double(a) == as_double(b);
}

std::string float_json(double d) {
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return py_float_repr(d);
}

// json.dumps(value, ensure_ascii=False).
std::string to_json(const Value& v) {
  switch (v.kind) {
    case Value::Kind::kStr:
      return py_json_quote(v.text);
    case Value::Kind::kInt:
      return v.text;
    case Value::Kind::kFloat:
      return float_json(v.number);
    case Value::Kind::kBool:
      return v.truth ? "true" : "false";
    case Value::Kind::kNone:
      return "null";
    case Value::Kind::kList: {
      std::string s = "[";
      for (size_t i = 0; i < v.items.size(); ++i) s += (i ? ", " : "") + to_json(v.items[i]);
      return s + "]";
    }
    case Value::Kind::kDict: {
      std::string s = "{";
      for (size_t i = 0; i < v.keys.size(); ++i) {
        const Value& k = v.keys[i];
        // json.dumps turns non-string keys into strings.
        std::string key = k.kind == Value::Kind::kStr     ? k.text
                          : k.kind == Value::Kind::kFloat ? float_json(k.number)
                                                          : to_json(k);
        s += (i ? ", " : "") + py_json_quote(key) + ": " + to_json(v.values[i]);
      }
      return s + "}";
    }
  }
  return "null";
}

// A reader of the part of Python's grammar a pythonic call list uses. Every method returns
// false on what ast.parse would refuse or what vLLM's call reader rejects (either way the output
// is not a call list).
class Reader {
 public:
  explicit Reader(std::string_view s) : s_(s) {}

  // The first statement: a list of calls; then only further statements the reader can read.
  bool read_module(std::vector<std::pair<std::string, std::string>>& calls) {
    if (!read_call_list(&calls)) return false;
    for (;;) {
      skip_line_space();
      if (i_ >= s_.size()) return true;
      if (s_[i_] != '\n' && s_[i_] != '\r' && s_[i_] != ';') return false;
      ++i_;
      skip_blank_lines();
      if (i_ >= s_.size()) return true;
      // Another statement: a call list or a literal (what else Python accepts is not read).
      const size_t start = i_;
      Value ignored;
      if (!read_call_list(nullptr)) {
        i_ = start;
        if (!read_value(ignored)) return false;
      }
    }
  }

 private:
  // Whitespace between tokens inside brackets: newlines, comments and line continuations too.
  void skip() { skip_line_space(/*newlines=*/true); }

  // Outside brackets: spaces, a comment, line continuations (and newlines when `newlines`).
  void skip_line_space(bool newlines = false) {
    while (i_ < s_.size()) {
      const char c = s_[i_];
      if (c == ' ' || c == '\t' || c == '\f' || (newlines && (c == '\n' || c == '\r'))) {
        ++i_;
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n') ++i_;
      } else if (c == '\\' && i_ + 1 < s_.size() && s_[i_ + 1] == '\n') {
        i_ += 2;
      } else {
        return;
      }
    }
  }

  void skip_blank_lines() {
    for (;;) {
      const size_t start = i_;
      skip_line_space();
      if (i_ < s_.size() && (s_[i_] == '\n' || s_[i_] == '\r')) {
        ++i_;
        continue;
      }
      if (i_ >= s_.size()) return;
      i_ = start;  // the statement starts at its line's start (no indentation)
      return;
    }
  }

  bool eat(char c) {
    skip();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }

  bool read_identifier(std::string& name) {
    if (i_ >= s_.size() ||
        !(py_ascii_letter(s_[i_]) || s_[i_] == '_' || static_cast<unsigned char>(s_[i_]) >= 0x80))
      return false;
    const size_t start = i_;
    while (i_ < s_.size() && py_word_byte(s_[i_])) ++i_;
    name = std::string(s_.substr(start, i_ - start));
    return true;
  }

  // [call, call, ...] (`calls` null: read and dropped).
  bool read_call_list(std::vector<std::pair<std::string, std::string>>* calls) {
    if (!eat('[')) return false;
    for (;;) {
      if (eat(']')) return true;
      std::string name, args;
      skip();
      if (!read_identifier(name) || !eat('(') || !read_arguments(args)) return false;
      if (calls) calls->emplace_back(std::move(name), std::move(args));
      if (eat(']')) return true;
      if (!eat(',')) return false;
    }
  }

  // Keyword arguments up to ')': {"k": v, ...} (a repeated keyword keeps its first place and
  // its last value, as vLLM's dict does).
  bool read_arguments(std::string& json) {
    std::vector<std::pair<std::string, std::string>> kw;
    for (;;) {
      if (eat(')')) break;
      skip();
      std::string key;
      if (!read_identifier(key) || !eat('=')) return false;
      if (i_ < s_.size() && s_[i_] == '=') return false;  // ==
      Value v;
      if (!read_value(v)) return false;
      size_t k = 0;
      while (k < kw.size() && kw[k].first != key) ++k;
      if (k < kw.size())
        kw[k].second = to_json(v);
      else
        kw.emplace_back(key, to_json(v));
      if (eat(')')) break;
      if (!eat(',')) return false;
    }
    json = "{";
    for (size_t k = 0; k < kw.size(); ++k)
      json += (k ? ", " : "") + py_json_quote(kw[k].first) + ": " + kw[k].second;
    json += "}";
    return true;
  }

  bool read_value(Value& v) {
    // Python's parser stops at 200 nested brackets; so does this (and its stack stays small).
    struct Depth {
      int& d;
      explicit Depth(int& x) : d(++x) {}
      ~Depth() { --d; }
    } depth(depth_);
    if (depth_ > 200) return false;
    skip();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '-' || c == '+') {
      ++i_;
      if (!read_value(v)) return false;
      if (v.kind != Value::Kind::kInt && v.kind != Value::Kind::kFloat) return false;
      v.constant = false;  // a UnaryOp, not a Constant
      if (c == '-') {
        if (v.kind == Value::Kind::kFloat)
          v.number = -v.number;
        else if (v.text[0] == '-')
          v.text.erase(0, 1);
        else if (v.text != "0")
          v.text.insert(0, 1, '-');
      }
      return true;
    }
    if (c == '[') {
      ++i_;
      v.kind = Value::Kind::kList;
      return read_items(']', v.items);
    }
    if (c == '(') {
      ++i_;
      v.kind = Value::Kind::kList;
      if (eat(')')) return true;  // ()
      Value first;
      if (!read_value(first)) return false;
      if (eat(')')) {  // (x): just x
        v = std::move(first);
        return true;
      }
      if (!eat(',')) return false;
      v.items.push_back(std::move(first));
      return read_items(')', v.items);
    }
    if (c == '{') {
      ++i_;
      if (eat('}')) {
        v.kind = Value::Kind::kDict;
        return true;
      }
      Value first;
      if (!read_value(first)) return false;
      if (!eat(':')) {  // a set
        v.kind = Value::Kind::kList;
        v.items.push_back(std::move(first));
        if (eat('}')) return true;
        if (!eat(',')) return false;
        return read_items('}', v.items);
      }
      v.kind = Value::Kind::kDict;
      for (Value key = std::move(first);;) {
        if (!key.constant) return false;  // vLLM: dict keys must be literals
        Value val;
        if (!read_value(val)) return false;
        size_t k = 0;
        while (k < v.keys.size() && !same_key(v.keys[k], key)) ++k;
        if (k < v.keys.size()) {
          v.values[k] = std::move(val);
        } else {
          v.keys.push_back(std::move(key));
          v.values.push_back(std::move(val));
        }
        if (eat('}')) return true;
        if (!eat(',')) return false;
        if (eat('}')) return true;
        key = Value();
        if (!read_value(key) || !eat(':')) return false;
      }
    }
    if (py_digit(c) || (c == '.' && i_ + 1 < s_.size() && py_digit(s_[i_ + 1])))
      return read_number(v);
    if (string_start()) return read_strings(v);
    std::string name;
    if (!read_identifier(name)) return false;
    v.constant = name == "True" || name == "False" || name == "None";
    if (name == "True" || name == "true" || name == "False" || name == "false") {
      v.kind = Value::Kind::kBool;
      v.truth = name == "True" || name == "true";
      return true;
    }
    if (name == "None" || name == "null") {
      v.kind = Value::Kind::kNone;
      return true;
    }
    return false;  // any other name is not a literal
  }

  // Values up to `close`, after the first (a trailing comma allowed).
  bool read_items(char close, std::vector<Value>& items) {
    for (;;) {
      if (eat(close)) return true;
      Value v;
      if (!read_value(v)) return false;
      items.push_back(std::move(v));
      if (eat(close)) return true;
      if (!eat(',')) return false;
    }
  }

  // Python's numeric literals; imaginary ones are refused (no JSON form).
  bool read_number(Value& v) {
    v.constant = true;
    const size_t start = i_;
    auto digits = [&](auto ok) {
      // digit (["_"] digit)*
      if (i_ >= s_.size() || !ok(s_[i_])) return false;
      ++i_;
      while (i_ < s_.size()) {
        if (ok(s_[i_])) {
          ++i_;
        } else if (s_[i_] == '_' && i_ + 1 < s_.size() && ok(s_[i_ + 1])) {
          i_ += 2;
        } else {
          break;
        }
      }
      return true;
    };
    auto clean = [&](size_t from, size_t to) {
      std::string t;
      for (size_t k = from; k < to; ++k)
        if (s_[k] != '_') t += s_[k];
      return t;
    };
    if (s_[i_] == '0' && i_ + 1 < s_.size() &&
        std::string_view("xXoObB").find(s_[i_ + 1]) != npos) {
      const char b = static_cast<char>(s_[i_ + 1] | 0x20);
      const int base = b == 'x' ? 16 : b == 'o' ? 8 : 2;
      i_ += 2;
      if (i_ < s_.size() && s_[i_] == '_') ++i_;
      const size_t ds = i_;
      if (!digits([&](char ch) {
            const int h = hex_value(ch);
            return h >= 0 && h < base;
          }))
        return false;
      if (i_ < s_.size() && py_word_byte(s_[i_])) return false;
      v.kind = Value::Kind::kInt;
      v.text = to_decimal(clean(ds, i_), base);
      return true;
    }
    bool is_float = false;
    if (s_[i_] != '.') digits(py_digit);
    if (i_ < s_.size() && s_[i_] == '.') {
      is_float = true;
      ++i_;
      if (i_ < s_.size() && py_digit(s_[i_])) digits(py_digit);
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      size_t k = i_ + 1;
      if (k < s_.size() && (s_[k] == '+' || s_[k] == '-')) ++k;
      if (k < s_.size() && py_digit(s_[k])) {
        is_float = true;
        i_ = k;
        digits(py_digit);
      }
    }
    if (i_ < s_.size() && py_word_byte(s_[i_])) return false;  // 1j, 1abc
    const std::string t = clean(start, i_);
    if (is_float) {
      v.kind = Value::Kind::kFloat;
      v.number = std::strtod(t.c_str(), nullptr);
      return true;
    }
    // "0" may repeat ("00"); other decimals have no leading zero.
    size_t nz = 0;
    while (nz + 1 < t.size() && t[nz] == '0') ++nz;
    if (nz > 0 && t[nz] != '0') return false;
    v.kind = Value::Kind::kInt;
    v.text = t.substr(nz);
    return true;
  }

  // At a string's prefix or quote?
  bool string_start() const {
    size_t k = i_;
    while (k < s_.size() && k - i_ < 2 && std::string_view("rRuUfFbB").find(s_[k]) != npos) ++k;
    return k < s_.size() && (s_[k] == '\'' || s_[k] == '"');
  }

  // One or more adjacent string literals, concatenated.
  bool read_strings(Value& v) {
    v.kind = Value::Kind::kStr;
    v.constant = true;
    bool fstring = false;
    do {
      bool raw = false, f = false, bytes = false, u = false;
      while (s_[i_] != '\'' && s_[i_] != '"') {
        const char p = static_cast<char>(s_[i_] | 0x20);
        raw |= p == 'r';
        f |= p == 'f';
        bytes |= p == 'b';
        u |= p == 'u';
        ++i_;
      }
      if (bytes || (u && (raw || f))) return false;  // bytes have no JSON form; "ur" is invalid
      fstring |= f;
      if (!read_string_body(raw, f, v.text)) return false;
      skip();
    } while (i_ < s_.size() && string_start());
    if (fstring) v.constant = false;  // a JoinedStr
    return true;
  }

  bool read_string_body(bool raw, bool fstring, std::string& out) {
    const char q = s_[i_];
    const bool triple = s_.substr(i_, 3) == std::string(3, q);
    i_ += triple ? 3 : 1;
    for (;;) {
      if (i_ >= s_.size()) return false;
      const char c = s_[i_];
      if (c == q && (!triple || s_.substr(i_, 3) == std::string(3, q))) {
        i_ += triple ? 3 : 1;
        return true;
      }
      if (!triple && (c == '\n' || c == '\r')) return false;
      if (fstring && (c == '{' || c == '}')) {
        // Only doubled braces (literal text); a placeholder is not a literal.
        if (i_ + 1 < s_.size() && s_[i_ + 1] == c) {
          out += c;
          i_ += 2;
          continue;
        }
        return false;
      }
      if (c != '\\') {
        out += c;
        ++i_;
        continue;
      }
      if (i_ + 1 >= s_.size()) return false;
      const char e = s_[i_ + 1];
      if (raw) {  // the backslash stays; it only keeps the next character from ending the string
        out += c;
        out += e;
        i_ += 2;
        continue;
      }
      ++i_;
      uint32_t cp = 0;
      // \N{name} is not read here; a lone surrogate cannot be UTF-8 (JSON).
      if (tok::decode_py_escape(s_, i_, out, &cp) != tok::PyEscape::kOk ||
          (cp >= 0xD800 && cp <= 0xDFFF))
        return false;
    }
  }

  std::string_view s_;
  size_t i_ = 0;
  int depth_ = 0;
};

}  // namespace

bool read_python_call_list(std::string_view text,
                           std::vector<std::pair<std::string, std::string>>& calls) {
  return Reader(text).read_module(calls);
}

}  // namespace vllm::api
