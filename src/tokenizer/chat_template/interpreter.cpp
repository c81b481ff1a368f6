// Statement execution and expression evaluation for chat templates: Jinja2 scoping, loops,
// macros and call blocks, `and`/`or` returning an operand, chained comparisons (operators
// themselves live in operators.cpp). Undefined follows jinja2's default Undefined (prints
// empty, iterates empty, fails on arithmetic, attribute access and calls). Every statement,
// expression, loop iteration, call and byte of output is counted against ChatTemplateLimits.
#include "tokenizer/chat_template/interpreter.h"

#include <algorithm>
#include <atomic>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/operators.h"

namespace vllm::tok::jinja {
namespace {

[[noreturn]] void type_error(const std::string& msg) { throw ChatTemplateError(0, msg); }

std::atomic<int64_t> g_live_scopes{0};

struct Scope {
  std::shared_ptr<Scope> parent;
  std::vector<std::pair<std::string, Value>> vars;

  Scope() { g_live_scopes.fetch_add(1, std::memory_order_relaxed); }
  ~Scope() { g_live_scopes.fetch_sub(1, std::memory_order_relaxed); }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

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
  s->vars.reserve(2);  // a loop body's target and `loop`, a macro's first parameters
  return s;
}

// Counts one level of interpreter recursion (a statement, an expression or a call) against
// max_eval_depth / max_call_depth for as long as it lives.
class DepthGuard {
 public:
  DepthGuard(int& depth, int limit, const char* what, const char* field) : depth_(depth) {
    if (++depth_ > limit) {
      --depth_;
      limit_exceeded(what, std::to_string(limit), field);
    }
  }
  ~DepthGuard() { --depth_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int& depth_;
};

// The `loop` variable's keys, built once: a loop creates one `loop` dict per iteration.
const std::vector<Value>& loop_keys() {
  static const std::vector<Value> k = [] {
    std::vector<Value> v;
    for (const char* name : {"index", "index0", "revindex", "revindex0", "first", "last", "length",
                             "depth", "depth0", "previtem", "nextitem", "cycle"})
      v.push_back(Value::unchecked_string(name));
    return v;
  }();
  return k;
}

// loop.previtem / loop.nextitem at the ends of a loop.
const Value* loop_edges() {
  static const Value k[] = {Value::undefined("there is no previous item"),
                            Value::undefined("there is no next item")};
  return k;
}

enum class Flow { Normal, Break, Continue };

class Interpreter {
 public:
  Interpreter(std::string& out, Budget& budget) : out_(&out), budget_(budget) {}

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
      DepthGuard g(budget_.eval_depth, budget_.limits().max_eval_depth,
                   "nesting of statements and expressions being evaluated", "max_eval_depth");
      budget_.tick();
      return exec_inner(s, sc);
    } catch (const ChatTemplateError& e) {
      if (e.line() == 0) throw ChatTemplateError(s.line, e.message());
      throw;
    }
  }

  // Everything a template prints goes through here, so the output bound is exact.
  void emit(const std::string& text) {
    const size_t limit = budget_.limits().max_output_bytes;
    if (text.size() > limit - std::min(limit, out_->size()))
      limit_exceeded("output", format_bytes(limit), "max_output_bytes");
    budget_.charge_alloc(text.size());
    *out_ += text;
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
    if (v.is_list()) {
      if (v.list->size() != targets.size())
        type_error("cannot unpack " + std::to_string(v.list->size()) + " values into " +
                   std::to_string(targets.size()) + " names");
      for (size_t k = 0; k < targets.size(); ++k) sc.set(targets[k], (*v.list)[k]);
      return;
    }
    List items = iterate(v);
    if (items.size() != targets.size())
      type_error("cannot unpack " + std::to_string(items.size()) + " values into " +
                 std::to_string(targets.size()) + " names");
    for (size_t k = 0; k < targets.size(); ++k) sc.set(targets[k], items[k]);
  }

  // Dispatch only, for the same reason as eval_inner: each construct's temporaries live in
  // its own frame.
  Flow exec_inner(const Stmt& s, const ScopePtr& sc) {
    switch (s.kind) {
      case StmtKind::Data:
        emit(s.text);
        return Flow::Normal;
      case StmtKind::Output:
        exec_output(s, sc);
        return Flow::Normal;
      case StmtKind::If:
        return exec_if(s, sc);
      case StmtKind::For:
        exec_for(s, sc);
        return Flow::Normal;
      case StmtKind::Set:
        exec_set(s, sc);
        return Flow::Normal;
      case StmtKind::SetBlock:
      case StmtKind::Macro:
        exec_define(s, sc);
        return Flow::Normal;
      case StmtKind::CallBlock:
        exec_call_block(s, sc);
        return Flow::Normal;
      case StmtKind::FilterBlock:
        exec_filter_block(s, sc);
        return Flow::Normal;
      case StmtKind::Break:
        return Flow::Break;
      case StmtKind::Continue:
        return Flow::Continue;
      case StmtKind::Scope:
        return exec_scope(s, sc);
    }
    return Flow::Normal;
  }

