// ChatTemplateLimits: each bound is exact (the value at the limit passes, one past it fails
// with an error naming the field), configurable, and none leaks: renders that define macros
// or build namespace cycles leave no scope or namespace behind. Also the conversion of
// deeply nested request JSON.
#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/mman.h>
#include <time.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "tokenizer/chat_template/chat_template.h"
#include "tokenizer/chat_template/interpreter.h"
#include "tokenizer/chat_template/value.h"

namespace {

using nlohmann::json;
using vllm::tok::ChatTemplate;
using vllm::tok::ChatTemplateError;
using vllm::tok::ChatTemplateLimits;

std::string repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t k = 0; k < n; ++k) out += s;
  return out;
}

// Renders; returns the output, or "ERROR: <message>".
std::string run(const std::string& src, const json& ctx = json::object(),
                const ChatTemplateLimits& limits = {}) {
  try {
    return ChatTemplate(src, limits).render(ctx);
  } catch (const ChatTemplateError& e) {
    return std::string("ERROR: ") + e.what();
  }
}

// Asserts that `ok` renders and `bad` fails naming `field`.
void expect_boundary(const std::string& ok, const std::string& bad, const char* field,
                     const ChatTemplateLimits& limits, const json& ctx = json::object()) {
  std::string a = run(ok, ctx, limits);
  EXPECT_EQ(a.rfind("ERROR", 0), std::string::npos)
      << field << " refused the value at the limit: " << a;
  std::string b = run(bad, ctx, limits);
  EXPECT_EQ(b.rfind("ERROR", 0), 0u) << field << " accepted one past the limit";
  EXPECT_NE(b.find(std::string("ChatTemplateLimits::") + field), std::string::npos) << b;
}

TEST(ChatTemplateLimits, SourceBytes) {
  ChatTemplateLimits l;
  l.max_source_bytes = 100;
  expect_boundary(std::string(100, 'x'), std::string(101, 'x'), "max_source_bytes", l);
}

TEST(ChatTemplateLimits, NestingDepthOfParenthesesBlocksAndChains) {
  ChatTemplateLimits l;
  l.max_nesting_depth = 20;
  expect_boundary("{{ " + repeat("(", 20) + "1" + repeat(")", 20) + " }}",
                  "{{ " + repeat("(", 21) + "1" + repeat(")", 21) + " }}", "max_nesting_depth", l);
  expect_boundary(repeat("{% if true %}", 20) + "x" + repeat("{% endif %}", 20),
                  repeat("{% if true %}", 21) + "x" + repeat("{% endif %}", 21),
                  "max_nesting_depth", l);
  // A chain of n operands is n-1 nodes tall above its leaves.
  expect_boundary("{{ 1" + repeat(" + 1", 19) + " }}", "{{ 1" + repeat(" + 1", 20) + " }}",
                  "max_nesting_depth", l);
  expect_boundary("{{ x" + repeat(" | trim", 19) + " }}", "{{ x" + repeat(" | trim", 20) + " }}",
                  "max_nesting_depth", l);
}

TEST(ChatTemplateLimits, DefaultNestingAcceptsWhatPythonAccepts) {
  // Python jinja2 renders all of these (tests/golden/chat_template/hostile.json has the
  // shallower ones with Python's output); the defaults must not be stricter.
  EXPECT_EQ(run("{{ " + repeat("(", 60) + "1" + repeat(")", 60) + " }}"), "1");
  EXPECT_EQ(run(repeat("{% if true %}", 90) + "x" + repeat("{% endif %}", 90)), "x");
  EXPECT_EQ(run("{{ 0" + repeat(" + 1", 440) + " }}"), "440");
}

TEST(ChatTemplateLimits, CallDepth) {
  ChatTemplateLimits l;
  l.max_call_depth = 10;
  const std::string m =
      "{% macro m(n) %}{% if n > 1 %}{{ m(n - 1) }}{% else %}deep{% endif %}{% endmacro %}";
  expect_boundary(m + "{{ m(10) }}", m + "{{ m(11) }}", "max_call_depth", l);
  EXPECT_EQ(run(m + "{{ m(150) }}"), "deep");  // Python's own limit is near 150
}

