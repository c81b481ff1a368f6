// UTF-8 validation/lossy decoding, White_Space and NFC (tables in unicode_nfc_data.cpp).
#include "tokenizer/unicode.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "tokenizer/unicode_nfc_data.h"

namespace vllm::tok {
namespace {

// Scans one sequence at s[i] following Unicode Table 3-7. Returns the number of bytes that
// belong to it: the full length when complete (complete = true), otherwise the length of the
// maximal subpart (>= 1), which is what one U+FFFD replaces.
size_t utf8_scan(std::string_view s, size_t i, bool& complete) {
  complete = false;
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) {
    complete = true;
    return 1;
  }
  size_t need;
  uint8_t lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    need = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    need = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    need = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 1;
  }
  size_t k = 1;
  for (; k < need; ++k) {
    if (i + k >= s.size()) return k;
    const auto b = static_cast<uint8_t>(s[i + k]);
    const uint8_t l = k == 1 ? lo : 0x80, h = k == 1 ? hi : 0xBF;
    if (b < l || b > h) return k;
  }
  complete = true;
  return need;
}

constexpr uint32_t kSBase = 0xAC00, kLBase = 0x1100, kVBase = 0x1161, kTBase = 0x11A7;
constexpr uint32_t kLCount = 19, kVCount = 21, kTCount = 28, kNCount = kVCount * kTCount,
                   kSCount = kLCount * kNCount;

uint8_t ccc_search(uint32_t cp) {
  const auto* end = nfc_data::kCcc + nfc_data::kCccSize;
  const auto* it = std::lower_bound(
      nfc_data::kCcc, end, cp, [](const nfc_data::CccEntry& e, uint32_t c) { return e.cp < c; });
  return it != end && it->cp == cp ? it->ccc : 0;
}

// Returns the primary composite of (a, b) or 0.
uint32_t compose(uint32_t a, uint32_t b) {
  if (a >= kLBase && a < kLBase + kLCount && b >= kVBase && b < kVBase + kVCount)
    return kSBase + ((a - kLBase) * kVCount + (b - kVBase)) * kTCount;
  if (a >= kSBase && a < kSBase + kSCount && (a - kSBase) % kTCount == 0 && b > kTBase &&
      b < kTBase + kTCount)
    return a + (b - kTBase);
  const auto* end = nfc_data::kComp + nfc_data::kCompSize;
  const auto* it =
      std::lower_bound(nfc_data::kComp, end, std::make_pair(a, b),
                       [](const nfc_data::CompEntry& e, std::pair<uint32_t, uint32_t> k) {
                         return std::make_pair(e.first, e.second) < k;
                       });
  return it != end && it->first == a && it->second == b ? it->composite : 0;
}

// The Basic Multilingual Plane's NFC facts as direct lookups, built on first use: NFC of
// non-Latin text used to spend most of its time in binary searches of the tables.
constexpr uint8_t kDecomposes = 1, kComposesBackward = 2, kRecomposes = 4;
struct BmpFacts {
  uint8_t ccc[0x10000];
  uint8_t flags[0x10000];
};

const BmpFacts& bmp() {
  static const std::unique_ptr<BmpFacts> facts = [] {
    auto f = std::make_unique<BmpFacts>();
    std::fill(std::begin(f->ccc), std::end(f->ccc), 0);
    std::fill(std::begin(f->flags), std::end(f->flags), 0);
    for (size_t i = 0; i < nfc_data::kCccSize; ++i) {
      if (nfc_data::kCcc[i].cp < 0x10000) f->ccc[nfc_data::kCcc[i].cp] = nfc_data::kCcc[i].ccc;
    }
    for (size_t i = 0; i < nfc_data::kDecompSize; ++i) {
      if (nfc_data::kDecomp[i].cp < 0x10000) f->flags[nfc_data::kDecomp[i].cp] |= kDecomposes;
    }
    for (size_t i = 0; i < nfc_data::kCompSize; ++i) {
      if (nfc_data::kComp[i].second < 0x10000)
        f->flags[nfc_data::kComp[i].second] |= kComposesBackward;
    }
    for (uint32_t cp = kSBase; cp < kSBase + kSCount; ++cp) f->flags[cp] |= kDecomposes;
    for (uint32_t cp = kVBase; cp < kVBase + kVCount; ++cp) f->flags[cp] |= kComposesBackward;
    for (uint32_t cp = kTBase + 1; cp < kTBase + kTCount; ++cp) f->flags[cp] |= kComposesBackward;
    // A precomposed starter whose decomposition composes straight back to it (é, most Hangul
    // and Vietnamese letters, ...) is left alone by NFC when no mark follows it.
    auto recomposes = [&](uint32_t cp, const uint32_t* d, size_t n) {
      if (f->ccc[cp] != 0 || d[0] >= 0x10000 || f->ccc[d[0]] != 0 ||
          (f->flags[d[0]] & kComposesBackward))
        return false;
      uint32_t acc = d[0];
      for (size_t k = 1; k < n && acc != 0; ++k) acc = compose(acc, d[k]);
      return acc == cp;
    };
    for (size_t i = 0; i < nfc_data::kDecompSize; ++i) {
      const auto& e = nfc_data::kDecomp[i];
      if (e.cp < 0x10000 && recomposes(e.cp, nfc_data::kDecompData + e.offset, e.length))
        f->flags[e.cp] |= kRecomposes;
    }
    for (uint32_t cp = kSBase; cp < kSBase + kSCount; ++cp) {
      const uint32_t s = cp - kSBase;
      const uint32_t d[3] = {kLBase + s / kNCount, kVBase + (s % kNCount) / kTCount,
                             kTBase + s % kTCount};
      if (recomposes(cp, d, s % kTCount ? 3 : 2)) f->flags[cp] |= kRecomposes;
    }
    return f;
  }();
  return *facts;
}

