// Syntax tree of a parsed chat template: expressions and statements. Plain structs with a
// kind tag; the interpreter walks them directly (templates are small and rendered once per
// request, so a bytecode would buy nothing).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tokenizer/chat_template/value.h"

namespace vllm::tok::jinja {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ExprKind {
  Const,    // value
  Name,     // name
  List,     // items
  Tuple,    // items
  Dict,     // items as key,value,key,value...
  Attr,     // a.name
  Item,     // a[b]
  Slice,    // a[b:c:d]; missing parts are null
  Call,     // a(items, kwargs)
  Filter,   // a | name(items, kwargs)
  Test,     // a is name(items, kwargs); negated when `is not`
  Neg,      // -a
  Pos,      // +a
  Not,      // not a
  Binary,   // a op b for + - * / // % ** ~
  And,      // a and b
  Or,       // a or b
  Compare,  // a (ops[k] items[k])...
  Cond,     // b if a else c  (c may be null)
};

struct Expr {
  ExprKind kind;
  int line = 0;
  int height = 1;  // levels of sub-expressions, bounded by ChatTemplateLimits::max_nesting_depth
  Value value;
  std::string name;  // Name/Attr/Filter/Test name, Binary operator
  bool negated = false;
  ExprPtr a, b, c, d;
  std::vector<ExprPtr> items;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class StmtKind {
  Data,         // text
  Output,       // {{ expr }}
  If,           // conds[k] -> bodies[k]; else_body
  For,          // targets in expr [if cond] body else_body
  Set,          // targets (or ns.attr) = expr
  SetBlock,     // {% set x %}body{% endset %}
  Macro,        // name(params=defaults) body
  CallBlock,    // {% call(params) expr %}body{% endcall %}
  FilterBlock,  // {% filter name(args) %}body{% endfilter %}; expr is the filter with a null input
  Break,
  Continue,
  Scope,  // body rendered as-is ({% generation %})
};

struct Stmt {
  StmtKind kind;
  int line = 0;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  std::vector<ExprPtr> conds;
  std::vector<Body> bodies;
  Body body;
  Body else_body;
  std::vector<std::string> targets;
  std::string attr;  // Set on `ns.attr`
  std::string name;
  std::vector<std::string> params;
  std::vector<ExprPtr> defaults;  // parallel to params; null where no default
  bool uses_loop = true;          // For: whether the body mentions `loop` (else it is not built)
};

struct Template {
  Body body;
};

}  // namespace vllm::tok::jinja
