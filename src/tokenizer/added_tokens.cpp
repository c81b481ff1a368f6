// Trie-based leftmost-longest matching of added tokens (the semantics of Hugging Face's
// Aho-Corasick LeftmostLongest search plus its single_word / lstrip / rstrip rules).
#include "tokenizer/added_tokens.h"

#include <algorithm>
#include <map>

#include "tokenizer/unicode.h"

namespace vllm::tok {
namespace {

bool is_word_char(uint32_t cp) {
  // Rust regex \w: alphanumeric, marks, connector punctuation. ASCII-exact, approximate above.
  if (cp < 0x80)
    return (cp >= '0' && cp <= '9') || (cp >= 'a' && cp <= 'z') || (cp >= 'A' && cp <= 'Z') ||
           cp == '_';
  return !is_unicode_whitespace(cp);
}

uint32_t last_cp(std::string_view s) {
  size_t i = s.size();
  while (i > 0 && (static_cast<uint8_t>(s[i - 1]) & 0xC0) == 0x80) --i;
  if (i > 0) --i;
  size_t j = i;
  return utf8_valid_len(s, i) ? utf8_next(s, j) : 0xFFFD;
}

uint32_t first_cp(std::string_view s) {
  size_t j = 0;
  return utf8_valid_len(s, 0) ? utf8_next(s, j) : 0xFFFD;
}

}  // namespace

void AddedTokenMatcher::build(const std::vector<AddedToken>& tokens, bool normalized_set) {
  tokens_.clear();
  for (const auto& t : tokens) {
    if (t.normalized == normalized_set && !t.content.empty()) tokens_.push_back(t);
  }
  // Build a map-based trie first, then flatten it into sorted edge arrays.
  struct Tmp {
    std::map<uint8_t, int32_t> kids;
    int32_t token = -1;
  };
  std::vector<Tmp> tmp(1);
  for (size_t k = 0; k < tokens_.size(); ++k) {
    int32_t n = 0;
    for (char ch : tokens_[k].content) {
      const auto b = static_cast<uint8_t>(ch);
      auto it = tmp[n].kids.find(b);
      if (it == tmp[n].kids.end()) {
        tmp.push_back({});
        it = tmp[n].kids.emplace(b, static_cast<int32_t>(tmp.size() - 1)).first;
      }
      n = it->second;
    }
    if (tmp[n].token < 0) tmp[n].token = static_cast<int32_t>(k);
  }
  nodes_.assign(tmp.size(), Node{});
  edges_.clear();
  for (size_t i = 0; i < tmp.size(); ++i) {
    nodes_[i].token = tmp[i].token;
    nodes_[i].child_begin = static_cast<int32_t>(edges_.size());
    nodes_[i].child_count = static_cast<int32_t>(tmp[i].kids.size());
    for (auto [b, n] : tmp[i].kids) edges_.push_back(Edge{b, n});
  }
  std::fill(std::begin(first_byte_), std::end(first_byte_), false);
  for (const auto& t : tokens_) first_byte_[static_cast<uint8_t>(t.content[0])] = true;
}

void AddedTokenMatcher::split(std::string_view text, std::vector<TextSegment>& out) const {
  if (tokens_.empty()) {
    if (!text.empty()) out.push_back({text, -1});
    return;
  }
  size_t seg_start = 0;  // start of the pending text segment
  size_t i = 0;
  while (i < text.size()) {
    if (!first_byte_[static_cast<uint8_t>(text[i])]) {
      ++i;
      continue;
    }
    // Longest token starting at i.
    int32_t node = 0, best = -1;
    size_t best_end = 0;
    for (size_t j = i; j < text.size(); ++j) {
      const Node& nd = nodes_[node];
      const auto b = static_cast<uint8_t>(text[j]);
      const Edge* e = edges_.data() + nd.child_begin;
      const Edge* end = e + nd.child_count;
      const Edge* it =
          std::lower_bound(e, end, b, [](const Edge& x, uint8_t v) { return x.byte < v; });
      if (it == end || it->byte != b) break;
      node = it->node;
      if (nodes_[node].token >= 0) {
        best = nodes_[node].token;
        best_end = j + 1;
      }
    }
    if (best < 0) {
      ++i;
      continue;
    }
    const AddedToken& t = tokens_[best];
    size_t start = i, stop = best_end;
    if (t.single_word) {
      const bool left_ok = start == 0 || !is_word_char(last_cp(text.substr(0, start)));
      const bool right_ok = stop == text.size() || !is_word_char(first_cp(text.substr(stop)));
      if (!left_ok || !right_ok) {
        i = stop;  // the search resumes after a rejected match, like Hugging Face's
        continue;
      }
    }
    if (t.lstrip) {
      while (start > seg_start) {
        const uint32_t cp = last_cp(text.substr(0, start));
        if (!is_unicode_whitespace(cp)) break;
        size_t k = start - 1;
        while (k > seg_start && (static_cast<uint8_t>(text[k]) & 0xC0) == 0x80) --k;
        start = k;
      }
    }
    if (t.rstrip) {
      while (stop < text.size()) {
        const uint32_t cp = first_cp(text.substr(stop));
        if (!is_unicode_whitespace(cp)) break;
        size_t k = stop;
        utf8_next(text, k);
        stop = k;
      }
    }
    if (start > seg_start) out.push_back({text.substr(seg_start, start - seg_start), -1});
    out.push_back({text.substr(start, stop - start), t.id});
    seg_start = i = stop;
  }
  if (seg_start < text.size()) out.push_back({text.substr(seg_start), -1});
}

}  // namespace vllm::tok
