// Recursive-descent parser mirroring jinja2.parser.Parser (same precedence ladder:
// ternary < or < and < not < compare < +,- < ~ < *,/,//,% < ** < unary < postfix/filter/test).
#include "tokenizer/chat_template/parser.h"

#include <algorithm>
#include <initializer_list>
#include <set>

#include "tokenizer/chat_template/budget.h"
#include "tokenizer/chat_template/builtins.h"
#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/lexer.h"
#include "tokenizer/chat_template/token_cursor.h"

namespace vllm::tok::jinja {
namespace {

class Parser : TokenCursor {
 public:
  Parser(std::vector<Token> toks, int max_depth) : TokenCursor(std::move(toks), max_depth) {}

  Template run() {
    Template tpl;
    std::string end;
    tpl.body = parse_until({}, &end);
    return tpl;
  }

 private:
  // ---- statements ----

  Body parse_until(const std::set<std::string>& ends, std::string* which) {
    Body body;
    while (true) {
      const Token& t = cur();
      if (t.type == Tok::Eof) {
        if (!ends.empty()) fail("unexpected end of template, expected '" + *ends.rbegin() + "'");
        return body;
      }
      if (t.type == Tok::Data) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Data;
        s->line = t.line;
        s->text = t.text;
        body.push_back(std::move(s));
        next();
      } else if (t.type == Tok::VarBegin) {
        next();
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Output;
        s->line = cur().line;
        s->expr = parse_tuple(true);
        if (cur().type != Tok::VarEnd)
          fail("expected end of print statement, got " + describe(cur()));
        next();
        body.push_back(std::move(s));
      } else if (t.type == Tok::BlockBegin) {
        next();
        if (cur().type == Tok::Name && ends.count(cur().text)) {
          *which = cur().text;
          next();
          return body;
        }
        body.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  StmtPtr parse_statement() {
    Nest nest(*this);
    if (cur().type != Tok::Name) fail("expected a tag name, got " + describe(cur()));
    std::string tag = cur().text;
    int line = cur().line;
    auto s = std::make_unique<Stmt>();
    s->line = line;
    next();
    std::string end;
    if (tag == "for") {
      s->kind = StmtKind::For;
      s->targets = parse_targets();
      if (!skip_name("in")) fail("expected 'in' in for loop, got " + describe(cur()));
      s->expr = parse_tuple(false);
      if (skip_name("if")) s->cond = parse_expression(true);
      if (is_name("recursive")) fail("unsupported construct 'recursive' loop");
      expect_block_end();
      const int loop_refs = loop_refs_;
      s->body = parse_until({"endfor", "else"}, &end);
      s->uses_loop = loop_refs_ != loop_refs;
      if (end == "else") {
        expect_block_end();
        s->else_body = parse_until({"endfor"}, &end);
      }
      expect_block_end();
    } else if (tag == "if") {
      s->kind = StmtKind::If;
      s->conds.push_back(parse_tuple(false));
      expect_block_end();
      while (true) {
        s->bodies.push_back(parse_until({"elif", "else", "endif"}, &end));
        if (end == "elif") {
          s->conds.push_back(parse_tuple(false));
          expect_block_end();
          continue;
        }
        if (end == "else") {
          expect_block_end();
          s->else_body = parse_until({"endif"}, &end);
        }
        expect_block_end();
        break;
      }
    } else if (tag == "set") {
      s->targets.push_back(expect_name());
      if (skip_op(".")) {
        s->attr = expect_name();
      } else {
        while (skip_op(",")) s->targets.push_back(expect_name());
      }
      if (skip_op("=")) {
        s->kind = StmtKind::Set;
        s->expr = parse_tuple(true);
        expect_block_end();
      } else {
        if (!s->attr.empty() || s->targets.size() != 1) fail("expected '=' in set");
        if (is_op("|")) fail("unsupported construct 'filtered set block'");
        s->kind = StmtKind::SetBlock;
        expect_block_end();
        s->body = parse_until({"endset"}, &end);
        expect_block_end();
      }
    } else if (tag == "macro") {
      s->kind = StmtKind::Macro;
      s->name = expect_name();
      parse_params(*s);
      expect_block_end();
      s->body = parse_until({"endmacro"}, &end);
      expect_block_end();
    } else if (tag == "call") {
      s->kind = StmtKind::CallBlock;
      if (is_op("(")) parse_params(*s);
      s->expr = parse_expression(true);
      if (s->expr->kind != ExprKind::Call) fail("expected a call in call block");
      expect_block_end();
      s->body = parse_until({"endcall"}, &end);
      expect_block_end();
    } else if (tag == "filter") {
      s->kind = StmtKind::FilterBlock;
      s->expr = parse_filter(nullptr, line);
      expect_block_end();
      s->body = parse_until({"endfilter"}, &end);
      expect_block_end();
    } else if (tag == "break" || tag == "continue") {
      s->kind = tag == "break" ? StmtKind::Break : StmtKind::Continue;
      expect_block_end();
    } else if (tag == "generation") {
      s->kind = StmtKind::Scope;
      expect_block_end();
      s->body = parse_until({"endgeneration"}, &end);
      expect_block_end();
    } else {
      throw ChatTemplateError(line, "unsupported tag '" + tag + "'");
    }
    return s;
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> out;
    bool paren = skip_op("(");
    out.push_back(expect_name());
    while (skip_op(",")) {
      if (cur().type != Tok::Name || is_name("in")) break;
      out.push_back(expect_name());
    }
    if (paren) expect_op(")");
    return out;
  }

  void parse_params(Stmt& s) {
    expect_op("(");
    while (!is_op(")")) {
      if (!s.params.empty()) expect_op(",");
      if (is_op(")")) break;
      s.params.push_back(expect_name());
      s.defaults.push_back(skip_op("=") ? parse_expression(true) : nullptr);
    }
    next();
  }

  // ---- expressions ----

  bool at_tuple_end() const {
    return cur().type == Tok::VarEnd || cur().type == Tok::BlockEnd || is_op(")") ||
           cur().type == Tok::Eof;
  }

  ExprPtr parse_tuple(bool with_condexpr) {
    int line = cur().line;
    ExprPtr first = parse_expression(with_condexpr);
    if (!is_op(",")) return first;
    auto tup = make(ExprKind::Tuple, line);
    tup->items.push_back(std::move(first));
    while (skip_op(",")) {
      if (at_tuple_end() || is_name("if")) break;
      tup->items.push_back(parse_expression(with_condexpr));
    }
    return seal(std::move(tup));
  }

  ExprPtr parse_expression(bool with_condexpr) {
    if (!with_condexpr) return parse_or();
    ExprPtr e = parse_or();
    while (is_name("if")) {
      int line = cur().line;
      next();
      auto c = make(ExprKind::Cond, line);
      c->a = parse_or();
      c->b = std::move(e);
      if (skip_name("else")) {
        Nest nest(*this);
        c->c = parse_expression(true);
      }
      e = seal(std::move(c));
    }
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (is_name("or")) {
      auto n = make(ExprKind::Or, cur().line);
      next();
      n->a = std::move(e);
      n->b = parse_and();
      e = seal(std::move(n));
    }
    return e;
  }

  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (is_name("and")) {
      auto n = make(ExprKind::And, cur().line);
      next();
      n->a = std::move(e);
      n->b = parse_not();
      e = seal(std::move(n));
    }
    return e;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      auto n = make(ExprKind::Not, cur().line);
      next();
      Nest nest(*this);
      n->a = parse_not();
      return seal(std::move(n));
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    int line = cur().line;
    ExprPtr e = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (cur().type == Tok::Op &&
          (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == ">" ||
           cur().text == "<=" || cur().text == ">=")) {
        op = cur().text;
        next();
      } else if (is_name("in")) {
        op = "in";
        next();
      } else if (is_name("not") && peek().type == Tok::Name && peek().text == "in") {
        op = "notin";
        next();
        next();
      } else {
        break;
      }
      if (!cmp) {
        cmp = make(ExprKind::Compare, line);
        cmp->a = std::move(e);
      }
      cmp->ops.push_back(op);
      cmp->items.push_back(parse_math1());
    }
    return cmp ? seal(std::move(cmp)) : std::move(e);
  }

