// TokenCursor: the parser's position in the token stream (lookahead, expect/skip helpers,
// error reporting with the line) and its nesting guards: Nest bounds the parser's recursion,
// seal() the height of every expression it builds (ChatTemplateLimits::max_nesting_depth).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tokenizer/chat_template/ast.h"
#include "tokenizer/chat_template/error.h"
#include "tokenizer/chat_template/lexer.h"

namespace vllm::tok::jinja {

class TokenCursor {
 protected:
  TokenCursor(std::vector<Token> toks, int max_depth)
      : t_(std::move(toks)), max_depth_(max_depth) {}

  const Token& cur() const { return t_[p_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  void next() {
    if (p_ + 1 < t_.size()) ++p_;
  }
  [[noreturn]] void fail(const std::string& msg) const { throw ChatTemplateError(cur().line, msg); }

  bool is_op(const char* op) const { return cur().type == Tok::Op && cur().text == op; }
  bool is_name(const char* n) const { return cur().type == Tok::Name && cur().text == n; }
  bool skip_op(const char* op) {
    if (!is_op(op)) return false;
    next();
    return true;
  }
  bool skip_name(const char* n) {
    if (!is_name(n)) return false;
    next();
    return true;
  }
  static std::string describe(const Token& t) {
    switch (t.type) {
      case Tok::Eof:
        return "end of template";
      case Tok::BlockEnd:
        return "end of statement block";
      case Tok::VarEnd:
        return "end of print statement";
      case Tok::Data:
        return "template data";
      default:
        return "'" + t.text + "'";
    }
  }
  void expect_op(const char* op) {
    if (!skip_op(op)) fail(std::string("expected '") + op + "', got " + describe(cur()));
  }
  std::string expect_name() {
    if (cur().type != Tok::Name) fail("expected a name, got " + describe(cur()));
    std::string n = cur().text;
    next();
    return n;
  }
  void expect_block_end() {
    if (cur().type != Tok::BlockEnd)
      fail("expected end of statement block, got " + describe(cur()));
    next();
  }

  ExprPtr make(ExprKind k, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = k;
    e->line = line;
    return e;
  }

  [[noreturn]] void too_deep(int line) const {
    throw ChatTemplateError(line, "nesting depth exceeds the " + std::to_string(max_depth_) +
                                      " limit (ChatTemplateLimits::max_nesting_depth)");
  }

  // One level of parser recursion (a block, a bracket, a unary operator, an `else` branch),
  // held for the guard's lifetime; it bounds the parser's own stack.
  class Nest {
   public:
    explicit Nest(TokenCursor& p) : p_(p) {
      if (++p_.depth_ > p_.max_depth_) {
        --p_.depth_;
        p_.too_deep(p_.cur().line);
      }
    }
    ~Nest() { --p_.depth_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;

   private:
    TokenCursor& p_;
  };

  // Records a finished node's height. Chains (a + b + c..., x|f|g..., a.b.c...) are built in
  // loops, not by recursion, so their height is checked here rather than by Nest.
  ExprPtr seal(ExprPtr e) {
    int h = 0;
    for (const Expr* c : {e->a.get(), e->b.get(), e->c.get(), e->d.get()})
      if (c) h = std::max(h, c->height);
    for (const auto& c : e->items)
      if (c) h = std::max(h, c->height);
    for (const auto& kv : e->kwargs)
      if (kv.second) h = std::max(h, kv.second->height);
    e->height = h + 1;
    if (e->height > max_depth_) too_deep(e->line);
    return e;
  }

  std::vector<Token> t_;
  size_t p_ = 0;
  int depth_ = 0;
  const int max_depth_;
};

}  // namespace vllm::tok::jinja