TEST(ChatTemplateLimits, EvalDepth) {
  ChatTemplateLimits l;
  l.max_eval_depth = 50;
  // One Output statement plus a chain of n additions evaluates n + 2 levels deep.
  expect_boundary("{{ 1" + repeat(" + 1", 48) + " }}", "{{ 1" + repeat(" + 1", 49) + " }}",
                  "max_eval_depth", l);
}

TEST(ChatTemplateLimits, OutputBytes) {
  ChatTemplateLimits l;
  l.max_output_bytes = 10;
  expect_boundary("{{ 'x' * 10 }}", "{{ 'x' * 10 }}!", "max_output_bytes", l);
  // Captured blocks are output too.
  expect_boundary("{% set s %}{{ 'x' * 10 }}{% endset %}", "{% set s %}{{ 'x' * 11 }}{% endset %}",
                  "max_output_bytes", l);
}

TEST(ChatTemplateLimits, ValueBytesForStringsAndLists) {
  ChatTemplateLimits l;
  l.max_value_bytes = 1000;
  expect_boundary("{{ ('x' * 1000) | length }}", "{{ ('x' * 1001) | length }}", "max_value_bytes",
                  l);
  expect_boundary("{{ ('x' * 500 + 'y' * 500) | length }}",
                  "{{ ('x' * 500 + 'y' * 501) | length }}", "max_value_bytes", l);
  expect_boundary("{{ range(2) | join('x' * 998) | length }}",
                  "{{ range(2) | join('x' * 999) | length }}", "max_value_bytes", l);
  const size_t item = sizeof(vllm::tok::jinja::Value);
  const std::string fits = std::to_string(1000 / item), over = std::to_string(1000 / item + 1);
  expect_boundary("{{ ([0] * " + fits + ") | length }}", "{{ ([0] * " + over + ") | length }}",
                  "max_value_bytes", l);
}

// Empty sequences repeated any number of times are empty at once: [] * 10**12 used to loop
// 10^12 times (fuzz_chat_template: a render past its 30 s timeout).
TEST(ChatTemplateLimits, RepeatingAnEmptySequenceIsImmediate) {
  ChatTemplateLimits l;
  l.max_render_ms = 100000;  // the outcome must not hang on the budget
  EXPECT_EQ(run("{{ ([] * 1000000000000) | length }} {{ ((1, 2)[2:] * 1000000000000) | length }} "
                "{{ ('' * 1000000000000) | length }} {{ ([1] * 0 * 2 * 1000000000000) | length }}",
                json::object(), l),
            "0 0 0 0");
}

TEST(ChatTemplateLimits, ValueDepthOfInputAndBuiltValues) {
  ChatTemplateLimits l;
  l.max_value_depth = 10;
  // The context object is level 1, so `x` may hold 9 levels of lists.
  json ok = json::parse(repeat("[", 9) + repeat("]", 9));
  json bad = json::parse(repeat("[", 10) + repeat("]", 10));
  EXPECT_EQ(run("{{ x | length }}", {{"x", ok}}, l), "1");
  std::string e = run("{{ x | length }}", {{"x", bad}}, l);
  EXPECT_NE(e.find("ChatTemplateLimits::max_value_depth"), std::string::npos) << e;
  const std::string build =
      "{% set ns = namespace(l=[]) %}{% for i in range(N) %}{% set ns.l = [ns.l] %}{% endfor %}"
      "{{ ns.l | length }}";
  auto with = [&](int n) {
    std::string s = build;
    s.replace(s.find('N'), 1, std::to_string(n));
    return s;
  };
  expect_boundary(with(9), with(10), "max_value_depth", l);
}