  ExprPtr binary(const std::string& op, ExprPtr l, ExprPtr r, int line) {
    auto n = make(ExprKind::Binary, line);
    n->name = op;
    n->a = std::move(l);
    n->b = std::move(r);
    return seal(std::move(n));
  }

  // One left-associative level: operands from `operand`, joined by any of `ops`.
  template <class Operand>
  ExprPtr binary_level(std::initializer_list<const char*> ops, Operand operand) {
    ExprPtr e = operand();
    while (true) {
      const char* op = nullptr;
      for (const char* o : ops)
        if (is_op(o)) op = o;
      if (!op) return e;
      const int line = cur().line;
      next();
      e = binary(op, std::move(e), operand(), line);
    }
  }
  ExprPtr parse_math1() {
    return binary_level({"+", "-"}, [this] { return parse_concat(); });
  }
  ExprPtr parse_concat() {
    return binary_level({"~"}, [this] { return parse_math2(); });
  }
  ExprPtr parse_math2() {
    return binary_level({"*", "/", "//", "%"}, [this] { return parse_pow(); });
  }
  ExprPtr parse_pow() {
    return binary_level({"**"}, [this] { return parse_unary(true); });
  }

  ExprPtr parse_unary(bool with_filter) {
    int line = cur().line;
    ExprPtr e;
    if (is_op("-") || is_op("+")) {
      e = make(is_op("-") ? ExprKind::Neg : ExprKind::Pos, line);
      next();
      Nest nest(*this);
      e->a = parse_unary(false);
      e = seal(std::move(e));
    } else {
      e = parse_primary();
    }
    e = parse_postfix(std::move(e));
    if (with_filter) e = parse_filter_expr(std::move(e));
    return e;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    int line = t.line;
    if (t.type == Tok::Name) {
      std::string n = t.text;
      next();
      auto e = make(ExprKind::Const, line);
      if (n == "true" || n == "True") {
        e->value = Value::boolean(true);
      } else if (n == "false" || n == "False") {
        e->value = Value::boolean(false);
      } else if (n == "none" || n == "None") {
        e->value = Value::none();
      } else {
        e->kind = ExprKind::Name;
        e->name = n;
        if (n == "loop") ++loop_refs_;
      }
      return e;
    }
    if (t.type == Tok::String) {
      std::string s;
      while (cur().type == Tok::String) {
        s += cur().text;
        next();
      }
      auto e = make(ExprKind::Const, line);
      e->value = Value::string(std::move(s));
      return e;
    }
    if (t.type == Tok::Int || t.type == Tok::Float) {
      auto e = make(ExprKind::Const, line);
      e->value = t.type == Tok::Int ? Value::integer(t.ival) : Value::real(t.fval);
      next();
      return e;
    }
    if (skip_op("(")) {
      if (skip_op(")")) return make(ExprKind::Tuple, line);
      Nest nest(*this);
      ExprPtr e = parse_tuple(true);
      expect_op(")");
      return e;
    }
    if (skip_op("[")) {
      Nest nest(*this);
      auto e = make(ExprKind::List, line);
      while (!is_op("]")) {
        if (!e->items.empty()) expect_op(",");
        if (is_op("]")) break;
        e->items.push_back(parse_expression(true));
      }
      next();
      return seal(std::move(e));
    }
    if (skip_op("{")) {
      Nest nest(*this);
      auto e = make(ExprKind::Dict, line);
      while (!is_op("}")) {
        if (!e->items.empty()) expect_op(",");
        if (is_op("}")) break;
        e->items.push_back(parse_expression(true));
        expect_op(":");
        e->items.push_back(parse_expression(true));
      }
      next();
      return seal(std::move(e));
    }
    fail("unexpected " + describe(t));
  }

