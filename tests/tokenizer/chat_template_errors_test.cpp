// Error reporting of the chat-template engine: constructs outside the supported subset are
// refused at load time naming the construct and its line; runtime failures carry the line of
// the failing expression; raise_exception() surfaces the template's own message.
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "tokenizer/chat_template/chat_template.h"

namespace {

using vllm::tok::ChatTemplate;
using vllm::tok::ChatTemplateError;

// Returns the error text of parsing `src`, or "" if it parsed.
std::string parse_error(const std::string& src) {
  try {
    ChatTemplate t(src);
  } catch (const ChatTemplateError& e) {
    return e.what();
  }
  return "";
}

std::string render_error(const std::string& src, const nlohmann::json& ctx, int* line = nullptr) {
  ChatTemplate t(src);
  try {
    t.render(ctx);
  } catch (const ChatTemplateError& e) {
    if (line) *line = e.line();
    return e.what();
  }
  return "";
}

TEST(ChatTemplateErrors, UnsupportedTagsNameConstructAndLine) {
  EXPECT_EQ(parse_error("{% extends 'base.html' %}"),
            "chat template line 1: unsupported tag 'extends'");
  EXPECT_EQ(parse_error("hello\n{% if x %}\n  {% include 'other' %}\n{% endif %}"),
            "chat template line 3: unsupported tag 'include'");
  EXPECT_EQ(parse_error("a\nb\n\n{% import 'm' as m %}"),
            "chat template line 4: unsupported tag 'import'");
  EXPECT_EQ(parse_error("{% block body %}x{% endblock %}"),
            "chat template line 1: unsupported tag 'block'");
  EXPECT_EQ(parse_error("\n{% do x.append(1) %}"), "chat template line 2: unsupported tag 'do'");
  EXPECT_EQ(parse_error("{% with a = 1 %}{{ a }}{% endwith %}"),
            "chat template line 1: unsupported tag 'with'");
}

TEST(ChatTemplateErrors, UnsupportedFiltersTestsAndLoops) {
  EXPECT_EQ(parse_error("ok\n{{ x | frobnicate }}"),
            "chat template line 2: unsupported filter 'frobnicate'");
  EXPECT_EQ(parse_error("{% if x is prime %}{% endif %}"),
            "chat template line 1: unsupported test 'prime'");
  EXPECT_NE(parse_error("{% for x in y recursive %}{{ loop(x) }}{% endfor %}").find("recursive"),
            std::string::npos);
}

TEST(ChatTemplateErrors, SyntaxErrorsCarryLine) {
  std::string e = parse_error("{% for m in messages %}\n{{ m }}\n");
  EXPECT_NE(e.find("expected 'endfor'"), std::string::npos) << e;
  e = parse_error("line1\n{{ 'unterminated }}");
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  e = parse_error("{% if x %}\n{% endfor %}");
  EXPECT_NE(e.find("line 2"), std::string::npos) << e;
  EXPECT_NE(e.find("endfor"), std::string::npos) << e;
  e = parse_error("{{ (1 + 2 }}");
  EXPECT_FALSE(e.empty());
  e = parse_error("{# never closed");
  EXPECT_NE(e.find("comment"), std::string::npos) << e;
}

TEST(ChatTemplateErrors, RaiseExceptionMessageAndLine) {
  ChatTemplate t(
      "{% for m in messages %}\n{% if m.role == 'bad' %}\n{{ raise_exception('Role ' + m.role + ' "
      "not allowed') }}\n{% endif %}\n{% endfor %}");
  nlohmann::json ctx = {{"messages", {{{"role", "user"}}, {{"role", "bad"}}}}};
  try {
    t.render(ctx);
    FAIL() << "expected raise_exception";
  } catch (const ChatTemplateError& e) {
    EXPECT_EQ(e.message(), "Role bad not allowed");
    EXPECT_EQ(e.line(), 3);
  }
}

TEST(ChatTemplateErrors, RuntimeErrorsCarryLine) {
  int line = 0;
  std::string e = render_error("{{ 'fine' }}\n\n{{ 1 / 0 }}", nlohmann::json::object(), &line);
  EXPECT_EQ(line, 3);
  EXPECT_NE(e.find("division by zero"), std::string::npos) << e;
  e = render_error("{{ missing.attr }}", nlohmann::json::object());
  EXPECT_NE(e.find("'missing' is undefined"), std::string::npos) << e;
  e = render_error("{{ 'a' + n }}", {{"n", 1}});
  EXPECT_NE(e.find("can only concatenate str"), std::string::npos) << e;
  e = render_error("{{ l.append(1) }}", {{"l", nlohmann::json::array()}});
  EXPECT_NE(e.find("append"), std::string::npos) << e;
}

TEST(ChatTemplateRender, SortedAndOrderedJsonContexts) {
  ChatTemplate t("{{ tools | tojson }}");
  nlohmann::ordered_json ordered = nlohmann::ordered_json::parse(R"({"tools": {"z": 1, "a": 2}})");
  EXPECT_EQ(t.render_ordered(ordered), R"({"z": 1, "a": 2})");
  nlohmann::json sorted = nlohmann::json::parse(R"({"tools": {"z": 1, "a": 2}})");
  EXPECT_EQ(t.render(sorted), R"({"a": 2, "z": 1})");
}

TEST(ChatTemplateRender, StrftimeNowUsesLocalClock) {
  ChatTemplate t("{{ strftime_now('%Y') }}");
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  EXPECT_EQ(t.render(nlohmann::json::object()), std::to_string(1900 + tm.tm_year));
}

TEST(ChatTemplateRender, GenerationTagRendersBody) {
  ChatTemplate t("{% generation %}{{ x }}{% endgeneration %}!");
  EXPECT_EQ(t.render({{"x", "body"}}), "body!");
}

TEST(ChatTemplateRender, ContextShadowsGlobals) {
  ChatTemplate t("{{ range }}");
  EXPECT_EQ(t.render({{"range", "mine"}}), "mine");
}

TEST(ChatTemplateRender, MoveAndReuse) {
  ChatTemplate a(ChatTemplate::chatml_fallback());
  ChatTemplate b(std::move(a));
  nlohmann::json ctx = {{"messages", {{{"role", "user"}, {"content", "hi"}}}},
                        {"add_generation_prompt", true}};
  EXPECT_EQ(b.render(ctx), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(b.render(ctx), b.render(ctx));
}

}  // namespace
