// Text helpers of the template values (declared in value.h): UTF-8 decoding, encoding and
// counting as Python's str sees it, substring search, Python's whitespace.
#include <cstring>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/value.h"
#include "tokenizer/unicode.h"

namespace vllm::tok::jinja {

namespace {

int utf8_step(unsigned char c) {
  return c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
}

}  // namespace

std::vector<uint32_t> utf8_decode(const std::string& s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (size_t k = 0; k < s.size();) {
    unsigned char c = p[k];
    int len = utf8_step(c);
    uint32_t cp = len == 1 ? c : (c & (0xff >> (len + 1)));
    for (int m = 1; m < len && k + m < s.size(); ++m) cp = (cp << 6) | (p[k + m] & 0x3f);
    out.push_back(cp);
    k += len;
  }
  return out;
}

int64_t utf8_length(const std::string& s) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  int64_t n = 0;
  ScanCharge charge;
  for (size_t k = 0; k < s.size(); k += utf8_step(p[k])) {
    ++n;
    charge.at(k);
  }
  charge.done(s.size());
  return n;
}

size_t find_substr(const std::string& s, const std::string& sub, size_t pos) {
  // Short needles: std::string::find (a memchr scan, at most 16 compares a position) is
  // cheaper per call than memmem's set-up, which split() into millions of pieces pays each time.
  if (sub.size() <= 16) return s.find(sub, pos);
  if (pos > s.size()) return std::string::npos;
  const void* p = ::memmem(s.data() + pos, s.size() - pos, sub.data(), sub.size());
  return p ? static_cast<size_t>(static_cast<const char*>(p) - s.data()) : std::string::npos;
}

ReverseFinder::ReverseFinder(const std::string& s, const std::string& sub) : s_(s), sub_(sub) {
  if (sub.size() <= 16 || sub.size() > s.size()) return;
  rs_.assign(s.rbegin(), s.rend());
  rsub_.assign(sub.rbegin(), sub.rend());
}

size_t ReverseFinder::find(size_t pos) const {
  if (rsub_.empty()) return s_.rfind(sub_, pos);
  const size_t n = s_.size(), m = sub_.size();
  // A match starting at p <= pos ends at or before p + m; in the reversed string it starts at
  // n - (p + m) >= n - (pos + m).
  const size_t from = pos >= n - m ? 0 : n - m - pos;
  const void* q = ::memmem(rs_.data() + from, n - from, rsub_.data(), m);
  if (!q) return std::string::npos;
  return n - m - static_cast<size_t>(static_cast<const char*>(q) - rs_.data());
}

std::string utf8_char_at(const std::string& s, int64_t idx) {
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  size_t k = 0;
  ScanCharge charge;
  for (int64_t n = 0; n < idx && k < s.size(); ++n) {
    k += utf8_step(p[k]);
    charge.at(k);
  }
  charge.done(k);
  if (k >= s.size()) return {};
  std::vector<uint32_t> one = utf8_decode(s.substr(k, utf8_step(p[k])));
  return one.empty() ? std::string() : utf8_encode(one, 0, 1);
}

std::string utf8_encode(const std::vector<uint32_t>& cps, size_t begin, size_t end) {
  std::string out;
  for (size_t k = begin; k < end && k < cps.size(); ++k) utf8_append(out, cps[k]);
  return out;
}

bool is_py_space(uint32_t cp) {
  if (cp == ' ' || (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x1f)) return true;
  switch (cp) {
    case 0x85:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200a;
  }
}

}  // namespace vllm::tok::jinja