  ExprPtr parse_postfix(ExprPtr e) {
    while (true) {
      int line = cur().line;
      if (skip_op(".")) {
        if (cur().type == Tok::Int) {
          auto n = make(ExprKind::Item, line);
          n->a = std::move(e);
          n->b = make(ExprKind::Const, line);
          n->b->value = Value::integer(cur().ival);
          next();
          e = seal(std::move(n));
        } else {
          auto n = make(ExprKind::Attr, line);
          n->a = std::move(e);
          n->name = expect_name();
          e = seal(std::move(n));
        }
      } else if (skip_op("[")) {
        e = parse_subscript(std::move(e), line);
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, int line) {
    Nest nest(*this);
    ExprPtr parts[3];
    bool slice = false;
    int idx = 0;
    while (!is_op("]")) {
      if (is_op(":")) {
        slice = true;
        if (++idx > 2) fail("invalid slice");
        next();
        continue;
      }
      if (parts[idx]) fail("expected ']' or ':' in subscript, got " + describe(cur()));
      parts[idx] = parse_expression(true);
      if (is_op(",")) fail("unsupported construct 'tuple subscript'");
    }
    next();
    if (!slice) {
      if (!parts[0]) fail("expected an expression in subscript");
      auto n = make(ExprKind::Item, line);
      n->a = std::move(obj);
      n->b = std::move(parts[0]);
      return seal(std::move(n));
    }
    auto n = make(ExprKind::Slice, line);
    n->a = std::move(obj);
    n->b = std::move(parts[0]);
    n->c = std::move(parts[1]);
    n->d = std::move(parts[2]);
    return seal(std::move(n));
  }

  void parse_args(Expr& call) {
    Nest nest(*this);
    expect_op("(");
    while (!is_op(")")) {
      if (!call.items.empty() || !call.kwargs.empty()) expect_op(",");
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) fail("unsupported construct '*args' in call");
      if (cur().type == Tok::Name && peek().type == Tok::Op && peek().text == "=") {
        std::string key = cur().text;
        next();
        next();
        call.kwargs.emplace_back(key, parse_expression(true));
      } else {
        if (!call.kwargs.empty()) fail("positional argument after keyword argument");
        call.items.push_back(parse_expression(true));
      }
    }
    next();
  }

  ExprPtr parse_call(ExprPtr fn) {
    auto n = make(ExprKind::Call, cur().line);
    n->a = std::move(fn);
    parse_args(*n);
    return seal(std::move(n));
  }

  ExprPtr parse_filter(ExprPtr input, int line) {
    auto n = make(ExprKind::Filter, line);
    n->a = std::move(input);
    n->name = expect_name();
    while (skip_op(".")) n->name += "." + expect_name();
    if (!is_known_filter(n->name))
      throw ChatTemplateError(line, "unsupported filter '" + n->name + "'");
    if (is_op("(")) parse_args(*n);
    return seal(std::move(n));
  }

  ExprPtr parse_filter_expr(ExprPtr e) {
    while (true) {
      int line = cur().line;
      if (skip_op("|")) {
        e = parse_filter(std::move(e), line);
      } else if (is_name("is")) {
        next();
        auto n = make(ExprKind::Test, line);
        n->negated = skip_name("not");
        n->a = std::move(e);
        n->name = expect_name();
        while (skip_op(".")) n->name += "." + expect_name();
        if (!is_known_test(n->name))
          throw ChatTemplateError(line, "unsupported test '" + n->name + "'");
        if (is_op("(")) {
          parse_args(*n);
        } else if ((cur().type == Tok::Name || cur().type == Tok::String ||
                    cur().type == Tok::Int || cur().type == Tok::Float || is_op("[") ||
                    is_op("{")) &&
                   !is_name("else") && !is_name("or") && !is_name("and")) {
          if (is_name("is")) fail("You cannot chain multiple tests with is");
          n->items.push_back(parse_postfix(parse_primary()));
        }
        e = seal(std::move(n));
      } else if (is_op("(")) {
        e = parse_call(std::move(e));
      } else {
        return e;
      }
    }
  }

  int loop_refs_ = 0;  // `loop` names parsed so far: a for body without one needs no loop object
};

}  // namespace

Template parse_template(const std::string& source, const ChatTemplateLimits& limits) {
  if (source.size() > limits.max_source_bytes)
    limit_exceeded("template source (" + std::to_string(source.size()) + " bytes)",
                   format_bytes(limits.max_source_bytes), "max_source_bytes");
  // Literals become values while parsing; give them the template's size limits (the
  // render-time clock and allocation total do not apply to loading).
  ChatTemplateLimits parse_limits = limits;
  parse_limits.max_render_ms = 0;
  parse_limits.max_total_bytes = SIZE_MAX;
  Budget budget(parse_limits);
  BudgetScope installed(budget);
  return Parser(lex_template(source), limits.max_nesting_depth).run();
}

}  // namespace vllm::tok::jinja
