// Statement execution and expression evaluation for chat templates. Operators follow Python
// (int/float promotion, floor division and modulo signs, str/list concatenation and repetition,
// chained comparisons, `and`/`or` returning an operand); Undefined follows jinja2's default
// Undefined (prints empty, iterates empty, fails on arithmetic, attribute access and calls).
#include "tokenizer/chat_template/interpreter.h"

#include <cmath>

#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/error.h"

namespace vllm::tok::jinja {
namespace {

[[noreturn]] void type_error(const std::string& msg) { throw ChatTemplateError(0, msg); }

struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  const Value* lookup(const std::string& name) const {
    for (const Scope* s = this; s; s = s->parent.get())
      for (const auto& kv : s->vars)
        if (kv.first == name) return &kv.second;
    return nullptr;
  }
  void set(const std::string& name, Value v) {
    for (auto& kv : vars)
      if (kv.first == name) {
        kv.second = std::move(v);
        return;
      }
    vars.emplace_back(name, std::move(v));
  }
};
using ScopePtr = std::shared_ptr<Scope>;

ScopePtr child(const ScopePtr& parent) {
  auto s = std::make_shared<Scope>();
  s->parent = parent;
  return s;
}

std::string op_error(const char* op, const Value& a, const Value& b) {
  return std::string("unsupported operand type(s) for ") + op + ": '" + a.type_name() + "' and '" +
         b.type_name() + "'";
}

Value repeat(const Value& seq, int64_t n) {
  if (seq.is_string()) {
    std::string out;
    for (int64_t k = 0; k < n; ++k) out += seq.s;
    return Value::string(out);
  }
  List out;
  for (int64_t k = 0; k < n; ++k) out.insert(out.end(), seq.list->begin(), seq.list->end());
  return Value::list_of(std::move(out), seq.is_tuple);
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (op == "~") return Value::string(a.str() + b.str());
  if (a.is_undefined()) fail_undefined(a);
  if (b.is_undefined()) fail_undefined(b);
  bool nums = a.is_number() && b.is_number();
  bool fl = nums && (a.kind == Kind::Float || b.kind == Kind::Float);
  if (op == "+") {
    if (nums)
      return fl ? Value::real(a.as_double() + b.as_double())
                : Value::integer(a.as_int() + b.as_int());
    if (a.is_string() && b.is_string()) return Value::string(a.s + b.s);
    if (a.is_list() && b.is_list() && a.is_tuple == b.is_tuple) {
      List out = *a.list;
      out.insert(out.end(), b.list->begin(), b.list->end());
      return Value::list_of(std::move(out), a.is_tuple);
    }
    if (a.is_string())
      type_error(std::string("can only concatenate str (not \"") + b.type_name() + "\") to str");
    if (a.is_list())
      type_error(std::string("can only concatenate list (not \"") + b.type_name() + "\") to list");
    type_error(op_error("+", a, b));
  }
  if (op == "*") {
    if (nums)
      return fl ? Value::real(a.as_double() * b.as_double())
                : Value::integer(a.as_int() * b.as_int());
    if ((a.is_string() || a.is_list()) && (b.kind == Kind::Int || b.kind == Kind::Bool))
      return repeat(a, b.as_int());
    if ((b.is_string() || b.is_list()) && (a.kind == Kind::Int || a.kind == Kind::Bool))
      return repeat(b, a.as_int());
    type_error(op_error("*", a, b));
  }
  if (!nums) type_error(op_error(op.c_str(), a, b));
  if (op == "-")
    return fl ? Value::real(a.as_double() - b.as_double())
              : Value::integer(a.as_int() - b.as_int());
  if (op == "/") {
    if (b.as_double() == 0.0) type_error("division by zero");
    return Value::real(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (b.as_double() == 0.0)
      type_error(op == "//" ? "integer division or modulo by zero" : "modulo by zero");
    if (fl) {
      double x = a.as_double(), y = b.as_double();
      double m = std::fmod(x, y);
      if (m != 0 && ((m < 0) != (y < 0))) m += y;
      return op == "%" ? Value::real(m) : Value::real(std::floor((x - m) / y + 0.5));
    }
    int64_t x = a.as_int(), y = b.as_int();
    int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) {
      --q;
      r += y;
    }
    return op == "%" ? Value::integer(r) : Value::integer(q);
  }
  if (op == "**") {
    if (!fl && b.as_int() >= 0) {
      int64_t r = 1, base = a.as_int();
      for (int64_t k = 0; k < b.as_int(); ++k) r *= base;
      return Value::integer(r);
    }
    return Value::real(std::pow(a.as_double(), b.as_double()));
  }
  type_error("unknown operator " + op);
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      type_error(std::string("'in <string>' requires string as left operand, not ") +
                 item.type_name());
    return container.s.find(item.s) != std::string::npos;
  }
  if (container.is_dict()) return container.find(item) != nullptr;
  if (container.is_list() || container.is_undefined()) {
    for (const Value& x : iterate(container))
      if (equals(x, item)) return true;
    return false;
  }
  type_error(std::string("argument of type '") + container.type_name() + "' is not iterable");
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

enum class Flow { Normal, Break, Continue };

class Interpreter {
 public:
  explicit Interpreter(std::string& out) : out_(&out) {}