uint8_t ccc_of(uint32_t cp) {
  if (cp < 0x300) return 0;
  return cp < 0x10000 ? bmp().ccc[cp] : ccc_search(cp);
}

// Unknown (outside the BMP) counts as "may compose": the exact path handles it.
bool may_compose_backward(uint32_t cp) {
  return cp >= 0x10000 || (bmp().flags[cp] & kComposesBackward);
}

// NFC leaves a string of inert characters as it is: each is a starter that nothing before it
// composes with, and that is its own NFC.
bool inert(uint32_t cp) {
  if (cp >= 0x10000 || bmp().ccc[cp] != 0) return false;
  const uint8_t f = bmp().flags[cp];
  return !(f & kComposesBackward) && (!(f & kDecomposes) || (f & kRecomposes));
}

void decompose(uint32_t cp, std::vector<uint32_t>& out) {
  if (cp >= kSBase && cp < kSBase + kSCount) {
    const uint32_t s = cp - kSBase;
    out.push_back(kLBase + s / kNCount);
    out.push_back(kVBase + (s % kNCount) / kTCount);
    if (s % kTCount) out.push_back(kTBase + s % kTCount);
    return;
  }
  if (cp >= 0xC0 && (cp >= 0x10000 || (bmp().flags[cp] & kDecomposes))) {
    const auto* end = nfc_data::kDecomp + nfc_data::kDecompSize;
    const auto* it =
        std::lower_bound(nfc_data::kDecomp, end, cp,
                         [](const nfc_data::DecompEntry& e, uint32_t c) { return e.cp < c; });
    if (it != end && it->cp == cp) {
      out.insert(out.end(), nfc_data::kDecompData + it->offset,
                 nfc_data::kDecompData + it->offset + it->length);
      return;
    }
  }
  out.push_back(cp);
}

// Stable-sorts each run of non-starters by combining class. Runs are almost always sorted
// already; an unsorted one is counting-sorted (256 classes), so a long run of marks costs
// linear time.
void canonical_order(std::vector<uint32_t>& cps) {
  std::vector<uint32_t> tmp;
  for (size_t i = 0; i < cps.size();) {
    if (ccc_of(cps[i]) == 0) {
      ++i;
      continue;
    }
    size_t j = i;
    bool sorted = true;
    for (uint8_t prev = 0; j < cps.size(); ++j) {
      const uint8_t c = ccc_of(cps[j]);
      if (c == 0) break;
      sorted = sorted && c >= prev;
      prev = c;
    }
    if (!sorted) {
      size_t start[257] = {};
      for (size_t k = i; k < j; ++k) ++start[ccc_of(cps[k]) + 1];
      for (size_t c = 1; c <= 256; ++c) start[c] += start[c - 1];
      tmp.resize(j - i);
      for (size_t k = i; k < j; ++k) tmp[start[ccc_of(cps[k])]++] = cps[k];
      std::copy(tmp.begin(), tmp.end(), cps.begin() + static_cast<ptrdiff_t>(i));
    }
    i = j;
  }
}

}  // namespace

size_t utf8_valid_len(std::string_view s, size_t i) {
  bool complete;
  const size_t n = utf8_scan(s, i, complete);
  return complete ? n : 0;
}

size_t utf8_incomplete_tail(std::string_view s) {
  // A truncated sequence is at most 3 bytes long and starts at a lead byte.
  for (size_t back = 1; back <= 3 && back <= s.size(); ++back) {
    const size_t i = s.size() - back;
    const auto b = static_cast<uint8_t>(s[i]);
    if ((b & 0xC0) == 0x80) continue;
    bool complete;
    const size_t n = utf8_scan(s, i, complete);
    return !complete && i + n == s.size() ? back : 0;
  }
  return 0;
}