  [[gnu::noinline]] void exec_output(const Stmt& s, const ScopePtr& sc) {
    Value v = eval(*s.expr, sc);
    if (v.is_string())
      emit(v.s());
    else
      emit(v.str());
  }

  [[gnu::noinline]] Flow exec_if(const Stmt& s, const ScopePtr& sc) {
    for (size_t k = 0; k < s.conds.size(); ++k)
      if (eval(*s.conds[k], sc).truthy()) return exec_body(s.bodies[k], sc);
    return exec_body(s.else_body, sc);
  }

  [[gnu::noinline]] Flow exec_scope(const Stmt& s, const ScopePtr& sc) {
    return exec_body(s.body, child(sc));
  }

  [[gnu::noinline]] void exec_define(const Stmt& s, const ScopePtr& sc) {
    if (s.kind == StmtKind::Macro)
      sc->set(s.name, make_macro(s, sc));
    else
      sc->set(s.targets[0], Value::string(capture(s.body, child(sc))));
  }

  [[gnu::noinline]] void exec_call_block(const Stmt& s, const ScopePtr& sc) {
    const Expr& call = *s.expr;
    Value fn = eval(*call.a, sc);
    CallArgs args = eval_args(call, sc);
    args.kwargs.emplace_back("caller", make_macro(s, sc));
    emit(invoke(fn, args).str());
  }

  [[gnu::noinline]] void exec_filter_block(const Stmt& s, const ScopePtr& sc) {
    Value text = Value::string(capture(s.body, child(sc)));
    emit(apply_filter(s.expr->name, text, eval_args(*s.expr, sc)).str());
  }

  [[gnu::noinline]] void exec_set(const Stmt& s, const ScopePtr& sc) {
    Value v = eval(*s.expr, sc);
    if (s.attr.empty()) {
      assign(s.targets, v, *sc);
      return;
    }
    const Value* ns = sc->lookup(s.targets[0]);
    if (!ns || ns->kind != Kind::Namespace)
      type_error("cannot assign attribute on non-namespace object");
    if (s.attr[0] == '_')
      type_error("Chat templates cannot store underscore-prefixed attributes on a namespace");
    for (auto& kv : *ns->ns)
      if (kv.first.is_string() && kv.first.s() == s.attr) {
        kv.second = std::move(v);
        return;
      }
    ns->ns->emplace_back(Value::string(s.attr), std::move(v));
  }

  [[gnu::noinline]] void exec_for(const Stmt& s, const ScopePtr& sc) {
    Value seq = eval(*s.expr, sc);
    // Lists are iterated in place (no copy of a large input list per loop); strings and dicts
    // become a list of characters / keys, which iterate() bounds.
    std::shared_ptr<const List> items =
        seq.is_list() ? seq.list : std::make_shared<const List>(iterate(seq));
    if (s.cond) {
      List kept;
      for (const Value& item : *items) {
        budget_.count_iteration();
        auto probe = child(sc);
        assign(s.targets, item, *probe);
        if (eval(*s.cond, probe).truthy()) kept.push_back(item);
      }
      items = std::make_shared<const List>(std::move(kept));
    }
    // Jinja2 clears its "run the else block" flag at the end of the loop body, so a body that
    // always `continue`s or `break`s before its end still gets the else block.
    bool body_completed = false;
    const List& list = *items;
    const int64_t n = static_cast<int64_t>(list.size());
    // loop.cycle is one callable per loop reading the current index, not one per iteration.
    std::shared_ptr<Dict> loop;
    auto index = std::make_shared<int64_t>(0);
    Value cycle = Value::callable(
        [index](CallArgs& a) {
          if (a.args.empty()) type_error("no items for cycling given");
          return a.args[static_cast<size_t>(*index) % a.args.size()];
        },
        "cycle");
    for (int64_t k = 0; k < n; ++k) {
      budget_.count_iteration();
      *index = k;
      auto body_scope = child(sc);
      assign(s.targets, list[k], *body_scope);
      if (s.uses_loop) set_loop(*body_scope, loop, list, k, cycle);
      Flow f = exec_body(s.body, body_scope);
      if (f == Flow::Break) break;
      if (f == Flow::Normal) body_completed = true;
    }
    if (!body_completed) exec_body(s.else_body, child(sc));
  }