  Flow exec_body(const Body& body, const ScopePtr& sc) {
    for (const auto& s : body) {
      Flow f = exec(*s, sc);
      if (f != Flow::Normal) return f;
    }
    return Flow::Normal;
  }

 private:
  Flow exec(const Stmt& s, const ScopePtr& sc) {
    try {
      return exec_inner(s, sc);
    } catch (const ChatTemplateError& e) {
      if (e.line() == 0) throw ChatTemplateError(s.line, e.message());
      throw;
    }
  }

  std::string capture(const Body& body, const ScopePtr& sc) {
    std::string buf;
    std::string* saved = out_;
    out_ = &buf;
    try {
      exec_body(body, sc);
    } catch (...) {
      out_ = saved;
      throw;
    }
    out_ = saved;
    return buf;
  }

  void assign(const std::vector<std::string>& targets, const Value& v, Scope& sc) {
    if (targets.size() == 1) {
      sc.set(targets[0], v);
      return;
    }
    List items = iterate(v);
    if (items.size() != targets.size())
      type_error("cannot unpack " + std::to_string(items.size()) + " values into " +
                 std::to_string(targets.size()) + " names");
    for (size_t k = 0; k < targets.size(); ++k) sc.set(targets[k], items[k]);
  }

  Flow exec_inner(const Stmt& s, const ScopePtr& sc) {
    switch (s.kind) {
      case StmtKind::Data:
        *out_ += s.text;
        return Flow::Normal;
      case StmtKind::Output:
        *out_ += eval(*s.expr, sc).str();
        return Flow::Normal;
      case StmtKind::If:
        for (size_t k = 0; k < s.conds.size(); ++k)
          if (eval(*s.conds[k], sc).truthy()) return exec_body(s.bodies[k], sc);
        return exec_body(s.else_body, sc);
      case StmtKind::For:
        exec_for(s, sc);
        return Flow::Normal;
      case StmtKind::Set: {
        Value v = eval(*s.expr, sc);
        if (s.attr.empty()) {
          assign(s.targets, v, *sc);
          return Flow::Normal;
        }
        const Value* ns = sc->lookup(s.targets[0]);
        if (!ns || ns->kind != Kind::Namespace)
          type_error("cannot assign attribute on non-namespace object");
        if (!s.attr.empty() && s.attr[0] == '_')
          type_error("Chat templates cannot store underscore-prefixed attributes on a namespace");
        for (auto& kv : *ns->ns)
          if (kv.first.is_string() && kv.first.s == s.attr) {
            kv.second = v;
            return Flow::Normal;
          }
        ns->ns->emplace_back(Value::string(s.attr), v);
        return Flow::Normal;
      }
      case StmtKind::SetBlock:
        sc->set(s.targets[0], Value::string(capture(s.body, child(sc))));
        return Flow::Normal;
      case StmtKind::Macro:
        sc->set(s.name, make_macro(s, sc, nullptr));
        return Flow::Normal;
      case StmtKind::CallBlock: {
        const Expr& call = *s.expr;
        Value fn = eval(*call.a, sc);
        CallArgs args = eval_args(call, sc);
        args.kwargs.emplace_back("caller", make_macro(s, sc, nullptr));
        *out_ += invoke(fn, args).str();
        return Flow::Normal;
      }
      case StmtKind::FilterBlock: {
        Value text = Value::string(capture(s.body, child(sc)));
        *out_ += apply_filter(s.expr->name, text, eval_args(*s.expr, sc)).str();
        return Flow::Normal;
      }
      case StmtKind::Break:
        return Flow::Break;
      case StmtKind::Continue:
        return Flow::Continue;
      case StmtKind::Scope:
        return exec_body(s.body, child(sc));
    }
    return Flow::Normal;
  }

