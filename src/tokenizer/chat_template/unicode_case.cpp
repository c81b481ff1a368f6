// Case tables as ranges: each script pairs its capitals and smalls either at a fixed offset or
// as alternating even/odd code points.
#include "tokenizer/chat_template/unicode_case.h"

namespace vllm::tok::jinja {
namespace {

struct OffsetRange {
  uint32_t upper_first, upper_last;
  int32_t delta;  // lower = upper + delta
};

// Capital ranges whose small letters sit at a fixed distance.
constexpr OffsetRange kOffset[] = {
    {0x41, 0x5a, 32},   {0xc0, 0xd6, 32},     {0xd8, 0xde, 32},
    {0x391, 0x3a1, 32}, {0x3a3, 0x3ab, 32},   {0x410, 0x42f, 32},
    {0x400, 0x40f, 80}, {0xff21, 0xff3a, 32}, {0x388, 0x38a, 37},
};

// Ranges where capital/small alternate (capital first on `even_upper` parity).
struct PairRange {
  uint32_t first, last;
  bool upper_on_even;
};
constexpr PairRange kPairs[] = {
    {0x100, 0x12f, true},  {0x132, 0x137, true},   {0x139, 0x148, false},  {0x14a, 0x177, true},
    {0x179, 0x17e, false}, {0x3d8, 0x3ef, true},   {0x460, 0x481, true},   {0x48a, 0x4bf, true},
    {0x4d0, 0x52f, true},  {0x1e00, 0x1e95, true}, {0x1ea0, 0x1eff, true},
};

}  // namespace

uint32_t unicode_lower(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
  for (const auto& r : kOffset)
    if (cp >= r.upper_first && cp <= r.upper_last) return cp + r.delta;
  for (const auto& r : kPairs)
    if (cp >= r.first && cp <= r.last) return ((cp % 2 == 0) == r.upper_on_even) ? cp + 1 : cp;
  switch (cp) {
    case 0x178:
      return 0xff;
    case 0x130:
      return 0x69;
    case 0x386:
      return 0x3ac;
    case 0x38c:
      return 0x3cc;
    case 0x38e:
      return 0x3cd;
    case 0x38f:
      return 0x3ce;
    default:
      return cp;
  }
}

uint32_t unicode_upper(uint32_t cp) {
  if (cp < 0x80) return (cp >= 'a' && cp <= 'z') ? cp - 32 : cp;
  for (const auto& r : kOffset)
    if (cp >= r.upper_first + r.delta && cp <= r.upper_last + r.delta) return cp - r.delta;
  for (const auto& r : kPairs)
    if (cp >= r.first && cp <= r.last) return ((cp % 2 == 0) == r.upper_on_even) ? cp : cp - 1;
  switch (cp) {
    case 0xff:
      return 0x178;
    case 0xb5:
      return 0x39c;
    case 0x131:
      return 0x49;
    case 0x17f:
      return 0x53;
    case 0x3c2:
      return 0x3a3;
    case 0x3ac:
      return 0x386;
    case 0x3cc:
      return 0x38c;
    case 0x3cd:
      return 0x38e;
    case 0x3ce:
      return 0x38f;
    default:
      return cp;
  }
}

}  // namespace vllm::tok::jinja