  // Sets `loop` for iteration k. The dict is rebuilt in place while nothing but the previous
  // iteration held it (the usual case), so an iteration costs no allocation for it; a
  // template that kept a reference (`{% set ns.l = loop %}`) gets a fresh one.
  static void set_loop(Scope& scope, std::shared_ptr<Dict>& loop, const List& list, int64_t k,
                       const Value& cycle) {
    const int64_t n = static_cast<int64_t>(list.size());
    if (!loop || loop.use_count() > 1) {
      loop = std::make_shared<Dict>();
      for (const Value& key : loop_keys()) loop->emplace_back(key, Value());
    }
    Dict& d = *loop;
    d[0].second = Value::integer(k + 1);
    d[1].second = Value::integer(k);
    d[2].second = Value::integer(n - k);
    d[3].second = Value::integer(n - k - 1);
    d[4].second = Value::boolean(k == 0);
    d[5].second = Value::boolean(k == n - 1);
    d[6].second = Value::integer(n);
    d[7].second = Value::integer(1);
    d[8].second = Value::integer(0);
    d[9].second = k > 0 ? list[k - 1] : loop_edges()[0];
    d[10].second = k + 1 < n ? list[k + 1] : loop_edges()[1];
    d[11].second = cycle;
    scope.set("loop", Value::unchecked_dict(std::shared_ptr<const Dict>(loop)));
  }

  // Macros (and the `caller` of a call block) see their defining scope, which Jinja2 resolves
  // late: names set after the definition are visible when the macro runs. The scope stores
  // the macro, so the macro holds it weakly: a strong reference would be a cycle that keeps
  // every render's whole scope (messages included) alive forever.
  Value make_macro(const Stmt& s, const ScopePtr& sc) {
    const Stmt* def = &s;
    std::weak_ptr<Scope> defining = sc;
    return Value::callable(
        [this, def, defining](CallArgs& a) {
          ScopePtr parent = defining.lock();
          if (!parent)
            type_error("macro '" + def->name +
                       "' was called after the block that defined it had ended");
          DepthGuard g(budget_.call_depth, budget_.limits().max_call_depth,
                       "nesting of macro calls", "max_call_depth");
          budget_.count_iteration();
          return call_macro(*def, parent, a);
        },
        s.name.empty() ? "caller" : s.name);
  }

  Value call_macro(const Stmt& def, const ScopePtr& parent, CallArgs& a) {
    auto scope = child(parent);
    size_t np = def.params.size();
    if (a.args.size() > np)
      type_error("macro '" + def.name + "' takes not more than " + std::to_string(np) +
                 " argument(s)");
    std::vector<char> bound(np, 0);
    for (size_t k = 0; k < a.args.size(); ++k) {
      scope->set(def.params[k], a.args[k]);
      bound[k] = 1;
    }
    for (const auto& kv : a.kwargs) {
      size_t k = 0;
      while (k < np && def.params[k] != kv.first) ++k;
      if (k == np) {
        if (kv.first == "caller") {
          scope->set("caller", kv.second);
          continue;
        }
        type_error("macro '" + def.name + "' takes no keyword argument '" + kv.first + "'");
      }
      scope->set(kv.first, kv.second);
      bound[k] = 1;
    }
    for (size_t k = 0; k < np; ++k) {
      if (bound[k]) continue;
      scope->set(def.params[k], def.defaults[k] ? eval(*def.defaults[k], scope)
                                                : Value::undefined("parameter '" + def.params[k] +
                                                                   "' was not provided"));
    }
    return Value::string(capture(def.body, scope));
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
      DepthGuard g(budget_.eval_depth, budget_.limits().max_eval_depth,
                   "nesting of statements and expressions being evaluated", "max_eval_depth");
      budget_.tick();
      return eval_inner(e, sc);
    } catch (const ChatTemplateError& err) {
      if (err.line() == 0) throw ChatTemplateError(e.line, err.message());
      throw;
    }
  }