TEST(ChatTemplateLimits, LoopIterationsIncludeFilterProbesAndMacroCalls) {
  ChatTemplateLimits l;
  l.max_loop_iterations = 100;
  expect_boundary("{% for i in range(10) %}{% for j in range(9) %}{% endfor %}{% endfor %}",
                  "{% for i in range(10) %}{% for j in range(10) %}{% endfor %}{% endfor %}",
                  "max_loop_iterations", l);
  expect_boundary("{% for i in range(100) if false %}{% endfor %}",
                  "{% for i in range(101) if false %}{% endfor %}", "max_loop_iterations", l);
  const std::string m = "{% macro m() %}{% endmacro %}";
  expect_boundary(m + "{% for i in range(50) %}{{ m() }}{% endfor %}",
                  m + "{% for i in range(51) %}{{ m() }}{% endfor %}", "max_loop_iterations", l);
}

TEST(ChatTemplateLimits, TotalBytesAllocated) {
  ChatTemplateLimits l;
  l.max_total_bytes = 1 << 20;
  expect_boundary("{% for i in range(10) %}{% set s = 'x' * 50000 %}{% endfor %}",
                  "{% for i in range(100) %}{% set s = 'x' * 50000 %}{% endfor %}",
                  "max_total_bytes", l);
}

