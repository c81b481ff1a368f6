// Builders and printing for the grammar IR.
#include "engine/structured_output/grammar.h"

#include <algorithm>
#include <cstdio>

namespace vllm::engine::so {

std::vector<CodeRange> normalize_ranges(std::vector<CodeRange> r, bool negate) {
  std::vector<CodeRange> out;
  for (auto& x : r) {
    if (x.lo > x.hi) std::swap(x.lo, x.hi);
    x.hi = std::min(x.hi, kMaxCodePoint);
  }
  std::sort(r.begin(), r.end(), [](const CodeRange& a, const CodeRange& b) { return a.lo < b.lo; });
  for (const auto& x : r) {
    if (x.lo > kMaxCodePoint) continue;
    if (!out.empty() && x.lo <= out.back().hi + 1)
      out.back().hi = std::max(out.back().hi, x.hi);
    else
      out.push_back(x);
  }
  if (negate) {
    std::vector<CodeRange> inv;
    uint32_t next = 0;
    for (const auto& x : out) {
      if (x.lo > next) inv.push_back({next, x.lo - 1});
      next = x.hi + 1;
    }
    if (next <= kMaxCodePoint) inv.push_back({next, kMaxCodePoint});
    out = std::move(inv);
  }
  // Surrogates are not scalar values and have no UTF-8 encoding.
  std::vector<CodeRange> res;
  for (const auto& x : out) {
    if (x.hi < 0xD800 || x.lo > 0xDFFF) {
      res.push_back(x);
      continue;
    }
    if (x.lo < 0xD800) res.push_back({x.lo, 0xD7FF});
    if (x.hi > 0xDFFF) res.push_back({0xE000, x.hi});
  }
  return res;
}

Expr empty() { return Expr{}; }

Expr lit(std::string_view bytes) {
  if (bytes.empty()) return empty();
  Expr e;
  e.kind = Expr::Kind::kBytes;
  e.bytes = std::string(bytes);
  return e;
}

Expr cls(std::vector<CodeRange> ranges, bool negate) {
  Expr e;
  e.kind = Expr::Kind::kClass;
  e.ranges = normalize_ranges(std::move(ranges), negate);
  return e;
}

Expr byte_cls(std::vector<CodeRange> ranges) {
  Expr e;
  e.kind = Expr::Kind::kClass;
  e.raw_bytes = true;
  for (auto& r : ranges) r.hi = std::min<uint32_t>(r.hi, 255);
  e.ranges = normalize_ranges(std::move(ranges));
  return e;
}

Expr any_char() { return cls({{0, kMaxCodePoint}}); }

Expr seq(std::vector<Expr> kids) {
  std::vector<Expr> flat;
  for (auto& k : kids) {
    if (k.kind == Expr::Kind::kEmpty) continue;
    if (k.kind == Expr::Kind::kSeq) {
      for (auto& kk : k.kids) flat.push_back(std::move(kk));
    } else if (k.kind == Expr::Kind::kBytes && !flat.empty() &&
               flat.back().kind == Expr::Kind::kBytes) {
      flat.back().bytes += k.bytes;
    } else {
      flat.push_back(std::move(k));
    }
  }
  if (flat.empty()) return empty();
  if (flat.size() == 1) return std::move(flat[0]);
  Expr e;
  e.kind = Expr::Kind::kSeq;
  e.kids = std::move(flat);
  return e;
}

Expr alt(std::vector<Expr> kids) {
  if (kids.size() == 1) return std::move(kids[0]);
  Expr e;
  e.kind = Expr::Kind::kAlt;
  for (auto& k : kids) {
    if (k.kind == Expr::Kind::kAlt && !k.kids.empty()) {
      for (auto& kk : k.kids) e.kids.push_back(std::move(kk));
    } else {
      e.kids.push_back(std::move(k));
    }
  }
  return e;
}

Expr ref(int32_t rule) {
  Expr e;
  e.kind = Expr::Kind::kRef;
  e.rule = rule;
  return e;
}

Expr rep(Expr x, int32_t min, int32_t max) {
  if (max == 0) return empty();
  if (min == 1 && max == 1) return x;
  if (x.kind == Expr::Kind::kEmpty) return x;
  Expr e;
  e.kind = Expr::Kind::kRepeat;
  e.min = min;
  e.max = max;
  e.kids.push_back(std::move(x));
  return e;
}

int32_t Grammar::rule_id(const std::string& name) {
  auto it = by_name.find(name);
  if (it != by_name.end()) return it->second;
  rules.push_back(Rule{name, empty(), false});
  by_name[name] = static_cast<int32_t>(rules.size() - 1);
  return static_cast<int32_t>(rules.size() - 1);
}

int32_t Grammar::add_rule(const std::string& name, Expr body) {
  std::string n = name;
  for (int k = 1; by_name.count(n); ++k) n = name + "_" + std::to_string(k);
  rules.push_back(Rule{n, std::move(body), true});
  by_name[n] = static_cast<int32_t>(rules.size() - 1);
  return static_cast<int32_t>(rules.size() - 1);
}

void Grammar::define(int32_t id, Expr body) {
  rules[id].body = std::move(body);
  rules[id].defined = true;
}

std::string describe_code_point(uint32_t cp) {
  char buf[32];
  if (cp >= 0x21 && cp < 0x7F) {
    std::snprintf(buf, sizeof buf, "'%c'", static_cast<char>(cp));
  } else {
    std::snprintf(buf, sizeof buf, "U+%04X", cp);
  }
  return buf;
}

namespace {
void print_cp(std::string& s, uint32_t c, bool raw) {
  char buf[16];
  if (c == '\\' || c == ']' || c == '-' || c == '^') {
    s += '\\';
    s += static_cast<char>(c);
  } else if (c >= 0x20 && c < 0x7F) {
    s += static_cast<char>(c);
  } else {
    std::snprintf(buf, sizeof buf, raw || c < 0x100 ? "\\x%02X" : "\\u%04X", c);
    s += buf;
  }
}
}  // namespace

std::string expr_to_string(const Grammar& g, const Expr& e) {
  using K = Expr::Kind;
  std::string s;
  switch (e.kind) {
    case K::kEmpty:
      return "\"\"";
    case K::kBytes:
      s = "\"";
      for (unsigned char c : e.bytes) {
        if (c == '"' || c == '\\') {
          s += '\\';
          s += static_cast<char>(c);
        } else if (c >= 0x20 && c < 0x7F) {
          s += static_cast<char>(c);
        } else {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02X", c);
          s += buf;
        }
      }
      return s + "\"";
    case K::kClass:
      s = "[";
      for (const auto& r : e.ranges) {
        print_cp(s, r.lo, e.raw_bytes);
        if (r.hi != r.lo) {
          s += '-';
          print_cp(s, r.hi, e.raw_bytes);
        }
      }
      return s + "]";
    case K::kSeq:
      for (size_t i = 0; i < e.kids.size(); ++i) {
        if (i) s += ' ';
        bool paren = e.kids[i].kind == K::kAlt;
        s += paren ? "(" + expr_to_string(g, e.kids[i]) + ")" : expr_to_string(g, e.kids[i]);
      }
      return s;
    case K::kAlt:
      if (e.kids.empty()) return "(nothing)";
      for (size_t i = 0; i < e.kids.size(); ++i) {
        if (i) s += " | ";
        s += expr_to_string(g, e.kids[i]);
      }
      return s;
    case K::kRef:
      return g.rules[e.rule].name;
    case K::kRepeat: {
      const auto& k = e.kids[0];
      bool paren = k.kind == K::kSeq || k.kind == K::kAlt || k.kind == K::kRepeat;
      s = paren ? "(" + expr_to_string(g, k) + ")" : expr_to_string(g, k);
      if (e.min == 0 && e.max == -1) return s + "*";
      if (e.min == 1 && e.max == -1) return s + "+";
      if (e.min == 0 && e.max == 1) return s + "?";
      s += "{" + std::to_string(e.min);
      if (e.max != e.min) s += "," + (e.max < 0 ? std::string() : std::to_string(e.max));
      return s + "}";
    }
  }
  return s;
}

std::string Grammar::to_string() const {
  std::string s;
  for (size_t i = 0; i < rules.size(); ++i)
    s += rules[i].name + " ::= " + expr_to_string(*this, rules[i].body) + "\n";
  return s;
}

}  // namespace vllm::engine::so
