// UTF-8 helpers and the Unicode facts the tokenizer needs outside the regex engine:
// lossy decoding (Rust String::from_utf8_lossy semantics), White_Space, and NFC.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vllm::tok {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there do not
// start a valid, complete sequence (overlong, surrogate, > U+10FFFF, truncated).
size_t utf8_valid_len(std::string_view s, size_t i);

// Length of the maximal prefix of s[i..] that could still become a valid sequence if more
// bytes arrived (1..3), or 0 if s[i..] is not a truncated sequence. Only meaningful at the end.
size_t utf8_incomplete_tail(std::string_view s);

// Decodes the code point at s[i] (which must be valid); advances i.
uint32_t utf8_next(std::string_view s, size_t& i);
void utf8_append(std::string& out, uint32_t cp);

// Replaces each maximal invalid subpart with U+FFFD, as Rust's from_utf8_lossy does.
std::string utf8_lossy(std::string_view bytes);
bool utf8_is_valid(std::string_view s);

// Unicode White_Space property (what Rust's char::is_whitespace and Oniguruma's \s use).
bool is_unicode_whitespace(uint32_t cp);

bool is_ascii(std::string_view s);

// Canonical composition (NFC). Input must be valid UTF-8. ASCII-only input returns fast.
std::string nfc_normalize(std::string_view s);
// True when NFC certainly leaves s unchanged: every character is ASCII or a Basic Multilingual
// Plane starter that is its own NFC and that nothing composes with from the left (most text in
// most scripts, accented letters in their usual precomposed form included; not text with
// combining marks or conjoining jamo). False means "maybe".
bool nfc_quick_stable(std::string_view s);
// NFC never makes UTF-8 text shorter than 1 / nfc_max_shrink() of its length (derived from the
// tables: the most bytes that can compose into, or be canonically equivalent to, one output
// character, per byte of that character; e.g. KELVIN SIGN, 3 bytes, is "K").
size_t nfc_max_shrink();
const char* nfc_unicode_version();

}  // namespace vllm::tok