  void exec_for(const Stmt& s, const ScopePtr& sc) {
    List items = iterate(eval(*s.expr, sc));
    if (s.cond) {
      List kept;
      for (const Value& item : items) {
        auto probe = child(sc);
        assign(s.targets, item, *probe);
        if (eval(*s.cond, probe).truthy()) kept.push_back(item);
      }
      items = std::move(kept);
    }
    // Jinja2 clears its "run the else block" flag at the end of the loop body, so a body that
    // always `continue`s or `break`s before its end still gets the else block.
    bool body_completed = false;
    const int64_t n = static_cast<int64_t>(items.size());
    for (int64_t k = 0; k < n; ++k) {
      auto body_scope = child(sc);
      assign(s.targets, items[k], *body_scope);
      Dict loop;
      auto put = [&](const char* key, Value v) {
        loop.emplace_back(Value::string(key), std::move(v));
      };
      put("index", Value::integer(k + 1));
      put("index0", Value::integer(k));
      put("revindex", Value::integer(n - k));
      put("revindex0", Value::integer(n - k - 1));
      put("first", Value::boolean(k == 0));
      put("last", Value::boolean(k == n - 1));
      put("length", Value::integer(n));
      put("depth", Value::integer(1));
      put("depth0", Value::integer(0));
      put("previtem", k > 0 ? items[k - 1] : Value::undefined("there is no previous item"));
      put("nextitem", k + 1 < n ? items[k + 1] : Value::undefined("there is no next item"));
      put("cycle", Value::callable(
                       [k](CallArgs& a) {
                         if (a.args.empty()) type_error("no items for cycling given");
                         return a.args[k % a.args.size()];
                       },
                       "cycle"));
      body_scope->set("loop", Value::dict_of(std::move(loop)));
      Flow f = exec_body(s.body, body_scope);
      if (f == Flow::Break) break;
      if (f == Flow::Normal) body_completed = true;
    }
    if (!body_completed) exec_body(s.else_body, child(sc));
  }

  // Macros (and the `caller` of a call block) close over their defining scope, which Jinja2
  // resolves late: names set after the definition are visible when the macro runs.
  Value make_macro(const Stmt& s, const ScopePtr& sc, std::nullptr_t) {
    const Stmt* def = &s;
    return Value::callable(
        [this, def, sc](CallArgs& a) {
          auto scope = child(sc);
          size_t np = def->params.size();
          if (a.args.size() > np)
            type_error("macro '" + def->name + "' takes not more than " + std::to_string(np) +
                       " argument(s)");
          std::vector<bool> bound(np, false);
          for (size_t k = 0; k < a.args.size(); ++k) {
            scope->set(def->params[k], a.args[k]);
            bound[k] = true;
          }
          for (const auto& kv : a.kwargs) {
            size_t k = 0;
            while (k < np && def->params[k] != kv.first) ++k;
            if (k == np) {
              if (kv.first == "caller") {
                scope->set("caller", kv.second);
                continue;
              }
              type_error("macro '" + def->name + "' takes no keyword argument '" + kv.first + "'");
            }
            scope->set(kv.first, kv.second);
            bound[k] = true;
          }
          for (size_t k = 0; k < np; ++k) {
            if (bound[k]) continue;
            scope->set(def->params[k], def->defaults[k]
                                           ? eval(*def->defaults[k], scope)
                                           : Value::undefined("parameter '" + def->params[k] +
                                                              "' was not provided"));
          }
          return Value::string(capture(def->body, scope));
        },
        s.name.empty() ? "caller" : s.name);
  }

  Value invoke(const Value& fn, CallArgs& args) {
    if (fn.is_undefined()) fail_undefined(fn);
    if (fn.kind != Kind::Callable)
      type_error(std::string("'") + fn.type_name() + "' object is not callable");
    return (*fn.fn)(args);
  }

  CallArgs eval_args(const Expr& e, const ScopePtr& sc) {
    CallArgs a;
    a.line = e.line;
    for (const auto& x : e.items) a.args.push_back(eval(*x, sc));
    for (const auto& kv : e.kwargs) a.kwargs.emplace_back(kv.first, eval(*kv.second, sc));
    return a;
  }

