#include "tokenizer/py_escape.h"

#include "tokenizer/unicode.h"

namespace vllm::tok {

PyEscape decode_py_escape(std::string_view s, size_t& i, std::string& out, uint32_t* hex_cp) {
  const char e = s[i++];
  switch (e) {
    case '\n':
      return PyEscape::kOk;  // a line continuation
    case '\\':
    case '\'':
    case '"':
      out += e;
      return PyEscape::kOk;
    case 'a':
      out += '\a';
      return PyEscape::kOk;
    case 'b':
      out += '\b';
      return PyEscape::kOk;
    case 'f':
      out += '\f';
      return PyEscape::kOk;
    case 'n':
      out += '\n';
      return PyEscape::kOk;
    case 'r':
      out += '\r';
      return PyEscape::kOk;
    case 't':
      out += '\t';
      return PyEscape::kOk;
    case 'v':
      out += '\v';
      return PyEscape::kOk;
    case 'x':
    case 'u':
    case 'U': {
      const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      if (i + n > s.size()) return PyEscape::kTruncated;
      uint32_t cp = 0;
      for (size_t k = 0; k < n; ++k) {
        const char h = s[i + k];
        const int d = h >= '0' && h <= '9'   ? h - '0'
                      : h >= 'a' && h <= 'f' ? h - 'a' + 10
                      : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                             : -1;
        if (d < 0) return PyEscape::kBadHex;
        cp = cp * 16 + static_cast<uint32_t>(d);
      }
      if (cp > 0x10FFFF) return PyEscape::kOutOfRange;
      i += n;
      if (hex_cp) *hex_cp = cp;
      utf8_append(out, cp);
      return PyEscape::kOk;
    }
    case 'N':
      return PyEscape::kNamed;
    default:
      if (e >= '0' && e <= '7') {
        uint32_t cp = static_cast<uint32_t>(e - '0');
        for (int k = 0; k < 2 && i < s.size() && s[i] >= '0' && s[i] <= '7'; ++k, ++i)
          cp = cp * 8 + static_cast<uint32_t>(s[i] - '0');
        utf8_append(out, cp);
      } else {
        out += '\\';
        out += e;
      }
      return PyEscape::kOk;
  }
}

}  // namespace vllm::tok