uint32_t utf8_next(std::string_view s, size_t& i) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  const size_t n = b0 >= 0xF0 ? 4 : b0 >= 0xE0 ? 3 : 2;
  uint32_t cp = b0 & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<uint8_t>(s[i + k]) & 0x3F);
  i += n;
  return cp;
}

void utf8_append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

std::string utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    bool complete;
    const size_t n = utf8_scan(bytes, i, complete);
    if (complete) {
      out.append(bytes.substr(i, n));
    } else {
      out.append("\xEF\xBF\xBD");
    }
    i += n;
  }
  return out;
}

bool utf8_is_valid(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_valid_len(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

bool is_unicode_whitespace(uint32_t cp) {
  if (cp <= 0x20) return cp == 0x20 || (cp >= 0x09 && cp <= 0x0D);
  if (cp < 0x85) return false;
  return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
         cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool is_ascii(std::string_view s) {
  // No early exit: the plain OR over all bytes vectorizes.
  uint8_t any = 0;
  for (char c : s) any |= static_cast<uint8_t>(c);
  return any < 0x80;
}

bool nfc_quick_stable(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<uint8_t>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    if (!inert(utf8_next(s, i))) return false;
  }
  return true;
}

std::string nfc_normalize(std::string_view s) {
  if (nfc_quick_stable(s)) return std::string(s);
  std::vector<uint32_t> cps;
  cps.reserve(s.size());
  for (size_t i = 0; i < s.size();) decompose(utf8_next(s, i), cps);
  canonical_order(cps);
  // Canonical composition.
  std::vector<uint32_t> out;
  out.reserve(cps.size());
  ptrdiff_t starter = -1;
  int last_ccc = 0;  // class of the last character kept after the starter
  for (uint32_t cp : cps) {
    const int ccc = ccc_of(cp);
    if (starter >= 0 && may_compose_backward(cp)) {
      const bool adjacent = out.size() == static_cast<size_t>(starter) + 1;
      if (adjacent || (last_ccc != 0 && last_ccc < ccc)) {
        if (const uint32_t c = compose(out[starter], cp)) {
          out[starter] = c;
          continue;
        }
      }
    }
    if (ccc == 0) starter = static_cast<ptrdiff_t>(out.size());
    last_ccc = ccc;
    out.push_back(cp);
  }
  std::string r;
  r.reserve(s.size());
  for (uint32_t cp : out) utf8_append(r, cp);
  return r;
}

size_t nfc_max_shrink() {
  // Each input character is charged to the first character of its full decomposition, so the
  // input behind one output character o is at most the sum, over o's decomposition, of the
  // longest character whose decomposition starts there (src below).
  static const size_t value = [] {
    auto bytes = [](uint32_t cp) -> size_t {
      return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    };
    std::vector<std::pair<uint32_t, size_t>> src;  // (first character, longest source), unsorted
    for (size_t i = 0; i < nfc_data::kDecompSize; ++i) {
      const auto& d = nfc_data::kDecomp[i];
      src.emplace_back(nfc_data::kDecompData[d.offset], bytes(d.cp));
    }
    for (uint32_t l = 0; l < kLCount; ++l) src.emplace_back(kLBase + l, 3);  // Hangul syllables
    std::sort(src.begin(), src.end());
    auto longest_source = [&](uint32_t cp) {
      size_t best = bytes(cp);
      auto it = std::lower_bound(src.begin(), src.end(), std::make_pair(cp, size_t{0}));
      for (; it != src.end() && it->first == cp; ++it) best = std::max(best, it->second);
      return best;
    };
    size_t num = 1, den = 1;  // the largest ratio seen, as a fraction
    auto consider = [&](size_t in, size_t out) {
      if (in * den > num * out) num = in, den = out;
    };
    for (const auto& [cp, len] : src) consider(longest_source(cp), bytes(cp));
    for (size_t i = 0; i < nfc_data::kDecompSize; ++i) {
      const auto& d = nfc_data::kDecomp[i];
      size_t in = 0;
      for (uint32_t k = 0; k < d.length; ++k)
        in += longest_source(nfc_data::kDecompData[d.offset + k]);
      consider(in, bytes(d.cp));
    }
    // A Hangul LVT syllable: three 3-byte jamo (or an LV syllable and a T) into 3 bytes.
    consider(longest_source(kLBase) + longest_source(kVBase) + longest_source(kTBase + 1), 3);
    return (num + den - 1) / den;
  }();
  return value;
}

const char* nfc_unicode_version() { return nfc_data::kUnicodeVersion; }

}  // namespace vllm::tok
