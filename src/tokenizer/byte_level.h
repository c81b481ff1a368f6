// GPT-2 byte-level alphabet: every byte maps to one printable code point so that BPE
// vocabularies can be stored as text. Owns both directions of that mapping.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vllm::tok {

class ByteLevel {
 public:
  static const ByteLevel& get();

  // UTF-8 of the code point standing for byte b.
  const std::string& encode_byte(uint8_t b) const { return enc_[b]; }
  std::string encode(std::string_view bytes) const;

  // Maps a vocabulary string back to raw bytes. As Hugging Face's ByteLevel decoder does, a
  // string holding any character outside the alphabet is returned unchanged (its own UTF-8).
  std::string decode_token(std::string_view token) const;

 private:
  ByteLevel();
  std::string enc_[256];
  int16_t dec_[324];  // code point -> byte, -1 when not in the alphabet (all are < 324)
};

}  // namespace vllm::tok
