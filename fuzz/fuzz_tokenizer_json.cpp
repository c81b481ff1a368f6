// libFuzzer target: loading tokenizer.json (+ tokenizer_config.json after a NUL byte), then
// encoding and decoding with whatever loaded. A malformed file must be a std::exception with a
// message (the loaders' contract), never a crash, a hang or an allocation beyond the input.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tokenizer/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const char* p = reinterpret_cast<const char*>(data);
  const char* nul = static_cast<const char*>(std::memchr(p, 0, size));
  const std::string tok_json(p, nul ? static_cast<size_t>(nul - p) : size);
  const std::string cfg_json = nul ? std::string(nul + 1, p + size) : std::string("{}");
  std::unique_ptr<vllm::tok::Tokenizer> t;
  try {
    t = vllm::tok::Tokenizer::from_json_text(tok_json, cfg_json);
  } catch (const std::exception&) {
    return 0;
  }
  const std::vector<int32_t> ids =
      t->encode("Hello world! 12345 <|im_end|> \xff\xfe caf\xc3\xa9", true);
  try {
    t->decode(ids, false);
    t->decode(ids, true);
  } catch (const std::out_of_range&) {
  }
  return 0;
}
