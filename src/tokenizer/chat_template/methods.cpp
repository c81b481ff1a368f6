// Attribute/item access as jinja2's sandboxed getattr/getitem resolve it, Python's str, dict
// and list methods that templates call (`.split()`, `.items()`, `.get()`...) and slicing.
// Mutating methods (append, pop, update...) resolve but refuse to run, as
// ImmutableSandboxedEnvironment does.
#include <algorithm>
#include <set>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/unicode_case.h"
#include "tokenizer/unicode.h"

namespace vllm::tok::jinja {
namespace {

[[noreturn]] void type_error(const std::string& msg) { throw ChatTemplateError(0, msg); }

const std::string& need_str(const Value* v, const char* what) {
  if (!v || !v->is_string()) type_error(std::string(what) + " must be a string");
  return v->s();
}

// "Cased" letters as Python sees them: an uppercase letter has a lowercase form and vice versa
// (ß has no single-character uppercase but is still lowercase).
bool is_upper_letter(uint32_t c) { return unicode_lower(c) != c; }
bool is_lower_letter(uint32_t c) { return unicode_upper(c) != c || c == 0xdf; }

void append_upper(std::string& out, uint32_t c) {
  if (c == 0xdf)
    out += "SS";
  else
    utf8_append(out, unicode_upper(c));
}
// Title case of the first letter of a word (ß -> Ss).
void append_title(std::string& out, uint32_t c) {
  if (c == 0xdf)
    out += "Ss";
  else
    utf8_append(out, unicode_upper(c));
}

std::string to_upper_str(const std::string& s) {
  std::string out;
  for (uint32_t c : utf8_decode(s)) append_upper(out, c);
  return out;
}
std::string to_lower_str(const std::string& s) {
  std::string out;
  for (uint32_t c : utf8_decode(s)) utf8_append(out, unicode_lower(c));
  return out;
}

// str.strip family; `chars` null means whitespace.
std::string py_strip(const std::string& s, const Value* chars, bool left, bool right) {
  auto cps = utf8_decode(s);
  std::vector<uint32_t> set;
  bool ws = !chars || chars->is_none();
  if (!ws) set = utf8_decode(need_str(chars, "strip arg"));
  auto drop = [&](uint32_t c) {
    return ws ? is_py_space(c) : std::find(set.begin(), set.end(), c) != set.end();
  };
  size_t b = 0, e = cps.size();
  if (left)
    while (b < e && drop(cps[b])) ++b;
  if (right)
    while (e > b && drop(cps[e - 1])) --e;
  return utf8_encode(cps, b, e);
}

List py_split(const std::string& s, const Value* sep_v, int64_t maxsplit, bool from_right) {
  List out;
  if (!sep_v || sep_v->is_none()) {
    auto cps = utf8_decode(s);
    std::vector<std::pair<size_t, size_t>> words;
    size_t k = 0;
    while (k < cps.size()) {
      while (k < cps.size() && is_py_space(cps[k])) ++k;
      if (k >= cps.size()) break;
      size_t b = k;
      while (k < cps.size() && !is_py_space(cps[k])) ++k;
      words.emplace_back(b, k);
    }
    check_list_items(words.size(), "list from split()");
    if (maxsplit < 0 || static_cast<size_t>(maxsplit) + 1 >= words.size()) {
      for (auto& w : words) out.push_back(Value::string(utf8_encode(cps, w.first, w.second)));
      return out;
    }
    size_t keep = static_cast<size_t>(maxsplit);
    if (!from_right) {
      for (size_t w = 0; w < keep; ++w)
        out.push_back(Value::string(utf8_encode(cps, words[w].first, words[w].second)));
      // Python keeps the remainder's trailing whitespace (and rsplit its leading whitespace).
      out.push_back(Value::string(utf8_encode(cps, words[keep].first, cps.size())));
    } else {
      size_t first = words.size() - keep;
      out.push_back(Value::string(utf8_encode(cps, 0, words[first - 1].second)));
      for (size_t w = first; w < words.size(); ++w)
        out.push_back(Value::string(utf8_encode(cps, words[w].first, words[w].second)));
    }
    return out;
  }
  const std::string& sep = need_str(sep_v, "separator");
  if (sep.empty()) type_error("empty separator");
  std::vector<std::string> parts;
  if (!from_right) {
    size_t b = 0;
    int64_t n = 0;
    for (size_t f;
         (maxsplit < 0 || n < maxsplit) && (f = find_substr(s, sep, b)) != std::string::npos; ++n) {
      check_list_items(parts.size() + 1, "list from split()");
      parts.push_back(s.substr(b, f - b));
      b = f + sep.size();
    }
    parts.push_back(s.substr(b));
  } else {
    size_t e = s.size();
    int64_t n = 0;
    std::vector<std::string> rev;
    const ReverseFinder finder(s, sep);
    while (maxsplit < 0 || n < maxsplit) {
      if (e < sep.size()) break;
      size_t f = finder.find(e - sep.size());
      if (f == std::string::npos) break;
      check_list_items(rev.size() + 1, "list from rsplit()");
      rev.push_back(s.substr(f + sep.size(), e - f - sep.size()));
      e = f;
      ++n;
    }
    rev.push_back(s.substr(0, e));
    parts.assign(rev.rbegin(), rev.rend());
  }
  for (auto& p : parts) out.push_back(Value::string(std::move(p)));
  return out;
}

std::string py_title(const std::string& s) {
  std::string out;
  bool prev_cased = false;
  for (uint32_t c : utf8_decode(s)) {
    bool cased = is_upper_letter(c) || is_lower_letter(c);
    if (cased && !prev_cased)
      append_title(out, c);
    else
      utf8_append(out, cased ? unicode_lower(c) : c);
    prev_cased = cased;
  }
  return out;
}

std::string py_replace(const std::string& s, const std::string& from, const std::string& to,
                       int64_t count) {
  std::string out;
  if (from.empty()) {
    // Python inserts `to` between every character (and at both ends).
    auto cps = utf8_decode(s);
    uint64_t inserts = cps.size() + 1;
    if (count >= 0) inserts = std::min<uint64_t>(inserts, static_cast<uint64_t>(count));
    if (!to.empty() && inserts > UINT64_MAX / to.size())
      check_value_bytes(UINT64_MAX, "string from replace()");
    check_value_bytes(s.size() + inserts * to.size(), "string from replace()");
    int64_t n = 0;
    for (size_t k = 0; k <= cps.size(); ++k) {
      if (count < 0 || n < count) {
        out += to;
        ++n;
      }
      if (k < cps.size()) utf8_append(out, cps[k]);
    }
    return out;
  }
  size_t b = 0;
  int64_t n = 0;
  for (size_t f; (count < 0 || n < count) && (f = find_substr(s, from, b)) != std::string::npos;
       ++n) {
    // Each replacement can grow the text: check before appending, not after.
    check_value_bytes(static_cast<uint64_t>(out.size()) + (f - b) + to.size() + (s.size() - f),
                      "string from replace()");
    out.append(s, b, f - b);
    out += to;
    b = f + from.size();
  }
  out.append(s, b, std::string::npos);
  return out;
}

bool affix_match(const std::string& s, const Value& affix, bool prefix) {
  auto one = [&](const std::string& a) {
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0
                  : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (affix.is_list()) {
    for (const auto& a : *affix.list)
      if (one(need_str(&a, "affix"))) return true;
    return false;
  }
  return one(need_str(&affix, "startswith/endswith arg"));
}

template <class Pred>
bool all_chars(const std::string& s, Pred p) {
  auto cps = utf8_decode(s);
  if (cps.empty()) return false;
  return std::all_of(cps.begin(), cps.end(), p);
}

Value string_method(const std::string& s, const std::string& name, const CallArgs& a) {
  auto arg = [&](size_t k, const char* kw) { return a.get(k, kw); };
  auto int_arg = [&](size_t k, const char* kw, int64_t def) {
    const Value* v = arg(k, kw);
    return v && !v->is_none() ? v->as_int() : def;
  };
  if (name == "startswith" || name == "endswith") {
    const Value* p = arg(0, "prefix");
    if (!p) type_error(name + "() takes at least 1 argument");
    return Value::boolean(affix_match(s, *p, name == "startswith"));
  }
  if (name == "split" || name == "rsplit")
    return Value::list_of(py_split(s, arg(0, "sep"), int_arg(1, "maxsplit", -1), name == "rsplit"));
  if (name == "strip") return Value::string(py_strip(s, arg(0, "chars"), true, true));
  if (name == "lstrip") return Value::string(py_strip(s, arg(0, "chars"), true, false));
  if (name == "rstrip") return Value::string(py_strip(s, arg(0, "chars"), false, true));
  if (name == "upper") return Value::string(to_upper_str(s));
  if (name == "lower") return Value::string(to_lower_str(s));
  if (name == "title") return Value::string(py_title(s));
  if (name == "capitalize") {
    auto cps = utf8_decode(s);
    std::string out;
    for (size_t k = 0; k < cps.size(); ++k) {
      if (k == 0)
        append_title(out, cps[k]);
      else
        utf8_append(out, unicode_lower(cps[k]));
    }
    return Value::string(out);
  }
  if (name == "replace")
    return Value::string(py_replace(s, need_str(arg(0, "old"), "old"),
                                    need_str(arg(1, "new"), "new"), int_arg(2, "count", -1)));
  if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
    const std::string& sub = need_str(arg(0, "sub"), "substring");
    if (name == "count") {
      if (sub.empty()) return Value::integer(static_cast<int64_t>(utf8_decode(s).size()) + 1);
      int64_t n = 0;
      for (size_t f = find_substr(s, sub); f != std::string::npos;
           f = find_substr(s, sub, f + sub.size()))
        ++n;
      return Value::integer(n);
    }
    size_t f =
        (name == "find" || name == "index") ? find_substr(s, sub) : ReverseFinder(s, sub).find();
    if (f == std::string::npos) {
      if (name == "index" || name == "rindex") type_error("substring not found");
      return Value::integer(-1);
    }
    return Value::integer(static_cast<int64_t>(utf8_decode(s.substr(0, f)).size()));
  }
  if (name == "join") {
    const Value* it = arg(0, "iterable");
    if (!it) type_error("join() takes exactly one argument");
    std::string out;
    bool first = true;
    for (const Value& v : iterate(*it)) {
      const std::string& piece = need_str(&v, "join item");
      check_value_bytes(static_cast<uint64_t>(out.size()) + (first ? 0 : s.size()) + piece.size(),
                        "joined string");
      if (!first) out += s;
      first = false;
      out += piece;
    }
    return Value::string(std::move(out));
  }
  if (name == "splitlines") {
    List out;
    size_t b = 0;
    for (size_t k = 0; k < s.size(); ++k) {
      if (s[k] == '\n' || s[k] == '\r') {
        check_list_items(out.size() + 1, "list from splitlines()");
        out.push_back(Value::string(s.substr(b, k - b)));
        if (s[k] == '\r' && k + 1 < s.size() && s[k + 1] == '\n') ++k;
        b = k + 1;
      }
    }
    if (b < s.size()) out.push_back(Value::string(s.substr(b)));
    return Value::list_of(std::move(out));
  }
  if (name == "isdigit" || name == "isnumeric" || name == "isdecimal")
    return Value::boolean(all_chars(s, [](uint32_t c) { return c >= '0' && c <= '9'; }));
  if (name == "isalpha")
    return Value::boolean(
        all_chars(s, [](uint32_t c) { return is_upper_letter(c) || is_lower_letter(c); }));
  if (name == "isalnum")
    return Value::boolean(all_chars(s, [](uint32_t c) {
      return is_upper_letter(c) || is_lower_letter(c) || (c >= '0' && c <= '9');
    }));
  if (name == "isspace") return Value::boolean(all_chars(s, is_py_space));
  if (name == "isupper" || name == "islower") {
    auto cps = utf8_decode(s);
    bool any = false;
    for (uint32_t c : cps) {
      if (name == "isupper" ? is_lower_letter(c) : is_upper_letter(c)) return Value::boolean(false);
      any |= is_upper_letter(c) || is_lower_letter(c);
    }
    return Value::boolean(any);
  }
  type_error("unsupported string method '" + name + "'");
}

const std::set<std::string>& string_methods() {
  static const std::set<std::string> k = {
      "startswith", "endswith", "split",   "rsplit",     "strip",      "lstrip",  "rstrip",
      "upper",      "lower",    "title",   "capitalize", "replace",    "find",    "rfind",
      "index",      "rindex",   "count",   "join",       "splitlines", "isdigit", "isnumeric",
      "isdecimal",  "isalpha",  "isalnum", "isspace",    "isupper",    "islower"};
  return k;
}
const std::set<std::string>& dict_methods() {
  static const std::set<std::string> k = {"items",  "keys",  "values",  "get",
                                          "copy",   "pop",   "popitem", "setdefault",
                                          "update", "clear", "fromkeys"};
  return k;
}
const std::set<std::string>& list_methods() {
  static const std::set<std::string> k = {"index",   "count",  "copy", "append",
                                          "extend",  "insert", "pop",  "remove",
                                          "reverse", "sort",   "clear"};
  return k;
}

Value dict_method(const Value& d, const std::string& name, const CallArgs& a) {
  if (name == "items") {
    List out;
    for (const auto& kv : *d.dict) out.push_back(Value::list_of({kv.first, kv.second}, true));
    return Value::list_of(std::move(out));
  }
  if (name == "keys" || name == "values") {
    List out;
    for (const auto& kv : *d.dict) out.push_back(name == "keys" ? kv.first : kv.second);
    return Value::list_of(std::move(out));
  }
  if (name == "get") {
    const Value* key = a.get(0, "key");
    if (!key) type_error("get expected at least 1 argument");
    const Value* v = d.find(*key);
    if (v) return *v;
    const Value* def = a.get(1, "default");
    return def ? *def : Value::none();
  }
  if (name == "copy") return d;
  type_error("access to dict method '" + name + "' is unsafe: templates cannot modify dicts");
}

Value list_method(const Value& l, const std::string& name, const CallArgs& a) {
  if (name == "copy") return Value::list_of(*l.list);
  const Value* x = a.get(0, "value");
  if ((name == "index" || name == "count") && x) {
    int64_t n = 0;
    for (size_t k = 0; k < l.list->size(); ++k) {
      if (equals((*l.list)[k], *x)) {
        if (name == "index") return Value::integer(static_cast<int64_t>(k));
        ++n;
      }
    }
    if (name == "index") type_error("value is not in list");
    return Value::integer(n);
  }
  type_error("access to list method '" + name + "' is unsafe: templates cannot modify lists");
}

Value bound(const Value& obj, const std::string& name) {
  return Value::callable(
      [obj, name](CallArgs& a) -> Value {
        if (obj.is_string()) return string_method(obj.s(), name, a);
        if (obj.is_dict()) return dict_method(obj, name, a);
        return list_method(obj, name, a);
      },
      name);
}

std::string no_attr(const Value& obj, const std::string& name) {
  return "'" + std::string(obj.type_name()) + " object' has no attribute '" + name + "'";
}

// Python's slice.indices(): clamps start/stop for a sequence of length n.
void adjust_slice(int64_t n, const Value& b, const Value& e, const Value& st, int64_t& start,
                  int64_t& stop, int64_t& step) {
  step = st.is_none() || st.is_undefined() ? 1 : st.as_int();
  if (step == 0) type_error("slice step cannot be zero");
  auto clamp = [&](const Value& v, int64_t def) {
    if (v.is_none() || v.is_undefined()) return def;
    int64_t x = v.as_int();
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  start = clamp(b, step < 0 ? n - 1 : 0);
  stop = clamp(e, step < 0 ? -1 : n);
}

}  // namespace

void fail_undefined(const Value& v) {
  throw ChatTemplateError(0, v.s().empty() ? std::string("value is undefined") : v.s());
}

Value get_attr(const Value& obj, const std::string& name) {
  switch (obj.kind) {
    case Kind::Undefined:
      fail_undefined(obj);
    case Kind::Namespace: {
      const Value* v = obj.find(name);
      return v ? *v : Value::undefined(no_attr(obj, name));
    }
    case Kind::Dict: {
      if (dict_methods().count(name)) return bound(obj, name);
      const Value* v = obj.find(name);
      return v ? *v : Value::undefined(no_attr(obj, name));
    }
    case Kind::String:
      if (string_methods().count(name)) return bound(obj, name);
      break;
    case Kind::List:
      if (!obj.is_tuple && list_methods().count(name)) return bound(obj, name);
      if (obj.is_tuple && (name == "index" || name == "count")) return bound(obj, name);
      break;
    default:
      break;
  }
  return Value::undefined(no_attr(obj, name));
}

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (obj.is_dict() || obj.kind == Kind::Namespace) {
    const Value* v = obj.find(key);
    if (v) return *v;
  } else if ((obj.is_list() || obj.is_string()) &&
             (key.kind == Kind::Int || key.kind == Kind::Bool)) {
    int64_t idx = key.as_int();
    if (obj.is_list()) {
      int64_t n = static_cast<int64_t>(obj.list->size());
      if (idx < 0) idx += n;
      if (idx >= 0 && idx < n) return (*obj.list)[idx];
    } else {
      const std::string& s = obj.s();
      int64_t n = utf8_length(s);
      if (idx < 0) idx += n;
      if (idx >= 0 && idx < n) return Value::string(utf8_char_at(s, idx));
    }
    return Value::undefined(std::string(obj.type_name()) + " index out of range");
  }
  if (key.is_string()) return get_attr(obj, key.s());
  return Value::undefined(std::string("'") + obj.type_name() + " object' has no attribute " +
                          key.repr());
}

Value slice_value(const Value& obj, const Value& b, const Value& e, const Value& st) {
  if (obj.is_undefined()) fail_undefined(obj);
  if (!obj.is_list() && !obj.is_string())
    type_error(std::string("'") + obj.type_name() + "' object is not subscriptable");
  std::vector<uint32_t> cps;
  int64_t n;
  if (obj.is_string()) {
    cps = utf8_decode(obj.s());
    n = static_cast<int64_t>(cps.size());
  } else {
    n = static_cast<int64_t>(obj.list->size());
  }
  int64_t start, stop, step;
  adjust_slice(n, b, e, st, start, stop, step);
  // Count the picked items first and index as start + j * step: stepping `k += step` would
  // overflow for a step near 2**63 and read far outside the sequence.
  const uint64_t ustep = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  uint64_t count = 0;
  if (step > 0 && start < stop)
    count = (static_cast<uint64_t>(stop - start) - 1) / ustep + 1;
  else if (step < 0 && start > stop)
    count = (static_cast<uint64_t>(start - stop) - 1) / ustep + 1;
  List items;
  std::string out;
  if (!obj.is_string()) items.reserve(count);
  for (uint64_t j = 0; j < count; ++j) {
    // j * ustep < |stop - start| <= n here, so this stays inside [0, n).
    const int64_t k = step > 0 ? start + static_cast<int64_t>(j * ustep)
                               : start - static_cast<int64_t>(j * ustep);
    if (obj.is_string())
      utf8_append(out, cps[k]);
    else
      items.push_back((*obj.list)[k]);
  }
  if (obj.is_string()) return Value::string(out);
  return Value::list_of(std::move(items), obj.is_tuple);
}

List iterate(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined:
      return {};
    case Kind::List:
      return *v.list;
    case Kind::Dict: {
      List out;
      for (const auto& kv : *v.dict) out.push_back(kv.first);
      return out;
    }
    case Kind::String: {
      check_list_items(static_cast<uint64_t>(utf8_length(v.s())), "list of characters");
      List out;
      for (uint32_t c : utf8_decode(v.s())) {
        std::string s;
        utf8_append(s, c);
        out.push_back(Value::string(s));
      }
      return out;
    }
    default:
      type_error(std::string("'") + v.type_name() + "' object is not iterable");
  }
}

int64_t length_of(const Value& v) {
  switch (v.kind) {
    case Kind::Undefined:
      return 0;
    case Kind::List:
      return static_cast<int64_t>(v.list->size());
    case Kind::Dict:
      return static_cast<int64_t>(v.dict->size());
    case Kind::String:
      return utf8_length(v.s());
    default:
      type_error(std::string("object of type '") + v.type_name() + "' has no len()");
  }
}

}  // namespace vllm::tok::jinja
