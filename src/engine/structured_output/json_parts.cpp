// JSON building blocks (see json_parts.h).
#include "engine/structured_output/json_parts.h"

#include <algorithm>

namespace vllm::engine::so::json_parts {

Expr ws(const JsonOptions& o) {
  if (o.max_whitespace <= 0) return empty();
  return rep(byte_cls({{' ', ' '}, {'\t', '\n'}, {'\r', '\r'}}), 0, o.max_whitespace);
}

Expr string_char() {
  return alt(
      {cls({{0, 0x1F}, {'"', '"'}, {'\\', '\\'}}, /*negate=*/true),
       seq({lit("\\"),
            alt({byte_cls({{'"', '"'},
                           {'\\', '\\'},
                           {'/', '/'},
                           {'b', 'b'},
                           {'f', 'f'},
                           {'n', 'n'},
                           {'r', 'r'},
                           {'t', 't'}}),
                 seq({lit("u"), rep(byte_cls({{'0', '9'}, {'A', 'F'}, {'a', 'f'}}), 4, 4)})})})});
}

Expr unbounded_number() {
  const Expr digit = byte_cls({{'0', '9'}});
  return seq({opt(lit("-")), alt({lit("0"), seq({byte_cls({{'1', '9'}}), star(digit)})}),
              opt(seq({lit("."), plus(digit)})),
              opt(seq({byte_cls({{'E', 'E'}, {'e', 'e'}}), opt(byte_cls({{'+', '+'}, {'-', '-'}})),
                       plus(digit)}))});
}

AnyJson any_json_rules(Grammar& g, const JsonOptions& o, AnyJson& c) {
  if (c.value >= 0) return c;
  c.value = g.add_rule("json_value", empty());
  c.object = g.add_rule("json_object", empty());
  c.array = g.add_rule("json_array", empty());
  c.string = g.add_rule("json_string", seq({lit("\""), star(string_char()), lit("\"")}));
  c.number = g.add_rule("json_number", unbounded_number());
  g.define(c.value, alt({ref(c.object), ref(c.array), ref(c.string), ref(c.number), lit("true"),
                         lit("false"), lit("null")}));
  const Expr member = seq({ref(c.string), ws(o), lit(":"), ws(o), ref(c.value)});
  const Expr sep = seq({ws(o), lit(","), ws(o)});
  g.define(c.object,
           seq({lit("{"), ws(o), opt(seq({member, star(seq({sep, member}))})), ws(o), lit("}")}));
  g.define(c.array, seq({lit("["), ws(o), opt(seq({ref(c.value), star(seq({sep, ref(c.value)}))})),
                         ws(o), lit("]")}));
  return c;
}

std::string dump_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

Expr literal_value(const nlohmann::ordered_json& v, const JsonOptions& o) {
  if (v.is_object()) {
    std::vector<Expr> items{lit("{"), ws(o)};
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!first) items.push_back(seq({ws(o), lit(","), ws(o)}));
      first = false;
      items.push_back(lit(dump_string(it.key())));
      items.push_back(seq({ws(o), lit(":"), ws(o)}));
      items.push_back(literal_value(it.value(), o));
    }
    items.push_back(ws(o));
    items.push_back(lit("}"));
    return seq(std::move(items));
  }
  if (v.is_array()) {
    std::vector<Expr> items{lit("["), ws(o)};
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) items.push_back(seq({ws(o), lit(","), ws(o)}));
      items.push_back(literal_value(v[i], o));
    }
    items.push_back(ws(o));
    items.push_back(lit("]"));
    return seq(std::move(items));
  }
  if (v.is_string()) return lit(dump_string(v.get<std::string>()));
  return lit(v.dump());
}

namespace {

Expr digits(char lo, char hi) {
  return byte_cls({{static_cast<uint32_t>(lo), static_cast<uint32_t>(hi)}});
}

// Decimal strings of equal length n with a <= x <= b (leading zeros allowed: used for
// suffixes).
Expr same_len(const std::string& a, const std::string& b) {
  if (a.empty()) return empty();
  if (a[0] == b[0]) return seq({lit(a.substr(0, 1)), same_len(a.substr(1), b.substr(1))});
  const size_t n = a.size() - 1;
  std::vector<Expr> alts;
  alts.push_back(seq({lit(a.substr(0, 1)), same_len(a.substr(1), std::string(n, '9'))}));
  if (b[0] - a[0] > 1)
    alts.push_back(seq({digits(a[0] + 1, b[0] - 1),
                        rep(digits('0', '9'), static_cast<int32_t>(n), static_cast<int32_t>(n))}));
  alts.push_back(seq({lit(b.substr(0, 1)), same_len(std::string(n, '0'), b.substr(1))}));
  return alt(std::move(alts));
}

// Non-negative integers in [lo, hi] (hi nullopt: unbounded), canonical form.
Expr nonneg_range(uint64_t lo, std::optional<uint64_t> hi) {
  const std::string ls = std::to_string(lo);
  const auto n = static_cast<int32_t>(ls.size());
  if (!hi)
    return alt({same_len(ls, std::string(ls.size(), '9')),
                seq({digits('1', '9'), rep(digits('0', '9'), n, -1)})});
  if (lo > *hi) return alt({});
  const std::string hs = std::to_string(*hi);
  std::vector<Expr> alts;
  for (size_t d = ls.size(); d <= hs.size(); ++d) {
    const std::string a = d == ls.size() ? ls : "1" + std::string(d - 1, '0');
    const std::string b = d == hs.size() ? hs : std::string(d, '9');
    alts.push_back(same_len(a, b));
  }
  return alt(std::move(alts));
}

}  // namespace

