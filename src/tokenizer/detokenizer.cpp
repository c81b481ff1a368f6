// IncrementalDetokenizer: byte accumulation with a held-back incomplete UTF-8 tail. The split
// point is always where a lossy decoder is between characters, so emitting the prefix with
// utf8_lossy gives exactly what decoding the whole sequence would.
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace vllm::tok {

std::string IncrementalDetokenizer::step(int32_t id) {
  const std::string_view bytes = tok_.token_bytes(id);  // throws on a bad id
  if (skip_special_ && tok_.is_special(id)) return {};
  pending_ += bytes;
  const size_t hold = utf8_incomplete_tail(pending_);
  std::string out = utf8_lossy(std::string_view(pending_).substr(0, pending_.size() - hold));
  pending_.erase(0, pending_.size() - hold);
  text_ += out;
  return out;
}

std::string IncrementalDetokenizer::finish() {
  std::string out = utf8_lossy(pending_);
  pending_.clear();
  text_ += out;
  return out;
}

}  // namespace vllm::tok
