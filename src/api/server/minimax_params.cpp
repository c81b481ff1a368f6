// MiniMax-M2's <parameter> tags read as vLLM's regexes read them (see the header).
#include "api/server/minimax_params.h"

#include <algorithm>
#include <vector>

#include "api/server/py_str.h"

namespace vllm::api {
namespace {

constexpr size_t npos = std::string_view::npos;

size_t ws(std::string_view s, size_t i) { return space_run(s, i, /*regex_s=*/true); }

bool lit_at(std::string_view s, size_t i, std::string_view lit) {
  return s.size() >= i + lit.size() && s.substr(i, lit.size()) == lit;
}

// <\s*parameter\s+name\s*=  at i: the end of the match, or npos.
size_t opener_prefix_at(std::string_view s, size_t i) {
  if (i >= s.size() || s[i] != '<') return npos;
  i = i + 1 + ws(s, i + 1);
  if (!lit_at(s, i, "parameter")) return npos;
  i += 9;
  const size_t w = ws(s, i);
  if (w == 0) return npos;
  i += w;
  if (!lit_at(s, i, "name")) return npos;
  i += 4;
  i += ws(s, i);
  if (i >= s.size() || s[i] != '=') return npos;
  return i + 1;
}

// <\s*/\s*parameter\s*>  at i: the end of the match, or npos.
size_t closer_at(std::string_view s, size_t i) {
  if (i >= s.size() || s[i] != '<') return npos;
  i = i + 1 + ws(s, i + 1);
  if (i >= s.size() || s[i] != '/') return npos;
  i = i + 1 + ws(s, i + 1);
  if (!lit_at(s, i, "parameter")) return npos;
  i += 9;
  i += ws(s, i);
  if (i >= s.size() || s[i] != '>') return npos;
  return i + 1;
}

struct Opener {
  std::string name;   // as written (the caller strips it)
  size_t value = 0;   // where the value starts
  bool bare = false;  // the unquoted alternative matched
};

// The whole opener <\s*parameter\s+name\s*=\s*("..."|'...'|[^>\s]+)\s*> at i.
bool opener_at(std::string_view s, size_t i, Opener& o) {
  size_t j = opener_prefix_at(s, i);
  if (j == npos) return false;
  j += ws(s, j);
  if (j >= s.size()) return false;
  const auto gt_after = [&](size_t k) -> size_t {
    k += ws(s, k);
    return k < s.size() && s[k] == '>' ? k + 1 : npos;
  };
  if (s[j] == '"' || s[j] == '\'') {
    const size_t close = s.find(s[j], j + 1);
    if (close != npos) {
      const size_t e = gt_after(close + 1);
      if (e != npos) {
        o = {std::string(s.substr(j + 1, close - j - 1)), e, false};
        return true;
      }
    }
  }
  // [^>\s]+ backtracks to nothing shorter that a \s*> could follow: the longest run or nothing.
  size_t k = j;
  while (k < s.size() && s[k] != '>') {
    size_t len;
    if (is_unicode_space(utf8_at(s, k, len))) break;
    k += len;
  }
  if (k == j) return false;
  const size_t e = gt_after(k);
  if (e == npos) return false;
  o = {std::string(s.substr(j, k - j)), e, true};
  return true;
}

// Where a value starting at `from` ends (the lazy .*? of _PARAM_RE): the first closer (`after`
// past it) or the first opener prefix (`after` at it, a lookahead). False when neither follows.
bool value_end(std::string_view s, size_t from, size_t& end, size_t& after) {
  for (size_t p = s.find('<', from); p != npos; p = s.find('<', p + 1)) {
    if (const size_t c = closer_at(s, p); c != npos) {
      end = p;
      after = c;
      return true;
    }
    if (opener_prefix_at(s, p) != npos) {
      end = after = p;
      return true;
    }
  }
  return false;
}

}  // namespace

// _PARAM_VALUE_END_RE.search over s[from, to).
bool minimax_has_value_end(std::string_view s, size_t from, size_t to) {
  const std::string_view t = s.substr(0, to);
  for (size_t p = t.find('<', from); p != npos; p = t.find('<', p + 1))
    if (closer_at(t, p) != npos || opener_prefix_at(t, p) != npos) return true;
  return false;
}

namespace {

// True when `t` (starting with '<') may still grow into a closer or an opener prefix: vLLM's
// _value_end_window test, fullmatch(partial=True).
bool may_become_value_end(std::string_view t) {
  struct Piece {
    enum { kLit, kWsStar, kWsPlus } kind;
    std::string_view lit;
  };
  static const std::vector<Piece> closer = {
      {Piece::kLit, "<"},         {Piece::kWsStar, ""}, {Piece::kLit, "/"}, {Piece::kWsStar, ""},
      {Piece::kLit, "parameter"}, {Piece::kWsStar, ""}, {Piece::kLit, ">"}};
  static const std::vector<Piece> opener = {
      {Piece::kLit, "<"},    {Piece::kWsStar, ""}, {Piece::kLit, "parameter"}, {Piece::kWsPlus, ""},
      {Piece::kLit, "name"}, {Piece::kWsStar, ""}, {Piece::kLit, "="}};
  const auto prefix_of = [&](const std::vector<Piece>& pat) {
    size_t i = 0;
    for (const Piece& p : pat) {
      if (p.kind == Piece::kLit) {
        const size_t n = std::min(p.lit.size(), t.size() - i);
        if (t.substr(i, n) != p.lit.substr(0, n)) return false;
        i += n;
        if (i == t.size()) return true;
      } else {
        const size_t w = ws(t, i);
        if (p.kind == Piece::kWsPlus && w == 0 && i < t.size()) return false;
        i += w;
        if (i == t.size()) return true;
      }
    }
    return i == t.size();
  };
  return prefix_of(closer) || prefix_of(opener);
}

}  // namespace

// The tail of `v` from its last '<' when it may become a value end, else 0 (its length).
size_t minimax_value_end_window(std::string_view v) {
  const size_t lt = v.rfind('<');
  if (lt == npos) return 0;
  return may_become_value_end(v.substr(lt)) ? v.size() - lt : 0;
}

MinimaxParams parse_minimax_params(std::string_view s, bool partial) {
  MinimaxParams r;
  std::string remaining;  // only for `partial`
  size_t gap = 0;         // where the text not yet cut out starts
  for (size_t i = s.find('<'); i != npos;) {
    Opener o;
    size_t end, after;
    if (opener_at(s, i, o) && value_end(s, o.value, end, after)) {
      std::string name = py_strip(o.name);
      if (!name.empty()) r.closed.emplace_back(std::move(name), s.substr(o.value, end - o.value));
      if (partial) remaining.append(s, gap, i - gap);
      gap = after;
      i = s.find('<', after);
    } else {
      i = s.find('<', i + 1);
    }
  }
  if (!partial) return r;
  const size_t last_gap = remaining.size();
  remaining.append(s, gap, npos);
  const std::string_view rem = remaining;
  for (size_t i = rem.find('<'); i != npos; i = rem.find('<', i + 1)) {
    Opener o;
    if (!opener_at(rem, i, o)) continue;
    std::string name = py_strip(o.name);
    if (name.empty()) break;
    r.open = true;
    r.open_name = std::move(name);
    r.open_value = std::string(rem.substr(o.value));
    r.open_extends = i >= last_gap && !minimax_has_value_end(rem, 0, i) &&
                     !(o.bare && (o.name[0] == '"' || o.name[0] == '\''));
    break;
  }
  return r;
}

// `"name"\s*:\s*"([^"]*)"`: the first such name, when not empty (vLLM's _try_extract_name).
std::string minimax_name_in_body(std::string_view s) {
  constexpr std::string_view key = "\"name\"";
  for (size_t p = s.find(key); p != npos; p = s.find(key, p + 1)) {
    size_t i = p + key.size();
    i += ws(s, i);
    if (i >= s.size() || s[i] != ':') continue;
    i = i + 1 + ws(s, i + 1);
    if (i >= s.size() || s[i] != '"') continue;
    const size_t close = s.find('"', i + 1);
    if (close == npos) continue;
    if (close > i + 1) return std::string(s.substr(i + 1, close - i - 1));
  }
  return {};
}

}  // namespace vllm::api
