// Python object semantics for chat-template values: str()/repr(), truthiness, ==, <,
// conversion from nlohmann::json and json.dumps() as transformers' tojson filter calls it.
#include "tokenizer/chat_template/value.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::tok::jinja {

namespace {

const std::string& empty_string() {
  static const std::string k;
  return k;
}

std::shared_ptr<const std::string> share(std::string s) {
  if (s.empty()) return nullptr;
  return std::make_shared<const std::string>(std::move(s));
}

constexpr uint64_t kItemBytes = sizeof(Value);

uint64_t saturating_add(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

uint16_t container_depth(const Value& v) {
  return v.kind == Kind::List || v.kind == Kind::Dict ? v.depth : 0;
}

// Depth and weight of a container from its items (see Value::depth / Value::weight).
void measure(Value& v, const List* list, const Dict* dict) {
  uint64_t w = 0;
  int d = 0;
  if (list) {
    for (const Value& x : *list) {
      w = saturating_add(w, kItemBytes + x.size_weight());
      d = std::max<int>(d, container_depth(x));
    }
  } else {
    for (const auto& kv : *dict) {
      w = saturating_add(w, 2 * kItemBytes + kv.first.size_weight() + kv.second.size_weight());
      d = std::max<int>(d, std::max(container_depth(kv.first), container_depth(kv.second)));
    }
  }
  // Input conversion and the checked factories both stop at max_value_depth, far below 65535.
  v.depth = static_cast<uint16_t>(std::min(d + 1, 65535));
  v.weight = w;
}

// Enforces max_value_depth / max_value_bytes on a container a template built, and charges
// the render for its allocation.
void check_container(const Value& v, size_t items, const char* what) {
  const ChatTemplateLimits& l = current_limits();
  if (v.depth > l.max_value_depth)
    limit_exceeded(std::string(what) + " nesting depth", std::to_string(l.max_value_depth),
                   "max_value_depth");
  if (v.weight > l.max_value_bytes)
    limit_exceeded(what, format_bytes(l.max_value_bytes), "max_value_bytes");
  if (Budget* b = current_budget()) b->charge_alloc(items * kItemBytes);
}

}  // namespace

const std::string& Value::s() const { return text ? *text : empty_string(); }

uint64_t Value::size_weight() const {
  switch (kind) {
    case Kind::String:
      return text ? text->size() : 0;
    case Kind::List:
    case Kind::Dict:
      return weight;
    default:
      return 0;
  }
}

Value Value::undefined(std::string hint) {
  Value v;
  v.kind = Kind::Undefined;
  v.text = share(std::move(hint));
  return v;
}
Value Value::none() {
  Value v;
  v.kind = Kind::None;
  return v;
}
Value Value::boolean(bool x) {
  Value v;
  v.kind = Kind::Bool;
  v.b = x;
  return v;
}
Value Value::integer(int64_t x) {
  Value v;
  v.kind = Kind::Int;
  v.i = x;
  return v;
}
Value Value::real(double x) {
  Value v;
  v.kind = Kind::Float;
  v.f = x;
  return v;
}
Value Value::string(std::string x) {
  check_value_bytes(x.size(), "string");
  if (Budget* b = current_budget()) b->charge_alloc(x.size());
  Value v;
  v.kind = Kind::String;
  v.text = share(std::move(x));
  return v;
}
Value Value::list_of(List x, bool tuple) {
  Value v = unchecked_list(std::move(x));
  v.is_tuple = tuple;
  check_container(v, v.list->size(), tuple ? "tuple" : "list");
  return v;
}
Value Value::dict_of(Dict x) {
  Value v = unchecked_dict(std::move(x));
  check_container(v, 2 * v.dict->size(), "dict");
  return v;
}
Value Value::unchecked_string(std::string x) {
  Value v;
  v.kind = Kind::String;
  v.text = share(std::move(x));
  return v;
}
Value Value::unchecked_list(List x) {
  Value v;
  v.kind = Kind::List;
  measure(v, &x, nullptr);
  v.list = std::make_shared<const List>(std::move(x));
  return v;
}
Value Value::unchecked_dict(Dict x) {
  return unchecked_dict(std::make_shared<const Dict>(std::move(x)));
}
Value Value::unchecked_dict(std::shared_ptr<const Dict> x) {
  Value v;
  v.kind = Kind::Dict;
  measure(v, nullptr, x.get());
  v.dict = std::move(x);
  return v;
}
std::atomic<int64_t> g_live_namespaces{0};

int64_t live_namespaces() { return g_live_namespaces.load(std::memory_order_relaxed); }

Value Value::namespace_of(Dict x) {
  Value v;
  v.kind = Kind::Namespace;
  g_live_namespaces.fetch_add(1, std::memory_order_relaxed);
  v.ns = std::shared_ptr<Dict>(new Dict(std::move(x)), [](Dict* d) {
    g_live_namespaces.fetch_sub(1, std::memory_order_relaxed);
    delete d;
  });
  if (Budget* b = current_budget()) {
    b->charge_alloc((2 * v.ns->size() + 1) * kItemBytes);
    b->adopt_namespace(v.ns);
  }
  return v;
}
Value Value::callable(Function f, std::string name) {
  Value v;
  v.kind = Kind::Callable;
  v.fn = std::make_shared<const Function>(std::move(f));
  v.text = share(std::move(name));
  return v;
}

bool Value::truthy() const {
  switch (kind) {
    case Kind::Undefined:
    case Kind::None:
      return false;
    case Kind::Bool:
      return b;
    case Kind::Int:
      return i != 0;
    case Kind::Float:
      return f != 0.0;
    case Kind::String:
      return !s().empty();
    case Kind::List:
      return !list->empty();
    case Kind::Dict:
      return !dict->empty();
    default:
      return true;
  }
}

const char* Value::type_name() const {
  switch (kind) {
    case Kind::Undefined:
      return "Undefined";
    case Kind::None:
      return "NoneType";
    case Kind::Bool:
      return "bool";
    case Kind::Int:
      return "int";
    case Kind::Float:
      return "float";
    case Kind::String:
      return "str";
    case Kind::List:
      return is_tuple ? "tuple" : "list";
    case Kind::Dict:
      return "dict";
    case Kind::Namespace:
      return "Namespace";
    default:
      return "function";
  }
}

double Value::as_double() const {
  if (kind == Kind::Float) return f;
  if (kind == Kind::Int) return static_cast<double>(i);
  if (kind == Kind::Bool) return b ? 1.0 : 0.0;
  throw ChatTemplateError(0, std::string("expected a number, got ") + type_name());
}

int64_t Value::as_int() const {
  if (kind == Kind::Int) return i;
  if (kind == Kind::Bool) return b ? 1 : 0;
  throw ChatTemplateError(0, std::string("expected an integer, got ") + type_name());
}

const Value* Value::find(const Value& key) const {
  const Dict* d = kind == Kind::Dict ? dict.get() : kind == Kind::Namespace ? ns.get() : nullptr;
  if (!d) return nullptr;
  tick(d->size());
  for (const auto& kv : *d)
    if (equals(kv.first, key)) return &kv.second;
  return nullptr;
}

const Value* Value::find(const std::string& key) const {
  const Dict* d = kind == Kind::Dict ? dict.get() : kind == Kind::Namespace ? ns.get() : nullptr;
  if (!d) return nullptr;
  tick(d->size());
  for (const auto& kv : *d)
    if (kv.first.kind == Kind::String && kv.first.s() == key) return &kv.second;
  return nullptr;
}

const Value* CallArgs::get(size_t idx, const char* name) const {
  if (idx < args.size()) return &args[idx];
  for (const auto& kv : kwargs)
    if (kv.first == name) return &kv.second;
  return nullptr;
}

std::string python_float_repr(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  // sci looks like "-1.2345e+02": split sign, digits and the decimal exponent.
  std::string sign;
  size_t p = 0;
  if (sci[0] == '-') {
    sign = "-";
    p = 1;
  }
  size_t e = sci.find('e');
  std::string digits;
  for (size_t k = p; k < e; ++k)
    if (sci[k] != '.') digits += sci[k];
  int exp10 = std::stoi(sci.substr(e + 1));
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = sign;
  if (exp10 >= -4 && exp10 < 16) {
    if (exp10 < 0) {
      out += "0." + std::string(-exp10 - 1, '0') + digits;
    } else if (static_cast<int>(digits.size()) <= exp10 + 1) {
      out += digits + std::string(exp10 + 1 - digits.size(), '0') + ".0";
    } else {
      out += digits.substr(0, exp10 + 1) + "." + digits.substr(exp10 + 1);
    }
  } else {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char eb[16];
    std::snprintf(eb, sizeof(eb), "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    out += eb;
  }
  return out;
}

namespace {

// repr() of a str: CPython picks single quotes unless the text has ' and no ". Runs of
// characters that print as they are go out in one append, and the scan is charged as it goes.
void repr_string(std::string& out, const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char q = (has_single && !has_double) ? '"' : '\'';
  out += q;
  ScanCharge charge;
  size_t run = 0;  // start of the pending run of plain characters
  for (size_t k = 0; k < s.size(); ++k) {
    const unsigned char c = static_cast<unsigned char>(s[k]);
    if (c >= 0x20 && c != 0x7f && c != static_cast<unsigned char>(q) && c != '\\') {
      charge.at(k);
      continue;
    }
    out.append(s, run, k - run);
    run = k + 1;
    if (c == static_cast<unsigned char>(q) || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      char b[8];
      std::snprintf(b, sizeof(b), "\\x%02x", c);
      out += b;
    }
  }
  out.append(s, run, s.size() - run);
  charge.done(s.size());
  out += q;
}

// Builds str() / repr() text. Lists and dicts were depth-checked when built, but namespaces
// are mutable and can nest through each other without end, so the printer counts its own
// depth; a namespace that contains itself prints as {...}, as CPython's repr guard does.
class Printer {
 public:
  std::string out;

  void str(const Value& v) {
    switch (v.kind) {
      case Kind::Undefined:
        return;
      case Kind::None:
        out += "None";
        return;
      case Kind::Bool:
        out += v.b ? "True" : "False";
        return;
      case Kind::Int:
        out += std::to_string(v.i);
        return;
      case Kind::Float:
        out += python_float_repr(v.f);
        return;
      case Kind::String:
        out += v.s();
        grew();
        return;
      case Kind::List:
      case Kind::Dict:
        repr(v);
        return;
      case Kind::Namespace:
        namespace_repr(v);
        return;
      default:
        out += "<function " + v.s() + ">";
    }
  }

  void repr(const Value& v) {
    switch (v.kind) {
      case Kind::String:
        repr_string(out, v.s());
        grew();
        return;
      case Kind::List: {
        enter();
        out += v.is_tuple ? "(" : "[";
        for (size_t k = 0; k < v.list->size(); ++k) {
          if (k) out += ", ";
          repr((*v.list)[k]);
        }
        if (v.is_tuple && v.list->size() == 1) out += ",";
        out += v.is_tuple ? ")" : "]";
        leave();
        return;
      }
      case Kind::Dict:
        enter();
        items(*v.dict);
        leave();
        return;
      default:
        str(v);
    }
  }

 private:
  void namespace_repr(const Value& v) {
    const Dict* d = v.ns.get();
    if (std::find(open_.begin(), open_.end(), d) != open_.end()) {
      out += "<Namespace {...}>";
      return;
    }
    enter();
    open_.push_back(d);
    out += "<Namespace ";
    items(*d);
    out += ">";
    open_.pop_back();
    leave();
  }

  void items(const Dict& d) {
    out += "{";
    bool first = true;
    for (const auto& kv : d) {
      if (!first) out += ", ";
      first = false;
      repr(kv.first);
      out += ": ";
      repr(kv.second);
    }
    out += "}";
  }

  void enter() {
    const ChatTemplateLimits& l = current_limits();
    if (++depth_ > l.max_value_depth)
      limit_exceeded("nesting depth of the printed value", std::to_string(l.max_value_depth),
                     "max_value_depth");
    grew();
  }
  void leave() { --depth_; }
  void grew() {
    tick();
    check_value_bytes(out.size(), "printed value");
  }

  int depth_ = 0;
  std::vector<const Dict*> open_;
};

}  // namespace

std::string Value::repr() const {
  Printer p;
  p.repr(*this);
  return std::move(p.out);
}

std::string Value::str() const {
  if (kind == Kind::String) return s();
  Printer p;
  p.str(*this);
  return std::move(p.out);
}

bool equals(const Value& a, const Value& b) {
  tick();
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Kind::Undefined:
    case Kind::None:
      return true;
    case Kind::String:
      return a.s() == b.s();
    case Kind::List:
      // Python compares items with an identity shortcut, so the same list is always equal
      // to itself (even holding NaN); it also keeps comparing shared sub-lists cheap.
      if (a.list == b.list) return true;
      if (a.list->size() != b.list->size()) return false;
      for (size_t k = 0; k < a.list->size(); ++k)
        if (!equals((*a.list)[k], (*b.list)[k])) return false;
      return true;
    case Kind::Dict:
      if (a.dict == b.dict) return true;
      if (a.dict->size() != b.dict->size()) return false;
      for (const auto& kv : *a.dict) {
        const Value* other = b.find(kv.first);
        if (!other || !equals(kv.second, *other)) return false;
      }
      return true;
    case Kind::Namespace:
      return a.ns == b.ns;
    default:
      return a.fn == b.fn;
  }
}

bool less_than(const Value& a, const Value& b) {
  tick();
  if (a.is_number() && b.is_number()) {
    if (a.kind == Kind::Float || b.kind == Kind::Float) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  // UTF-8 byte order equals code point order, which is what Python compares.
  if (a.is_string() && b.is_string()) return a.s() < b.s();
  if (a.is_list() && b.is_list()) {
    size_t n = std::min(a.list->size(), b.list->size());
    for (size_t k = 0; k < n; ++k) {
      const Value& x = (*a.list)[k];
      const Value& y = (*b.list)[k];
      if (!equals(x, y)) return less_than(x, y);
    }
    return a.list->size() < b.list->size();
  }
  throw ChatTemplateError(0, std::string("'<' not supported between instances of '") +
                                 a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace vllm::tok::jinja
