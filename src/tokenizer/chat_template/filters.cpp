// Jinja2 filters and tests used by Hugging Face chat templates, each following the behaviour of
// jinja2.filters / jinja2.tests (3.1), with transformers' `tojson` (json.dumps,
// ensure_ascii=False) replacing Jinja's HTML-escaping one.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::tok::jinja {
namespace {

[[noreturn]] void type_error(const std::string& msg) { throw ChatTemplateError(0, msg); }

const std::set<std::string>& filter_names() {
  static const std::set<std::string> k = {
      "length",  "count",  "upper",  "lower",      "trim",       "join",    "default",    "d",
      "first",   "last",   "tojson", "string",     "int",        "float",   "items",      "list",
      "map",     "select", "reject", "selectattr", "rejectattr", "replace", "capitalize", "title",
      "reverse", "sort",   "unique", "sum",        "min",        "max",     "abs",        "indent",
      "safe",    "e",      "escape", "wordcount",  "dictsort",   "batch",   "round"};
  return k;
}

const std::set<std::string>& test_names() {
  static const std::set<std::string> k = {
      "defined",     "undefined", "none",     "string", "mapping", "iterable",
      "sequence",    "number",    "integer",  "float",  "boolean", "true",
      "false",       "equalto",   "eq",       "==",     "ne",      "!=",
      "lt",          "lessthan",  "<",        "le",     "<=",      "gt",
      "greaterthan", ">",         "ge",       ">=",     "in",      "divisibleby",
      "odd",         "even",      "callable", "lower",  "upper",   "sameas"};
  return k;
}

std::string lower_ascii(std::string s) {
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c += 32;
  return s;
}

// jinja2's make_attrgetter: "a.b.0" walks with getitem, integer parts as ints.
Value attr_path(const Value& item, const std::string& path) {
  Value cur = item;
  size_t b = 0;
  while (true) {
    size_t e = path.find('.', b);
    std::string part = path.substr(b, e == std::string::npos ? std::string::npos : e - b);
    int64_t index = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), index);
    bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit) &&
                  ec == std::errc() && end == part.data() + part.size();
    cur = get_item(cur, digits ? Value::integer(index) : Value::string(part));
    if (e == std::string::npos) return cur;
    b = e + 1;
  }
}

// Sort/unique key: strings fold case unless case_sensitive, as jinja2's ignore_case.
Value fold(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(lower_ascii(v.s()));
  return v;
}

bool arg_bool(const CallArgs& a, size_t idx, const char* name, bool def) {
  const Value* v = a.get(idx, name);
  return v ? v->truthy() : def;
}

CallArgs tail_args(const CallArgs& a, size_t from) {
  CallArgs out;
  for (size_t k = from; k < a.args.size(); ++k) out.args.push_back(a.args[k]);
  out.kwargs = a.kwargs;
  return out;
}

List select_impl(const Value& input, const CallArgs& a, bool by_attr, bool keep_when) {
  List out;
  std::string attr;
  size_t k = 0;
  if (by_attr) {
    if (a.args.empty() || !a.args[0].is_string()) type_error("selectattr needs an attribute name");
    attr = a.args[0].s();
    k = 1;
  }
  std::string test;
  if (k < a.args.size()) test = a.args[k].str();
  CallArgs targs = tail_args(a, k + 1);
  for (const Value& item : iterate(input)) {
    Value v = by_attr ? attr_path(item, attr) : item;
    bool pass = test.empty() ? v.truthy() : apply_test(test, v, targs);
    if (pass == keep_when) out.push_back(item);
  }
  return out;
}