TEST(ChatTemplateLimits, RenderTime) {
  ChatTemplateLimits l;
  l.max_render_ms = 50;
  l.max_loop_iterations = int64_t{1} << 40;
  const std::string spin =
      "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
  timespec t0{}, t1{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  std::string e = run(spin, json::object(), l);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  double cpu = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  EXPECT_NE(e.find("render CPU time exceeds the 50 ms limit (ChatTemplateLimits::max_render_ms)"),
            std::string::npos)
      << e;
  EXPECT_GE(cpu, 0.05);
  EXPECT_LT(cpu, 1.0);
}

// A long scan inside one primitive (a string's length or an index into it, counted in
// characters) is charged as it goes, so a few such calls on a 30 MB string hit the CPU-time
// limit; uncharged, they would finish without ever reaching a clock check (found by
// fuzz_chat_template).
TEST(ChatTemplateLimits, RenderTimeCoversLongStringScans) {
  ChatTemplateLimits l;
  l.max_render_ms = 20;
  for (const std::string body :
       {"{{ s | length }}", "{{ s[29999999] }}", "{{ ([s] | string) | length }}"}) {
    const std::string t =
        "{% set s = 'x' * 30000000 %}{% for i in range(20) %}" + body + "{% endfor %}";
    std::string e = run(t, json::object(), l);
    EXPECT_NE(e.find("render CPU time exceeds the 20 ms limit"), std::string::npos)
        << body << ": " << e.substr(0, 200);
  }
}

// Substring search is linear whatever the needle: 'aaa...ab' in 'aaa...a' made a naive find
// compare ~100 KB at each of 2 M positions (seconds inside one call, where no budget check
// can interrupt it).
TEST(ChatTemplateLimits, SubstringSearchIsLinear) {
  const std::string t =
      "{% set s = 'a' * 2000000 %}{% set n = 'a' * 100000 + 'b' %}"
      "{{ s.find(n) }} {{ s.count(n) }} {{ n in s }} {{ s.split(n) | length }} "
      "{{ s.replace(n, 'x') | length }} {{ s.rfind(n) }} {{ s.rsplit(n, 3) | length }}";
  timespec t0{}, t1{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
  const std::string out = run(t);
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
  const double cpu = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
  EXPECT_EQ(out, "-1 0 False 1 2000000 -1 1");
  EXPECT_LT(cpu, 1.0);
}

TEST(ChatTemplateLimits, ErrorsCarryTheLineAndAHumanReadableLimit) {
  try {
    ChatTemplate("a\n\n{{ 'x' * 40000000 }}").render(json::object());
    FAIL() << "expected an error";
  } catch (const ChatTemplateError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("exceeds the 32 MiB limit"), std::string::npos)
        << e.what();
  }
}

// ---- JSON input ----

// Built by parsing, as a server would: copying (or dumping) a 1,000,000-deep nlohmann::json
// is itself recursive, so the test must not do it.
std::string deep_messages_body(size_t depth) {
  return R"({"messages": [{"role": "user", "content": )" + repeat("[", depth) + repeat("]", depth) +
         "}]}";
}

TEST(ChatTemplateInput, MillionDeepRequestFailsCleanly) {
  for (size_t depth : {20000, 1000000}) {
    std::string body = deep_messages_body(depth);
    std::string e = run("{{ messages | length }}", json::parse(body));
    EXPECT_NE(e.find("nesting depth of the input JSON exceeds the 512 limit"), std::string::npos)
        << e;
    EXPECT_THROW(ChatTemplate("{{ 1 }}").render_ordered(nlohmann::ordered_json::parse(body)),
                 ChatTemplateError);
  }
  std::string tools = "{\"tools\": " + repeat("{\"k\":", 100000) + "1" + repeat("}", 100000) + "}";
  EXPECT_NE(run("x", json::parse(tools)).find("max_value_depth"), std::string::npos);
}

// ---- stack ----

// Runs `fn` on a thread with a stack of `bytes` that the test owns and paints first, and
// returns how much of it `fn` touched (the untouched tail still holds the paint). A guard page
// below the stack turns an overflow into a crash rather than silent corruption.
size_t stack_high_water(size_t bytes, const std::function<void()>& fn) {
  const size_t page = 4096;
  char* mem = static_cast<char*>(
      mmap(nullptr, bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  EXPECT_NE(mem, MAP_FAILED);
  mprotect(mem, page, PROT_NONE);
  char* stack = mem + page;
  std::memset(stack, 0xa5, bytes);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack, bytes);
  pthread_t t;
  auto trampoline = [](void* f) -> void* {
    (*static_cast<const std::function<void()>*>(f))();
    return nullptr;
  };
  EXPECT_EQ(pthread_create(&t, &attr, trampoline, const_cast<std::function<void()>*>(&fn)), 0);
  pthread_join(t, nullptr);
  pthread_attr_destroy(&attr);
  size_t untouched = 0;
  while (untouched < bytes && static_cast<unsigned char>(stack[untouched]) == 0xa5) ++untouched;
  munmap(mem, bytes + page);
  return bytes - untouched;
}

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

// The deepest renders the default limits allow (every recursion at its bound) must fit in a
// server thread's 8 MiB stack with room to spare, also with AddressSanitizer's larger frames.
TEST(ChatTemplateStack, DefaultLimitsBoundTheStack) {
  const ChatTemplateLimits d;
  const std::string chain = repeat(" + 'x'", 400);
  const std::string deep_input =
      repeat("[", d.max_value_depth - 1) + repeat("]", d.max_value_depth - 1);
  struct Probe {
    const char* name;
    std::string source;
    json context;
  };
  const std::vector<Probe> probes = {
      {"eval depth via recursion", "{% macro m() %}{{ m()" + chain + " }}{% endmacro %}{{ m() }}",
       json::object()},
      {"call depth", "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}", json::object()},
      {"caller recursion",
       "{% macro m() %}{{ caller() }}{% endmacro %}"
       "{% macro r() %}{% call m() %}{{ r() }}{% endcall %}{% endmacro %}{{ r() }}",
       json::object()},
      {"parser brackets",
       "{{ " + repeat("(", d.max_nesting_depth) + "1" + repeat(")", d.max_nesting_depth) + " }}",
       json::object()},
      {"parser lists",
       "{{ " + repeat("[", d.max_nesting_depth) + repeat("]", d.max_nesting_depth) + " }}",
       json::object()},
      {"blocks",
       repeat("{% if true %}", d.max_nesting_depth) + "x" +
           repeat("{% endif %}", d.max_nesting_depth),
       json::object()},
      {"blocks and expression",
       repeat("{% for i in [1] %}", d.max_nesting_depth / 2) + "{{ 1" +
           repeat(" + 1", d.max_nesting_depth - 2) + " }}" +
           repeat("{% endfor %}", d.max_nesting_depth / 2),
       json::object()},
      {"value walks", "{{ x | tojson | length }}{{ x | string | length }}{{ x == y }}{{ x < y }}",
       json::parse("{\"x\": " + deep_input + ", \"y\": " + deep_input + "}")},
  };
  size_t worst = 0;
  for (const Probe& p : probes) {
    size_t used = stack_high_water(size_t{8} << 20, [&] { run(p.source, p.context); });
    std::printf("  stack: %-26s %7zu KiB\n", p.name, used >> 10);
    worst = std::max(worst, used);
  }
  EXPECT_LT(worst, kAsan ? size_t{6} << 20 : size_t{2} << 20);
}

// ---- leaks ----

// A Hermes-style tool template: a macro defined at the top (json_to_python_type style),
// called for every tool and message. Before the fix each render leaked its whole scope,
// messages included, through the macro's reference to the scope that holds it.
const char* kHermesLike = R"({%- macro describe(spec) -%}
{%- if spec.type == 'object' -%}dict[{%- for k, v in spec.properties | items -%}{{ k }}: {{ describe(v) }}{{ ', ' if not loop.last }}{%- endfor -%}]
{%- else -%}{{ spec.type }}{%- endif -%}
{%- endmacro -%}
{%- for tool in tools -%}<tool>{{ tool.name }}({{ describe(tool.parameters) }})</tool>
{% endfor -%}
{%- for m in messages -%}{% call describe({'type': m.role}) %}{% endcall %}: {{ m.content | length }}
{% endfor -%})";

TEST(ChatTemplateLeaks, MacroRendersLeaveNoScopes) {
  ChatTemplate tpl(kHermesLike);
  json ctx = {
      {"tools",
       {{{"name", "f"},
         {"parameters", {{"type", "object"}, {"properties", {{"a", {{"type", "int"}}}}}}}}}},
      {"messages", {{{"role", "user"}, {"content", std::string(100000, 'x')}}}}};
  ASSERT_EQ(tpl.render(ctx), "<tool>f(dict[a: int])</tool>\nuser: 100000\n");
  const int64_t before = vllm::tok::jinja::live_scopes();
  for (int k = 0; k < 50; ++k) tpl.render(ctx);
  EXPECT_EQ(vllm::tok::jinja::live_scopes(), before);
  EXPECT_EQ(before, 0);
}

TEST(ChatTemplateLeaks, NamespaceCyclesAndChainsAreFreed) {
  const int64_t before = vllm::tok::jinja::live_namespaces();
  EXPECT_EQ(run("{% set ns = namespace() %}{% set ns.self = ns %}{% set ns.l = [ns] %}ok"), "ok");
  EXPECT_EQ(run("{% set ns = namespace(cur=none) %}{% for i in range(20000) %}"
                "{% set ns.cur = namespace(next=ns.cur) %}{% endfor %}chain"),
            "chain");
  // Also when the render fails half-way.
  EXPECT_NE(run("{% set ns = namespace() %}{% set ns.self = ns %}{{ 1 // 0 }}").find("ERROR"),
            std::string::npos);
  EXPECT_EQ(vllm::tok::jinja::live_namespaces(), before);
  EXPECT_EQ(vllm::tok::jinja::live_scopes(), 0);
}

TEST(ChatTemplateLeaks, MacroOutlivingItsBlockIsAClearError) {
  // Macros hold their defining scope weakly (that is what breaks the cycle), so one smuggled
  // out of a loop body through a namespace cannot run; Python would still run it.
  std::string e =
      run("{% set ns = namespace() %}{% for i in [1] %}{% macro m() %}x{% endmacro %}"
          "{% set ns.m = m %}{% endfor %}{{ ns.m() }}");
  EXPECT_NE(e.find("macro 'm' was called after the block that defined it had ended"),
            std::string::npos)
      << e;
}

}  // namespace
