// A compiled Unicode regular expression (PCRE2, UTF + UCP, JIT) with the one operation the
// pre-tokenizers need: the non-overlapping leftmost matches, one at a time or all at once. Patterns
// are written for Hugging Face's Oniguruma; \s and \S are rewritten to Unicode White_Space, which
// is what Oniguruma means by them (PCRE2's UCP \s misses U+0085).
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

  // The next non-empty match at or after pos, scanning left to right as find_all does: on
  // success sets [begin, end) and moves pos to end. Text must be valid UTF-8. Allocates nothing
  // (per-thread match data), so lazy callers pay only for the matches they consume.
  bool find(std::string_view text, size_t& pos, size_t& begin, size_t& end) const;
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