std::string html_escape(const std::string& s) {
  uint64_t size = s.size();
  for (char c : s) size += c == '&' || c == '<' || c == '>' ? 3 : c == '"' || c == '\'' ? 4 : 0;
  check_value_bytes(size, "escaped string");
  std::string out;
  out.reserve(size);
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&#34;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Python's float() on a str: decimal/exponent forms, inf/nan, surrounding whitespace and
// underscores between digits; std::stod alone would also accept hex floats.
bool parse_py_float(const std::string& in, double& out) {
  size_t b = 0, e = in.size();
  while (b < e && std::isspace(static_cast<unsigned char>(in[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(in[e - 1]))) --e;
  std::string s;
  for (size_t k = b; k < e; ++k) {
    char c = in[k];
    if (c == '_') {
      if (k == b || k + 1 == e || !std::isdigit(static_cast<unsigned char>(in[k - 1])) ||
          !std::isdigit(static_cast<unsigned char>(in[k + 1])))
        return false;
      continue;
    }
    if (c == 'x' || c == 'X' || c == 'p' || c == 'P') return false;
    s += c;
  }
  if (s.empty()) return false;
  // strtod, unlike stod, gives Python's inf for "1e999" rather than failing.
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size();
}

// Python's int() on a str (base 10): optional sign, digits, underscores between digits.
bool parse_py_int(const std::string& in, int64_t& out) {
  size_t b = 0, e = in.size();
  while (b < e && std::isspace(static_cast<unsigned char>(in[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(in[e - 1]))) --e;
  std::string s;
  for (size_t k = b; k < e; ++k) {
    char c = in[k];
    if (c == '_' && k > b && k + 1 < e && std::isdigit(static_cast<unsigned char>(in[k - 1])) &&
        std::isdigit(static_cast<unsigned char>(in[k + 1])))
      continue;
    if (!(std::isdigit(static_cast<unsigned char>(c)) || ((c == '+' || c == '-') && k == b)))
      return false;
    s += c;
  }
  if (s.empty() || s == "+" || s == "-") return false;
  try {
    out = std::stoll(s);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// Python's int(float): NaN is a ValueError (jinja2's int filter then returns the default),
// infinity an OverflowError that the filter lets through, and a finite value past int64 a big
// int Python has and we do not.
Value float_to_int(double d, const Value& def) {
  if (std::isnan(d)) return def;
  if (std::isinf(d)) type_error("cannot convert float infinity to integer");
  // +-2**63 are exact doubles; anything in [-2**63, 2**63) truncates into int64's range.
  if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
    type_error("cannot convert float " + python_float_repr(d) +
               " to an integer: it is outside the 64-bit range");
  return Value::integer(static_cast<int64_t>(std::trunc(d)));
}

Value to_int(const Value& v, const Value& def) {
  switch (v.kind) {
    case Kind::Int:
    case Kind::Bool:
      return Value::integer(v.as_int());
    case Kind::Float:
      return float_to_int(v.f, def);
    case Kind::String: {
      int64_t i;
      if (parse_py_int(v.s(), i)) return Value::integer(i);
      // jinja2 retries int(float(s)) and returns the default on OverflowError too.
      double d;
      if (parse_py_float(v.s(), d) && !std::isinf(d)) return float_to_int(d, def);
      return def;
    }
    default:
      return def;
  }
}

std::string indent_filter(std::string s, const CallArgs& a) {
  const Value* w = a.get(0, "width");
  std::string ind;
  if (w && w->is_string()) {
    ind = w->s();
  } else {
    // Python's " " * width: negative is empty; indent(10**11) must fail before allocating.
    int64_t width = w ? w->as_int() : 4;
    check_value_bytes(static_cast<uint64_t>(std::max<int64_t>(width, 0)), "indent width");
    ind.assign(static_cast<size_t>(std::max<int64_t>(width, 0)), ' ');
  }
  bool first = arg_bool(a, 1, "first", false);
  bool blank = arg_bool(a, 2, "blank", false);
  s += "\n";
  CallArgs none;
  List lines_v = *get_attr(Value::string(s), "splitlines").fn->operator()(none).list;
  // Every line may gain one copy of the indent.
  uint64_t per_line = ind.size() + 1;
  if (lines_v.size() + 1 > UINT64_MAX / per_line) check_value_bytes(UINT64_MAX, "indent output");
  check_value_bytes(s.size() + (lines_v.size() + 1) * per_line, "indent output");
  std::vector<std::string> lines;
  for (auto& l : lines_v) lines.push_back(l.s());
  std::string rv;
  if (blank) {
    for (size_t k = 0; k < lines.size(); ++k) rv += (k ? "\n" + ind : "") + lines[k];
  } else {
    rv = lines.empty() ? "" : lines[0];
    for (size_t k = 1; k < lines.size(); ++k) rv += "\n" + (lines[k].empty() ? "" : ind) + lines[k];
  }
  return first ? ind + rv : rv;
}

}  // namespace

bool is_known_filter(const std::string& name) { return filter_names().count(name) > 0; }
bool is_known_test(const std::string& name) { return test_names().count(name) > 0; }

Value apply_filter(const std::string& name, const Value& in, const CallArgs& a) {
  if (name == "length" || name == "count") return Value::integer(length_of(in));
  if (name == "string") return Value::string(in.str());
  if (name == "safe") return in;
  if (name == "e" || name == "escape") return Value::string(html_escape(in.str()));
  if (name == "upper" || name == "lower" || name == "capitalize" || name == "title") {
    Value s = Value::string(in.str());
    if (name != "title") return get_attr(s, name).fn->operator()(*std::make_unique<CallArgs>());
    // jinja2's title splits on runs of [-\s({[<] and capitalises each piece.
    std::string out, piece;
    auto flush = [&] {
      if (piece.empty()) return;
      Value p = Value::string(piece);
      CallArgs none;
      out += get_attr(p, "capitalize").fn->operator()(none).s();
      piece.clear();
    };
    for (char c : s.s()) {
      if (c == '-' || c == '(' || c == '{' || c == '[' || c == '<' || c == ' ' || c == '\t' ||
          c == '\n' || c == '\r' || c == '\v' || c == '\f') {
        flush();
        out += c;
      } else {
        piece += c;
      }
    }
    flush();
    return Value::string(out);
  }
  if (name == "trim") {
    CallArgs sa;
    if (const Value* c = a.get(0, "chars")) sa.args.push_back(*c);
    return get_attr(Value::string(in.str()), "strip").fn->operator()(sa);
  }
  if (name == "replace") {
    CallArgs ra;
    for (size_t k = 0; k < 3; ++k)
      if (const Value* v = a.get(k, k == 0 ? "old" : k == 1 ? "new" : "count"))
        ra.args.push_back(*v);
    return get_attr(Value::string(in.str()), "replace").fn->operator()(ra);
  }
  if (name == "default" || name == "d") {
    const Value* def = a.get(0, "default_value");
    bool boolean = arg_bool(a, 1, "boolean", false);
    if (in.is_undefined() || (boolean && !in.truthy())) return def ? *def : Value::string("");
    return in;
  }
  if (name == "join") {
    const Value* sep = a.get(0, "d");
    const Value* attr = a.get(1, "attribute");
    const std::string glue = sep ? sep->str() : "";
    std::string out;
    bool first = true;
    for (const Value& v : iterate(in)) {
      std::string piece = (attr ? attr_path(v, attr->str()) : v).str();
      check_value_bytes(
          static_cast<uint64_t>(out.size()) + (first ? 0 : glue.size()) + piece.size(),
          "joined string");
      if (!first) out += glue;
      first = false;
      out += piece;
    }
    return Value::string(std::move(out));
  }
  if (name == "first" || name == "last") {
    List copy;
    const List& items = in.is_list() ? *in.list : (copy = iterate(in));
    if (items.empty()) return Value::undefined("No " + name + " item, sequence was empty.");
    return name == "first" ? items.front() : items.back();
  }
  if (name == "tojson") {
    JsonOptions o;
    o.ensure_ascii = arg_bool(a, 0, "ensure_ascii", false);
    if (const Value* ind = a.get(1, "indent"); ind && !ind->is_none()) {
      if (ind->is_string()) {
        o.indent_is_string = true;
        o.indent_str = ind->s();
      } else {
        // Python repeats " " indent times; the dump checks each line's size before writing.
        o.indent = std::max<int64_t>(0, ind->as_int());
      }
    }
    if (const Value* sep = a.get(2, "separators"); sep && !sep->is_none()) {
      if (!sep->is_list() || sep->list->size() != 2) type_error("separators must be a pair");
      o.custom_separators = true;
      o.item_sep = (*sep->list)[0].str();
      o.key_sep = (*sep->list)[1].str();
    }
    o.sort_keys = arg_bool(a, 3, "sort_keys", false);
    return Value::string(to_json(in, o));
  }
  if (name == "int") {
    const Value* def = a.get(0, "default");
    return to_int(in, def ? *def : Value::integer(0));
  }
  if (name == "float") {
    const Value* def = a.get(0, "default");
    if (in.is_number()) return Value::real(in.as_double());
    double d;
    if (in.is_string() && parse_py_float(in.s(), d)) return Value::real(d);
    return def ? *def : Value::real(0.0);
  }
  if (name == "items") {
    if (in.is_undefined()) return Value::list_of({});
    if (!in.is_dict()) type_error("Can only get item pairs from a mapping.");
    return get_attr(in, "items").fn->operator()(*std::make_unique<CallArgs>());
  }
  if (name == "list") return Value::list_of(iterate(in));
  if (name == "reverse") {
    if (in.is_string()) {
      auto cps = utf8_decode(in.s());
      std::reverse(cps.begin(), cps.end());
      return Value::string(utf8_encode(cps, 0, cps.size()));
    }
    List items = iterate(in);
    std::reverse(items.begin(), items.end());
    return Value::list_of(std::move(items));
  }
  if (name == "map") {
    List out;
    const Value* attr = nullptr;
    for (const auto& kv : a.kwargs)
      if (kv.first == "attribute") attr = &kv.second;
    if (attr) {
      const Value* def = nullptr;
      for (const auto& kv : a.kwargs)
        if (kv.first == "default") def = &kv.second;
      for (const Value& v : iterate(in)) {
        Value x = attr_path(v, attr->str());
        out.push_back(x.is_undefined() && def ? *def : x);
      }
    } else {
      if (a.args.empty()) type_error("map requires a filter name or attribute=");
      std::string f = a.args[0].str();
      if (!is_known_filter(f)) type_error("unsupported filter '" + f + "'");
      CallArgs fa = tail_args(a, 1);
      for (const Value& v : iterate(in)) out.push_back(apply_filter(f, v, fa));
    }
    return Value::list_of(std::move(out));
  }
  if (name == "select" || name == "reject")
    return Value::list_of(select_impl(in, a, false, name == "select"));
  if (name == "selectattr" || name == "rejectattr")
    return Value::list_of(select_impl(in, a, true, name == "selectattr"));
  if (name == "sort" || name == "unique" || name == "min" || name == "max") {
    bool reverse = name == "sort" && arg_bool(a, 0, "reverse", false);
    bool cs = arg_bool(a, name == "sort" ? 1 : 0, "case_sensitive", false);
    const Value* attr = a.get(name == "sort" ? 2 : 1, "attribute");
    List items = iterate(in);
    auto key = [&](const Value& v) { return fold(attr ? attr_path(v, attr->str()) : v, cs); };
    if (name == "unique") {
      List out, seen;
      for (const Value& v : items) {
        Value k = key(v);
        if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, k); })) {
          seen.push_back(k);
          out.push_back(v);
        }
      }
      return Value::list_of(std::move(out));
    }
    if (name == "min" || name == "max") {
      if (items.empty()) return Value::undefined("No aggregated item, sequence was empty.");
      size_t best = 0;
      for (size_t k = 1; k < items.size(); ++k) {
        bool better = name == "min" ? less_than(key(items[k]), key(items[best]))
                                    : less_than(key(items[best]), key(items[k]));
        if (better) best = k;
      }
      return items[best];
    }
    std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
      return reverse ? less_than(key(y), key(x)) : less_than(key(x), key(y));
    });
    return Value::list_of(std::move(items));
  }
  if (name == "sum") {
    const Value* attr = a.get(0, "attribute");
    const Value* start = a.get(1, "start");
    Value total = start ? *start : Value::integer(0);
    for (const Value& v : iterate(in)) {
      Value x = attr ? attr_path(v, attr->str()) : v;
      if (total.kind == Kind::Float || x.kind == Kind::Float) {
        total = Value::real(total.as_double() + x.as_double());
      } else {
        int64_t r;
        if (__builtin_add_overflow(total.as_int(), x.as_int(), &r))
          type_error("integer overflow in sum: the total does not fit in 64 bits");
        total = Value::integer(r);
      }
    }
    return total;
  }
  if (name == "abs") {
    if (in.kind == Kind::Float) return Value::real(std::fabs(in.f));
    if (in.as_int() == INT64_MIN)
      type_error("integer overflow: abs(-2**63) does not fit in 64 bits");
    return Value::integer(std::llabs(in.as_int()));
  }
  if (name == "indent") return Value::string(indent_filter(in.str(), a));
  if (name == "wordcount") {
    CallArgs none;
    return Value::integer(static_cast<int64_t>(
        get_attr(Value::string(in.str()), "split").fn->operator()(none).list->size()));
  }
  type_error("unsupported filter '" + name + "'");
}

