// PCRE2-backed regex: compile once (JIT when available), match with per-thread match data so
// one Regex can serve many threads.
#include "tokenizer/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <cstdint>
#include <stdexcept>

namespace vllm::tok {
namespace {

constexpr const char* kWs = "\\t-\\r\\x{85}\\p{Z}";  // Unicode White_Space, as a class body

// Match data and context are reused across calls on a thread: creating them per call cost
// more than matching a short piece. One ovector pair is enough, as only the whole match is read
// (PCRE2 then returns 0 for a pattern with groups, which still means a match).
struct MatchScratch {
  pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  MatchScratch() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~MatchScratch() {
    pcre2_match_data_free(data);
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
  }
};

MatchScratch& match_scratch() {
  thread_local MatchScratch s;
  return s;
}

}  // namespace

std::string Regex::rewrite_whitespace_classes(const std::string& p) {
  std::string out;
  out.reserve(p.size() + 32);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[++i];
      if (n == 's') {
        out += in_class ? std::string(kWs) : "[" + std::string(kWs) + "]";
      } else if (n == 'S' && !in_class) {
        out += "[^" + std::string(kWs) + "]";
      } else {
        out += c;
        out += n;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      // A ']' right after '[' or '[^' is a literal member.
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      const size_t e = p.find(":]", i + 2);
      if (e != std::string::npos) {
        out.append(p, i, e + 2 - i);
        i = e + 1;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out += c;
  }
  return out;
}

Regex::Regex(const std::string& pattern, bool literal) : pattern_(pattern) {
  const std::string compiled = literal ? pattern : rewrite_whitespace_classes(pattern);
  int err = 0;
  PCRE2_SIZE off = 0;
  uint32_t opts = PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK;
  if (literal) opts |= PCRE2_LITERAL;
  auto* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(compiled.data()), compiled.size(), opts,
                             &err, &off, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(err, msg, sizeof(msg));
    throw std::invalid_argument("cannot compile pre-tokenizer regex '" + pattern + "' at offset " +
                                std::to_string(off) + ": " + reinterpret_cast<char*>(msg));
  }
  code_ = code;
  jit_ = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() { pcre2_code_free(static_cast<pcre2_code*>(code_)); }

bool Regex::find(std::string_view text, size_t& pos, size_t& begin, size_t& end) const {
  auto* code = static_cast<pcre2_code*>(code_);
  MatchScratch& ms = match_scratch();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  while (pos < text.size()) {
    const int rc = jit_ ? pcre2_jit_match(code, subject, text.size(), pos, 0, ms.data, ms.context)
                        : pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, ms.data,
                                      ms.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      PCRE2_UCHAR msg[256];
      pcre2_get_error_message(rc, msg, sizeof(msg));
      throw std::runtime_error("regex match failed for '" + pattern_ +
                               "': " + reinterpret_cast<char*>(msg));
    }
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(ms.data);
    if (ov[1] == ov[0]) {
      // Empty match: step over one character so the scan always advances.
      pos = ov[0] + 1;
      while (pos < text.size() && (static_cast<uint8_t>(text[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    begin = ov[0];
    end = pos = ov[1];
    return true;
  }
  pos = text.size();
  return false;
}

void Regex::find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>& out) const {
  size_t pos = 0, b = 0, e = 0;
  while (find(text, pos, b, e)) out.emplace_back(b, e);
}

}  // namespace vllm::tok
