// libFuzzer target: BPE encode / decode of arbitrary bytes with the real Qwen3 tokenizer.
// Checks the streaming detokenizer's contract: its pieces plus finish() equal decode() of the
// same ids, for the ids encode produced and for arbitrary ids taken from the input.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "tokenizer/tokenizer.h"

namespace {

const vllm::tok::Tokenizer& qwen3() {
  static const auto t = vllm::tok::Tokenizer::from_files(
      VLLM_SOURCE_DIR "/../shared/fixtures/qwen3-tokenizer/tokenizer.json",
      VLLM_SOURCE_DIR "/../shared/fixtures/qwen3-tokenizer/tokenizer_config.json");
  return *t;
}

void check_stream(const vllm::tok::Tokenizer& t, const std::vector<int32_t>& ids, bool skip) {
  std::string whole;
  try {
    whole = t.decode(ids, skip);
  } catch (const std::out_of_range&) {
    return;
  }
  vllm::tok::IncrementalDetokenizer d(t, skip);
  std::string pieces;
  for (int32_t id : ids) pieces += d.step(id);
  pieces += d.finish();
  if (pieces != whole) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto& t = qwen3();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::vector<int32_t> ids = t.encode(text, size > 0 && (data[0] & 1));
  check_stream(t, ids, false);
  check_stream(t, ids, true);
  std::vector<int32_t> raw;
  for (size_t i = 0; i + 4 <= size && raw.size() < 256; i += 4) {
    int32_t v;
    std::memcpy(&v, data + i, 4);
    raw.push_back(static_cast<int32_t>(static_cast<uint32_t>(v) % (t.vocab_size() + 16u)));
  }
  check_stream(t, raw, false);
  return 0;
}