bool apply_test(const std::string& name, const Value& v, const CallArgs& a) {
  auto arg = [&]() -> const Value& {
    if (a.args.empty()) type_error("test '" + name + "' needs an argument");
    return a.args[0];
  };
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable" || name == "sequence")
    return v.is_list() || v.is_dict() || v.is_string() || v.is_undefined();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.kind == Kind::Int;
  if (name == "float") return v.kind == Kind::Float;
  if (name == "boolean") return v.kind == Kind::Bool;
  if (name == "true") return v.kind == Kind::Bool && v.b;
  if (name == "false") return v.kind == Kind::Bool && !v.b;
  if (name == "callable") return v.kind == Kind::Callable;
  if (name == "lower" || name == "upper") {
    if (!v.is_string()) return false;
    CallArgs none;
    return get_attr(v, name == "lower" ? "islower" : "isupper").fn->operator()(none).truthy();
  }
  if (name == "equalto" || name == "eq" || name == "==") return equals(v, arg());
  if (name == "ne" || name == "!=") return !equals(v, arg());
  if (name == "lt" || name == "lessthan" || name == "<") return less_than(v, arg());
  if (name == "gt" || name == "greaterthan" || name == ">") return less_than(arg(), v);
  if (name == "le" || name == "<=") return !less_than(arg(), v);
  if (name == "ge" || name == ">=") return !less_than(v, arg());
  if (name == "sameas") {
    const Value& o = arg();
    if (v.kind != o.kind) return false;
    if (v.is_list()) return v.list == o.list;
    if (v.is_dict()) return v.dict == o.dict;
    return equals(v, o);
  }
  if (name == "in") {
    const Value& c = arg();
    if (c.is_string()) return v.is_string() && find_substr(c.s(), v.s()) != std::string::npos;
    for (const Value& x : iterate(c))
      if (equals(x, v)) return true;
    return false;
  }
  if (name == "divisibleby") {
    int64_t d = arg().as_int();
    if (d == 0) type_error("integer division or modulo by zero");
    // INT64_MIN % -1 traps on x86; everything is divisible by -1.
    return d == -1 || v.as_int() % d == 0;
  }
  if (name == "odd" || name == "even") {
    int64_t r = v.as_int() % 2;
    return name == "odd" ? r != 0 : r == 0;
  }
  type_error("unsupported test '" + name + "'");
}

}  // namespace vllm::tok::jinja