  // A dispatcher with no locals of its own: every case lives in its own non-inlined function,
  // so a recursion step costs only the frames of the construct actually being evaluated
  // (one big switch would reserve stack for every case's temporaries at every level, ~4 KiB
  // per level under AddressSanitizer).
  Value eval_inner(const Expr& e, const ScopePtr& sc) {
    switch (e.kind) {
      case ExprKind::Const:
        return e.value;
      case ExprKind::Name:
        return eval_name(e, sc);
      case ExprKind::List:
      case ExprKind::Tuple:
        return eval_sequence(e, sc);
      case ExprKind::Dict:
        return eval_dict(e, sc);
      case ExprKind::Attr:
      case ExprKind::Item:
      case ExprKind::Slice:
        return eval_access(e, sc);
      case ExprKind::Call:
        return eval_call(e, sc);
      case ExprKind::Filter:
      case ExprKind::Test:
        return eval_filter_or_test(e, sc);
      case ExprKind::Neg:
      case ExprKind::Pos:
      case ExprKind::Not:
        return eval_unary(e, sc);
      case ExprKind::And:
      case ExprKind::Or:
      case ExprKind::Cond:
        return eval_logic(e, sc);
      case ExprKind::Binary:
        return eval_binary(e, sc);
      case ExprKind::Compare:
        return eval_compare(e, sc);
    }
    return Value::undefined();
  }

  [[gnu::noinline]] Value eval_name(const Expr& e, const ScopePtr& sc) {
    if (const Value* v = sc->lookup(e.name)) return *v;
    return lookup_global(e.name);
  }

  [[gnu::noinline]] Value eval_sequence(const Expr& e, const ScopePtr& sc) {
    List out;
    for (const auto& x : e.items) out.push_back(eval(*x, sc));
    return Value::list_of(std::move(out), e.kind == ExprKind::Tuple);
  }

  [[gnu::noinline]] Value eval_access(const Expr& e, const ScopePtr& sc) {
    Value obj = eval(*e.a, sc);
    if (e.kind == ExprKind::Attr) return get_attr(obj, e.name);
    if (e.kind == ExprKind::Item) return get_item(obj, eval(*e.b, sc));
    Value none = Value::none();
    return slice_value(obj, e.b ? eval(*e.b, sc) : none, e.c ? eval(*e.c, sc) : none,
                       e.d ? eval(*e.d, sc) : none);
  }

  [[gnu::noinline]] Value eval_call(const Expr& e, const ScopePtr& sc) {
    Value fn = eval(*e.a, sc);
    CallArgs args = eval_args(e, sc);
    return invoke(fn, args);
  }

  [[gnu::noinline]] Value eval_filter_or_test(const Expr& e, const ScopePtr& sc) {
    Value in = eval(*e.a, sc);
    CallArgs args = eval_args(e, sc);
    if (e.kind == ExprKind::Filter) return apply_filter(e.name, in, args);
    bool r = apply_test(e.name, in, args);
    return Value::boolean(e.negated ? !r : r);
  }

  [[gnu::noinline]] Value eval_unary(const Expr& e, const ScopePtr& sc) {
    Value v = eval(*e.a, sc);
    if (e.kind == ExprKind::Not) return Value::boolean(!v.truthy());
    return unary(e.kind == ExprKind::Neg, v);
  }

  [[gnu::noinline]] Value eval_logic(const Expr& e, const ScopePtr& sc) {
    Value l = eval(*e.a, sc);
    if (e.kind == ExprKind::And) return l.truthy() ? eval(*e.b, sc) : l;
    if (e.kind == ExprKind::Or) return l.truthy() ? l : eval(*e.b, sc);
    if (l.truthy()) return eval(*e.b, sc);
    return e.c ? eval(*e.c, sc) : Value::undefined("the inline if-expression evaluated to false");
  }

  [[gnu::noinline]] Value eval_binary(const Expr& e, const ScopePtr& sc) {
    Value l = eval(*e.a, sc);
    return arithmetic(e.name, l, eval(*e.b, sc));
  }

  [[gnu::noinline]] Value eval_compare(const Expr& e, const ScopePtr& sc) {
    Value left = eval(*e.a, sc);
    for (size_t k = 0; k < e.ops.size(); ++k) {
      Value right = eval(*e.items[k], sc);
      if (!compare(e.ops[k], left, right)) return Value::boolean(false);
      left = std::move(right);
    }
    return Value::boolean(true);
  }

  [[gnu::noinline]] Value eval_dict(const Expr& e, const ScopePtr& sc) {
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

  std::string* out_;
  Budget& budget_;
};

}  // namespace

int64_t live_scopes() { return g_live_scopes.load(std::memory_order_relaxed); }

std::string render_template(const Template& tpl, const Value& context,
                            const ChatTemplateLimits& limits) {
  Budget budget(limits);
  BudgetScope installed(budget);
  std::string out;
  {
    auto root = std::make_shared<Scope>();
    if (context.is_dict())
      for (const auto& kv : *context.dict)
        if (kv.first.is_string()) root->set(kv.first.s(), kv.second);
    Interpreter interp(out, budget);
    interp.exec_body(tpl.body, root);
  }
  return out;
}

}  // namespace vllm::tok::jinja