  Value eval(const Expr& e, const ScopePtr& sc) {
    try {
      return eval_inner(e, sc);
    } catch (const ChatTemplateError& err) {
      if (err.line() == 0) throw ChatTemplateError(e.line, err.message());
      throw;
    }
  }

  Value eval_inner(const Expr& e, const ScopePtr& sc) {
    switch (e.kind) {
      case ExprKind::Const:
        return e.value;
      case ExprKind::Name: {
        if (const Value* v = sc->lookup(e.name)) return *v;
        return lookup_global(e.name);
      }
      case ExprKind::List:
      case ExprKind::Tuple: {
        List out;
        for (const auto& x : e.items) out.push_back(eval(*x, sc));
        return Value::list_of(std::move(out), e.kind == ExprKind::Tuple);
      }
      case ExprKind::Dict: {
        Dict d;
        for (size_t k = 0; k + 1 < e.items.size(); k += 2) {
          Value key = eval(*e.items[k], sc);
          Value val = eval(*e.items[k + 1], sc);
          bool replaced = false;
          for (auto& kv : d)
            if (equals(kv.first, key)) {
              kv.second = val;
              replaced = true;
            }
          if (!replaced) d.emplace_back(std::move(key), std::move(val));
        }
        return Value::dict_of(std::move(d));
      }
      case ExprKind::Attr:
        return get_attr(eval(*e.a, sc), e.name);
      case ExprKind::Item:
        return get_item(eval(*e.a, sc), eval(*e.b, sc));
      case ExprKind::Slice: {
        Value none = Value::none();
        return slice_value(eval(*e.a, sc), e.b ? eval(*e.b, sc) : none, e.c ? eval(*e.c, sc) : none,
                           e.d ? eval(*e.d, sc) : none);
      }
      case ExprKind::Call: {
        Value fn = eval(*e.a, sc);
        CallArgs args = eval_args(e, sc);
        return invoke(fn, args);
      }
      case ExprKind::Filter:
        return apply_filter(e.name, eval(*e.a, sc), eval_args(e, sc));
      case ExprKind::Test: {
        bool r = apply_test(e.name, eval(*e.a, sc), eval_args(e, sc));
        return Value::boolean(e.negated ? !r : r);
      }
      case ExprKind::Neg:
      case ExprKind::Pos: {
        Value v = eval(*e.a, sc);
        if (v.is_undefined()) fail_undefined(v);
        if (!v.is_number())
          type_error(std::string("bad operand type for unary ") +
                     (e.kind == ExprKind::Neg ? "-" : "+") + ": '" + v.type_name() + "'");
        if (e.kind == ExprKind::Pos) return v.kind == Kind::Bool ? Value::integer(v.as_int()) : v;
        return v.kind == Kind::Float ? Value::real(-v.f) : Value::integer(-v.as_int());
      }
      case ExprKind::Not:
        return Value::boolean(!eval(*e.a, sc).truthy());
      case ExprKind::And: {
        Value l = eval(*e.a, sc);
        return l.truthy() ? eval(*e.b, sc) : l;
      }
      case ExprKind::Or: {
        Value l = eval(*e.a, sc);
        return l.truthy() ? l : eval(*e.b, sc);
      }
      case ExprKind::Binary:
        return arithmetic(e.name, eval(*e.a, sc), eval(*e.b, sc));
      case ExprKind::Compare: {
        Value left = eval(*e.a, sc);
        for (size_t k = 0; k < e.ops.size(); ++k) {
          Value right = eval(*e.items[k], sc);
          if (!compare(e.ops[k], left, right)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case ExprKind::Cond:
        if (eval(*e.a, sc).truthy()) return eval(*e.b, sc);
        return e.c ? eval(*e.c, sc)
                   : Value::undefined("the inline if-expression evaluated to false");
    }
    return Value::undefined();
  }

  std::string* out_;
};

}  // namespace

std::string render_template(const Template& tpl, const Value& context) {
  auto root = std::make_shared<Scope>();
  if (context.is_dict())
    for (const auto& kv : *context.dict)
      if (kv.first.is_string()) root->set(kv.first.s, kv.second);
  std::string out;
  Interpreter interp(out);
  interp.exec_body(tpl.body, root);
  return out;
}

}  // namespace vllm::tok::jinja
