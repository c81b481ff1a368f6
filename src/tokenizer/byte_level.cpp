// GPT-2 bytes_to_unicode table: printable Latin-1 bytes stand for themselves, the other 68
// bytes take code points 256.. in byte order.
#include "tokenizer/byte_level.h"

#include "tokenizer/unicode.h"

namespace vllm::tok {

const ByteLevel& ByteLevel::get() {
  static const ByteLevel instance;
  return instance;
}

ByteLevel::ByteLevel() {
  for (auto& d : dec_) d = -1;
  uint32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE);
    const uint32_t cp = printable ? static_cast<uint32_t>(b) : next++;
    utf8_append(enc_[b], cp);
    dec_[cp] = static_cast<int16_t>(b);
  }
}

std::string ByteLevel::encode(std::string_view bytes) const {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) out += enc_[static_cast<uint8_t>(c)];
  return out;
}

std::string ByteLevel::decode_token(std::string_view token) const {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size();) {
    const size_t n = utf8_valid_len(token, i);
    if (n == 0) return std::string(token);
    size_t j = i;
    const uint32_t cp = utf8_next(token, j);
    if (cp >= 324 || dec_[cp] < 0) return std::string(token);
    out.push_back(static_cast<char>(dec_[cp]));
    i = j;
  }
  return out;
}

}  // namespace vllm::tok
