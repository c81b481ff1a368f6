// A compiled Unicode regular expression (PCRE2, UTF + UCP, JIT) with the one operation the
// pre-tokenizers need: all non-overlapping leftmost matches. Patterns are written for
// Hugging Face's Oniguruma; \s and \S are rewritten to Unicode White_Space, which is what
// Oniguruma means by them (PCRE2's UCP \s misses U+0085).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vllm::tok {

class Regex {
 public:
  // Throws std::invalid_argument naming the pattern and PCRE2's error.
  explicit Regex(const std::string& pattern, bool literal = false);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Appends [begin, end) of every match, scanning left to right; text must be valid UTF-8.
  void find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const;
  const std::string& pattern() const { return pattern_; }

  static std::string rewrite_whitespace_classes(const std::string& pattern);

 private:
  std::string pattern_;
  void* code_ = nullptr;  // pcre2_code_8*
  bool jit_ = false;
};

}  // namespace vllm::tok
