// Simple Unicode case mapping for Python's str.upper()/lower()/title() on the scripts chat
// content commonly uses (Latin-1, Latin Extended-A, Greek, Cyrillic, fullwidth Latin).
// One code point to one code point; the one multi-character mapping templates meet (ß -> SS)
// is handled by the callers.
#pragma once

#include <cstdint>

namespace vllm::tok::jinja {

uint32_t unicode_upper(uint32_t cp);
uint32_t unicode_lower(uint32_t cp);

}  // namespace vllm::tok::jinja