Expr integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  if (lo && hi && *lo > *hi) return alt({});
  std::vector<Expr> alts;
  // Negative part: "-" then |x| in [max(1, -hi), -lo].
  if (!lo || *lo < 0) {
    const uint64_t amin = (hi && *hi < 0) ? static_cast<uint64_t>(-(*hi + 1)) + 1 : 1;
    std::optional<uint64_t> amax;
    if (lo) amax = static_cast<uint64_t>(-(*lo + 1)) + 1;
    alts.push_back(seq({lit("-"), nonneg_range(amin, amax)}));
  }
  if (!hi || *hi >= 0) {
    const uint64_t nmin = (lo && *lo > 0) ? static_cast<uint64_t>(*lo) : 0;
    std::optional<uint64_t> nmax;
    if (hi) nmax = static_cast<uint64_t>(*hi);
    alts.insert(alts.begin(), nonneg_range(nmin, nmax));
  }
  return alt(std::move(alts));
}

namespace {
// Decimals m = A.F >= 0 with L <= m (L < m when lx) and m <= H (m < H when hx); L >= 0.
Expr nonneg_decimal(int64_t L, bool lx, std::optional<int64_t> H, bool hx) {
  const Expr digit = digits('0', '9');
  const Expr frac = opt(seq({lit("."), plus(digit)}));
  const Expr zero_frac = opt(seq({lit("."), plus(lit("0"))}));
  const Expr nonzero_frac = seq({lit("."), star(digit), digits('1', '9'), star(digit)});
  std::vector<Expr> alts;
  if (H && *H < L) return alt({});
  if (H && *H == L) {
    if (!lx && !hx) alts.push_back(seq({integer_range(L, L), zero_frac}));
    return alt(std::move(alts));
  }
  // A == L: at least L; more than L only with a non-zero fraction.
  alts.push_back(seq({integer_range(L, L), lx ? nonzero_frac : frac}));
  // L < A < H: any fraction.
  std::optional<int64_t> top;
  if (H) top = *H - 1;
  if (!top || *top >= L + 1) alts.push_back(seq({integer_range(L + 1, top), frac}));
  // A == H: only H itself, spelled with an all-zero fraction.
  if (H && !hx) alts.push_back(seq({integer_range(*H, *H), zero_frac}));
  return alt(std::move(alts));
}
}  // namespace

Expr number_range(std::optional<int64_t> lo, bool lo_excl, std::optional<int64_t> hi,
                  bool hi_excl) {
  std::vector<Expr> alts;
  if (!hi || *hi >= 0) {
    const bool has_lo = lo && *lo >= 0;
    alts.push_back(nonneg_decimal(has_lo ? *lo : 0, has_lo && lo_excl, hi, hi_excl));
  }
  if (!lo || *lo < 0) {
    // x = -m: x >= lo <=> m <= -lo; x <= hi <=> m >= -hi. m > 0 always ("-0" is not spelled).
    const int64_t mlo = hi && *hi < 0 ? -*hi : 0;
    const bool mlo_x = !(hi && *hi < 0) || hi_excl;
    std::optional<int64_t> mhi;
    if (lo) mhi = -*lo;
    alts.push_back(seq({lit("-"), nonneg_decimal(mlo, mlo_x, mhi, lo_excl)}));
  }
  return alt(std::move(alts));
}

namespace {
struct Format {
  const char* name;
  const char* regex;
};
// Years are 0001-9999 (Python's datetime range); dates exclude February 29 (a regex cannot check
// leap years cheaply); times exclude leap seconds; ipv6 is the full eight-group form.
constexpr const char* kDate =
    "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-"
    "9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
    "|02-(?:0[1-9]|1[0-9]|2[0-8]))";
constexpr const char* kTime =
    "(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{1,9})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-"
    "5]"
    "[0-9])";
const Format kFormats[] = {
    {"date", kDate},
    {"time", kTime},
    {"date-time", nullptr},
    {"uuid", "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"},
    {"email",
     "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[A-Za-z0-9](?:[A-"
     "Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+[A-Za-z]{2,24}"},
    {"ipv4",
     "(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|"
     "[1-9]?[0-9])"},
    {"ipv6", "(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"},
    {"hostname",
     "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-"
     "z0-9])?)*"},
    {"uri", "[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9._~:/?#\\[\\]@!$&'()*+,;=-]|%[0-9A-Fa-f]{2})+"},
};
}  // namespace

std::optional<Expr> format_content(const std::string& format) {
  for (const auto& f : kFormats) {
    if (format != f.name) continue;
    const std::string re = f.regex ? f.regex : std::string(kDate) + "T" + kTime;
    return regex_expr(re, json_string_chars, "format regex");
  }
  return std::nullopt;
}

const char* supported_formats() {
  return "date, time, date-time, uuid, email, ipv4, ipv6, hostname, uri";
}

}  // namespace vllm::engine::so::json_parts
