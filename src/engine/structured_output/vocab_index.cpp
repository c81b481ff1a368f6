// Sorting the vocabulary into its implicit trie.
#include "engine/structured_output/vocab_index.h"

#include <algorithm>
#include <numeric>

#include "engine/structured_output/grammar.h"
#include "tokenizer/tokenizer.h"

namespace vllm::engine::so {

std::shared_ptr<const VocabIndex> VocabIndex::build(const tok::Tokenizer& tok) {
  return build(tok, tok.stop_ids());
}

std::shared_ptr<const VocabIndex> VocabIndex::build(const tok::Tokenizer& tok,
                                                    std::vector<int32_t> stop_ids) {
  const int32_t n = tok.vocab_size();
  std::vector<std::string> bytes(n);
  std::vector<bool> excluded(n, false);
  std::vector<bool> stop(n, false);
  for (int32_t s : stop_ids)
    if (s >= 0 && s < n) stop[s] = true;
  for (int32_t i = 0; i < n; ++i) {
    // Special and stop tokens (EOS, <|im_end|>, ...) are control symbols, not text the
    // grammar spells, even where the tokenizer does not flag them special.
    if (tok.is_special(i) || stop[i]) {
      excluded[i] = true;
      continue;
    }
    bytes[i] = std::string(tok.token_bytes(i));
  }
  auto v = std::make_shared<VocabIndex>();
  v->finish(bytes, excluded, std::move(stop_ids));
  return v;
}

std::shared_ptr<const VocabIndex> VocabIndex::from_strings(const std::vector<std::string>& tokens,
                                                           std::vector<int32_t> stop_ids) {
  std::vector<bool> excluded(tokens.size(), false);
  for (int32_t s : stop_ids)
    if (s >= 0 && s < static_cast<int32_t>(tokens.size())) excluded[s] = true;
  auto v = std::make_shared<VocabIndex>();
  v->finish(tokens, excluded, std::move(stop_ids));
  return v;
}

void VocabIndex::finish(const std::vector<std::string>& bytes_by_id,
                        const std::vector<bool>& excluded, std::vector<int32_t> stop_ids) {
  vocab_size_ = static_cast<int32_t>(bytes_by_id.size());
  std::vector<int32_t> ids;
  for (int32_t i = 0; i < vocab_size_; ++i)
    if (!excluded[i] && !bytes_by_id[i].empty()) ids.push_back(i);
  std::sort(ids.begin(), ids.end(), [&](int32_t a, int32_t b) {
    const int c = bytes_by_id[a].compare(bytes_by_id[b]);
    return c != 0 ? c < 0 : a < b;
  });
  sorted_ids_ = ids;
  pos_.assign(vocab_size_, -1);
  lcp_.assign(ids.size(), 0);
  off_.assign(ids.size() + 1, 0);
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::string& s = bytes_by_id[ids[i]];
    pos_[ids[i]] = static_cast<int32_t>(i);
    blob_ += s;
    off_[i + 1] = static_cast<uint32_t>(blob_.size());
    max_len_ = std::max<int32_t>(max_len_, static_cast<int32_t>(s.size()));
    if (i > 0) {
      const std::string& p = bytes_by_id[ids[i - 1]];
      size_t k = 0;
      while (k < s.size() && k < p.size() && s[k] == p[k]) ++k;
      lcp_[i] = static_cast<uint16_t>(std::min<size_t>(k, 65535));
    }
  }
  for (size_t i = 0; i < ids.size(); ++i)
    first_end_[static_cast<uint8_t>(blob_[off_[i]])] = static_cast<int32_t>(i + 1);
  for (int b = 1; b < 256; ++b) first_end_[b] = std::max(first_end_[b], first_end_[b - 1]);
  stop_.assign(vocab_size_, 0);
  for (int32_t s : stop_ids) {
    if (s < 0 || s >= vocab_size_)
      throw GrammarError("stop token id " + std::to_string(s) + " is outside the vocabulary");
    stop_[s] = 1;
  }
  std::sort(stop_ids.begin(), stop_ids.end());
  stop_ids.erase(std::unique(stop_ids.begin(), stop_ids.end()), stop_ids.end());
  stop_ids_ = std::move(stop_ids);
}

size_t VocabIndex::memory_bytes() const {
  return sorted_ids_.size() * 4 + pos_.size() * 4 + lcp_.size() * 2 + blob_.size() +
         off_.size() * 4 + stop_.size();
}

}  // namespace vllm::engine::so
