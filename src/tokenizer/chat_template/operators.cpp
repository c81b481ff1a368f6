// Python operators on template values: int/float promotion, floor division and modulo signs,
// str/list concatenation and repetition, membership and chained-comparison pieces. Integer
// results are range-checked (Python has big ints, we have int64), sizes of built strings and
// lists are checked before anything is allocated.
#include "tokenizer/chat_template/operators.h"

#include <algorithm>
#include <cmath>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::tok::jinja {
namespace {

[[noreturn]] void type_error(const std::string& msg) { throw ChatTemplateError(0, msg); }

std::string op_error(const char* op, const Value& a, const Value& b) {
  return std::string("unsupported operand type(s) for ") + op + ": '" + a.type_name() + "' and '" +
         b.type_name() + "'";
}

[[noreturn]] void int_overflow(int64_t a, const std::string& op, int64_t b) {
  type_error("integer overflow: " + std::to_string(a) + " " + op + " " + std::to_string(b) +
             " does not fit in 64 bits");
}

Value repeat(const Value& seq, int64_t n) {
  if (n <= 0) return seq.is_string() ? Value::string("") : Value::list_of({}, seq.is_tuple);
  const uint64_t count = static_cast<uint64_t>(n);
  if (seq.is_string()) {
    const std::string& s = seq.s();
    if (!s.empty() && count > UINT64_MAX / s.size()) check_value_bytes(UINT64_MAX, "string");
    const uint64_t total = s.size() * count;
    check_value_bytes(total, "string repetition");
    // Doubling copies: 'x' * 30000000 is ~25 memcpy calls, not 30 million appends.
    std::string out;
    out.reserve(total);
    out = s;
    while (out.size() < total)
      out.append(out, 0, std::min<uint64_t>(out.size(), total - out.size()));
    return Value::string(std::move(out));
  }
  const size_t items = seq.list->size();
  // An empty list stays empty however large n is ([] * 10**12 looped 10^12 times).
  if (items == 0) return Value::list_of({}, seq.is_tuple);
  if (count > UINT64_MAX / items) check_list_items(UINT64_MAX, "list");
  check_list_items(items * count, "list repetition");
  List out;
  out.reserve(items * count);
  for (uint64_t k = 0; k < count; ++k) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return Value::list_of(std::move(out), seq.is_tuple);
}

Value concat_strings(const std::string& a, const std::string& b) {
  check_value_bytes(static_cast<uint64_t>(a.size()) + b.size(), "string concatenation");
  std::string out;
  out.reserve(a.size() + b.size());
  out += a;
  out += b;
  return Value::string(std::move(out));
}

// Python's ** on two ints with a non-negative exponent: square-and-multiply, so a huge
// exponent costs 63 steps, not 10**13 multiplications.
int64_t int_pow(int64_t base, int64_t exp) {
  const int64_t b0 = base, e0 = exp;
  int64_t r = 1;
  while (exp > 0) {
    if ((exp & 1) && __builtin_mul_overflow(r, base, &r)) int_overflow(b0, "**", e0);
    exp >>= 1;
    if (exp > 0 && __builtin_mul_overflow(base, base, &base)) {
      // |base| >= 2 here and bits remain, so the result would be at least base**2.
      int_overflow(b0, "**", e0);
    }
  }
  return r;
}

Value float_pow(double x, double y) {
  if (x == 0.0 && y < 0) type_error("0.0 cannot be raised to a negative power");
  if (x < 0 && std::isfinite(y) && y != std::floor(y))
    type_error("negative number cannot be raised to a fractional power (the result is complex)");
  double r = std::pow(x, y);
  if (std::isinf(r) && std::isfinite(x) && std::isfinite(y))
    type_error("(34, 'Numerical result out of range')");
  return Value::real(r);
}

Value int_arithmetic(const std::string& op, int64_t x, int64_t y) {
  int64_t r = 0;
  if (op == "+") {
    if (__builtin_add_overflow(x, y, &r)) int_overflow(x, op, y);
    return Value::integer(r);
  }
  if (op == "-") {
    if (__builtin_sub_overflow(x, y, &r)) int_overflow(x, op, y);
    return Value::integer(r);
  }
  if (op == "*") {
    if (__builtin_mul_overflow(x, y, &r)) int_overflow(x, op, y);
    return Value::integer(r);
  }
  if (op == "//" || op == "%") {
    if (y == 0) type_error(op == "//" ? "integer division or modulo by zero" : "modulo by zero");
    // INT64_MIN / -1 traps on x86 (SIGFPE); Python's answer is 2**63 for // and 0 for %.
    if (y == -1) {
      if (op == "%") return Value::integer(0);
      if (x == INT64_MIN) int_overflow(x, op, y);
      return Value::integer(-x);
    }
    int64_t q = x / y, m = x % y;
    if (m != 0 && ((m < 0) != (y < 0))) {
      --q;
      m += y;
    }
    return Value::integer(op == "%" ? m : q);
  }
  if (op == "**") {
    if (y < 0) {
      if (x == 0) type_error("0.0 cannot be raised to a negative power");
      return float_pow(static_cast<double>(x), static_cast<double>(y));
    }
    return Value::integer(int_pow(x, y));
  }
  type_error("unknown operator " + op);
}

Value float_arithmetic(const std::string& op, double x, double y) {
  if (op == "+") return Value::real(x + y);
  if (op == "-") return Value::real(x - y);
  if (op == "*") return Value::real(x * y);
  if (op == "//" || op == "%") {
    if (y == 0.0) type_error(op == "//" ? "integer division or modulo by zero" : "modulo by zero");
    double m = std::fmod(x, y);
    if (m != 0 && ((m < 0) != (y < 0))) m += y;
    return op == "%" ? Value::real(m) : Value::real(std::floor((x - m) / y + 0.5));
  }
  if (op == "**") return float_pow(x, y);
  type_error("unknown operator " + op);
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      type_error(std::string("'in <string>' requires string as left operand, not ") +
                 item.type_name());
    tick(1 + container.s().size() / 256);
    return find_substr(container.s(), item.s()) != std::string::npos;
  }
  if (container.is_dict()) return container.find(item) != nullptr;
  if (container.is_list()) {
    for (const Value& x : *container.list)
      if (equals(x, item)) return true;
    return false;
  }
  if (container.is_undefined()) return false;
  type_error(std::string("argument of type '") + container.type_name() + "' is not iterable");
}

}  // namespace

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") {
    // Strings join without an intermediate str() copy (the common `prefix ~ message` case).
    if (a.is_string() && b.is_string()) return concat_strings(a.s(), b.s());
    std::string x = a.str();
    return concat_strings(x, b.str());
  }
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  const bool nums = a.is_number() && b.is_number();
  const bool fl = nums && (a.kind == Kind::Float || b.kind == Kind::Float);
  if (op == "+") {
    if (a.is_string() && b.is_string()) return concat_strings(a.s(), b.s());
    if (a.is_list() && b.is_list() && a.is_tuple == b.is_tuple) {
      check_list_items(static_cast<uint64_t>(a.list->size()) + b.list->size(), "list");
      List out;
      out.reserve(a.list->size() + b.list->size());
      out.insert(out.end(), a.list->begin(), a.list->end());
      out.insert(out.end(), b.list->begin(), b.list->end());
      return Value::list_of(std::move(out), a.is_tuple);
    }
    if (!nums) {
      if (a.is_string())
        type_error(std::string("can only concatenate str (not \"") + b.type_name() + "\") to str");
      if (a.is_list())
        type_error(std::string("can only concatenate list (not \"") + b.type_name() +
                   "\") to list");
      type_error(op_error("+", a, b));
    }
  }
  if (op == "*" && !nums) {
    if ((a.is_string() || a.is_list()) && (b.kind == Kind::Int || b.kind == Kind::Bool))
      return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.kind == Kind::Int || a.kind == Kind::Bool))
      return repeat(b, a.as_int());
    type_error(op_error("*", a, b));
  }
  if (!nums) type_error(op_error(op.c_str(), a, b));
  if (op == "/") {
    if (b.as_double() == 0.0) type_error("division by zero");
    return Value::real(a.as_double() / b.as_double());
  }
  return fl ? float_arithmetic(op, a.as_double(), b.as_double())
            : int_arithmetic(op, a.as_int(), b.as_int());
}

Value unary(bool negate, const Value& v) {
  if (v.is_undefined()) fail_undefined(v);
  if (!v.is_number())
    type_error(std::string("bad operand type for unary ") + (negate ? "-" : "+") + ": '" +
               v.type_name() + "'");
  if (!negate) return v.kind == Kind::Bool ? Value::integer(v.as_int()) : v;
  if (v.kind == Kind::Float) return Value::real(-v.f);
  int64_t x = v.as_int();
  if (x == INT64_MIN) type_error("integer overflow: -(" + std::to_string(x) + ") does not fit");
  return Value::integer(-x);
}

bool compare(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return equals(a, b);
  if (op == "!=") return !equals(a, b);
  if (op == "in") return contains(b, a);
  if (op == "notin") return !contains(b, a);
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  if (op == "<") return less_than(a, b);
  if (op == ">") return less_than(b, a);
  if (op == "<=") return less_than(a, b) || equals(a, b);
  return less_than(b, a) || equals(a, b);
}

}  // namespace vllm::tok::jinja
