// The hostile-template corpus: templates and inputs that crashed, hung, exhausted memory or
// leaked on the chat-template engine before ChatTemplateLimits (commit 4b92f3b), or close
// variants of those. `on_main` records what that engine did with each, as observed by running
// the corpus against it (SIGSEGV = stack overflow, SIGFPE = INT64_MIN / -1 trap, "UB" = caught
// by UBSan, "hang" = still running after 10 s, "OOM" = over 4 GB). Cases whose right answer
// Python jinja2 knows live in tests/golden/chat_template/hostile.json instead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hostile {

struct Case {
  Case(std::string name_, std::string on_main_, std::string source_, nlohmann::json context_,
       std::string error_, std::string output_ = {}, bool check_output_ = true,
       int64_t max_render_ms_ = -1)
      : name(std::move(name_)),
        on_main(std::move(on_main_)),
        source(std::move(source_)),
        context(std::move(context_)),
        error(std::move(error_)),
        output(std::move(output_)),
        check_output(check_output_),
        max_render_ms(max_render_ms_) {}

  std::string name;
  std::string on_main;
  std::string source;
  nlohmann::json context;
  // Substring the ChatTemplateError must contain; empty means the render must succeed.
  std::string error;
  // Expected output when `error` is empty and `check_output` (derived from the inputs).
  std::string output;
  bool check_output = true;
  // >= 0 overrides ChatTemplateLimits::max_render_ms: for work that only the clock bounds.
  int64_t max_render_ms = -1;
  // Large inputs are built when the case runs, not when the corpus is listed.
  std::function<nlohmann::json()> big_context;
};

inline std::string repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t k = 0; k < n; ++k) out += s;
  return out;
}

// {"<key>": [[[...]]]} with the value n levels deep, parsed as a server would: building it
// with nlohmann's initializer lists would copy it, and copying is recursive.
inline nlohmann::json deep_array(const std::string& key, size_t n) {
  return nlohmann::json::parse("{\"" + key + "\": " + repeat("[", n) + repeat("]", n) + "}");
}
inline nlohmann::json deep_object(const std::string& key, size_t n) {
  return nlohmann::json::parse("{\"" + key + "\": " + repeat("{\"x\":", n) + "0" + repeat("}", n) +
                               "}");
}

inline std::vector<Case> cases() {
  std::vector<Case> c;
  const char* kOverflow = "integer overflow";
  const char* kNesting = "max_nesting_depth";
  const char* kCallDepth = "max_call_depth";
  const char* kValueBytes = "max_value_bytes";
  const char* kValueDepth = "max_value_depth";
  const char* kIterations = "max_loop_iterations";
  const char* kClock = "max_render_ms";

  // ---- integer arithmetic (Python has big ints; we refuse what int64 cannot hold) ----
  c.push_back({"int_min_floordiv_minus_one",
               "SIGFPE",
               "{{ (-9223372036854775807-1) // -1 }}",
               {},
               kOverflow});
  c.push_back({"int_add_overflow",
               "UB: signed overflow, printed a wrapped value",
               "{{ 9223372036854775807 + 1 }}",
               {},
               kOverflow});
  c.push_back(
      {"int_mul_overflow", "UB: signed overflow", "{{ 9223372036854775807 * 2 }}", {}, kOverflow});
  c.push_back({"int_sub_overflow",
               "UB: signed overflow",
               "{{ (-9223372036854775807-1) - 1 }}",
               {},
               kOverflow});
  c.push_back(
      {"int_negate_min", "UB: signed overflow", "{{ -(-9223372036854775807-1) }}", {}, kOverflow});
  c.push_back({"int_pow_huge_exponent",
               "hang: 10**13 multiplications (UBSan: overflow)",
               "{{ 2 ** 10000000000000 }}",
               {},
               kOverflow});
  c.push_back({"int_pow_overflow", "UB: signed overflow", "{{ 3 ** 40 }}", {}, kOverflow});
  c.push_back({"abs_int_min",
               "UB: llabs(INT64_MIN)",
               "{{ (-9223372036854775807-1) | abs }}",
               {},
               kOverflow});
  c.push_back({"sum_overflow",
               "UB: signed overflow",
               "{{ [9223372036854775807, 1] | sum }}",
               {},
               kOverflow});
  c.push_back({"divisibleby_zero_in_loop",
               "SIGFPE",
               "{% for d in [2, 0] %}{{ 4 is divisibleby(d) }}{% endfor %}",
               {},
               "by zero"});
  c.push_back({"float_to_int_out_of_range",
               "UB (float-cast-overflow): printed -9223372036854775808",
               "{{ 1e300 | int }}",
               {},
               "outside the 64-bit range"});
  c.push_back({"float_infinity_to_int",
               "returned 0 (Python raises OverflowError)",
               "{{ (1e308 * 10) | int }}",
               {},
               "infinity"});
  c.push_back({"int_literal_too_large",
               "std::out_of_range escaped (not a ChatTemplateError)",
               "{{ 99999999999999999999 }}",
               {},
               "64-bit range"});
  c.push_back({"input_integer_too_large",
               "wrapped to a negative number",
               "{{ n }}",
               {{"n", UINT64_MAX}},
               "64-bit range"});

  // ---- parser nesting: each of these overflowed the stack while parsing or evaluating ----
  c.push_back({"parentheses_5000",
               "SIGSEGV (parser recursion)",
               "{{ " + repeat("(", 5000) + "1" + repeat(")", 5000) + " }}",
               {},
               kNesting});
  c.push_back({"if_nesting_20000",
               "SIGSEGV (parser recursion)",
               repeat("{% if true %}", 20000) + "x" + repeat("{% endif %}", 20000),
               {},
               kNesting});
  c.push_back({"for_nesting_30000",
               "SIGSEGV (parser recursion)",
               repeat("{% for a in [1] %}", 30000) + "x" + repeat("{% endfor %}", 30000),
               {},
               kNesting});
  c.push_back({"filter_chain_100000",
               "SIGSEGV (evaluation and AST destruction)",
               "{{ 'a'" + repeat("|trim", 100000) + " }}",
               {},
               kNesting});
  c.push_back({"plus_chain_100000",
               "SIGSEGV (evaluation and AST destruction)",
               "{{ 1" + repeat("+1", 100000) + " }}",
               {},
               kNesting});
  c.push_back({"attribute_chain_100000",
               "SIGSEGV (evaluation and AST destruction)",
               "{{ x" + repeat(".a", 100000) + " }}",
               {},
               kNesting});
  c.push_back({"not_chain_100000",
               "SIGSEGV (parser recursion)",
               "{{ " + repeat("not ", 100000) + "true }}",
               {},
               kNesting});
  c.push_back({"unary_minus_chain_100000",
               "SIGSEGV (parser recursion)",
               "{{ " + repeat("- ", 100000) + "1 }}",
               {},
               kNesting});
  c.push_back({"else_chain_30000",
               "SIGSEGV (parser recursion)",
               "{{ 1" + repeat(" if x else 1", 30000) + " }}",
               {},
               kNesting});
  c.push_back({"list_literal_50000",
               "SIGSEGV (parser recursion)",
               "{{ " + repeat("[", 50000) + repeat("]", 50000) + " }}",
               {},
               kNesting});
  c.push_back({"dict_literal_30000",
               "SIGSEGV (parser recursion)",
               "{{ " + repeat("{'a': ", 30000) + "1" + repeat("}", 30000) + " }}",
               {},
               kNesting});
  c.push_back({"call_nesting_30000",
               "SIGSEGV (parser recursion)",
               "{{ " + repeat("f(", 30000) + "1" + repeat(")", 30000) + " }}",
               {},
               kNesting});
  c.push_back({"subscript_nesting_30000",
               "SIGSEGV (parser recursion)",
               "{{ " + repeat("x[", 30000) + "0" + repeat("]", 30000) + " }}",
               {},
               kNesting});

  // ---- recursion at render time ----
  c.push_back({"macro_self_recursion",
               "SIGSEGV",
               "{% macro m() %}{{ m() }}{% endmacro %}{{ m() }}",
               {},
               kCallDepth});
  c.push_back({"macro_mutual_recursion",
               "SIGSEGV",
               "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ a() }}{% endmacro %}"
               "{{ a() }}",
               {},
               kCallDepth});
  c.push_back({"call_block_recursion",
               "SIGSEGV",
               "{% macro m() %}{% call m() %}{% endcall %}{% endmacro %}{{ m() }}",
               {},
               kCallDepth});
  c.push_back({"caller_recursion",
               "SIGSEGV",
               "{% macro m() %}{{ caller() }}{% endmacro %}"
               "{% macro r() %}{% call m() %}{{ r() }}{% endcall %}{% endmacro %}{{ r() }}",
               {},
               kCallDepth});
  // Each call sits 400 expressions deep: call depth alone would allow 200 calls, ~80,000
  // frames; the total evaluation depth stops it first.
  c.push_back({"macro_recursion_deep_expression",
               "SIGSEGV",
               "{% macro m() %}{{ m()" + repeat(" + 'x'", 400) + " }}{% endmacro %}{{ m() }}",
               {},
               "max_eval_depth"});
  c.push_back({"macro_fan_out",
               "hang: 2**60 calls",
               "{% macro m(n) %}{% if n %}{{ m(n - 1) }}{{ m(n - 1) }}{% endif %}{% endmacro %}"
               "{{ m(60) }}",
               {},
               kIterations});

  // ---- values nested without bound ----
  c.push_back({"built_list_nesting_100000",
               "SIGSEGV (printing, then destroying the list)",
               "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
               "{% set ns.l = [ns.l] %}{% endfor %}{{ ns.l }}",
               {},
               kValueDepth});
  c.push_back({"built_dict_nesting_100000",
               "SIGSEGV (tojson, then destroying the dict)",
               "{% set ns = namespace(d={}) %}{% for i in range(100000) %}"
               "{% set ns.d = {'k': ns.d} %}{% endfor %}{{ ns.d | tojson }}",
               {},
               kValueDepth});
  c.push_back({"namespace_chain_print_20000",
               "SIGSEGV (printing, then destroying the chain)",
               "{% set ns = namespace(cur=none) %}{% for i in range(20000) %}"
               "{% set ns.cur = namespace(next=ns.cur) %}{% endfor %}{{ ns.cur }}",
               {},
               kValueDepth});
  c.push_back({"input_array_nesting_20000",
               "SIGSEGV (recursive JSON conversion)",
               "{{ messages | length }}",
               {},
               kValueDepth});
  c.back().big_context = [] { return deep_array("messages", 20000); };
  c.push_back({"input_array_nesting_1000000",
               "SIGSEGV (recursive JSON conversion)",
               "{{ messages | length }}",
               {},
               kValueDepth});
  c.back().big_context = [] { return deep_array("messages", 1000000); };
  c.push_back({"input_object_nesting_100000",
               "SIGSEGV (recursive JSON conversion)",
               "{{ enable_thinking }}",
               {},
               kValueDepth});
  c.back().big_context = [] { return deep_object("enable_thinking", 100000); };
  c.push_back({"input_millions_of_items",
               "rendered, with ~140 MB of values for a 2 MB body",
               "{{ messages | length }}",
               {},
               kValueBytes});
  c.back().big_context = [] {
    return nlohmann::json::parse("{\"messages\": [" + repeat("0,", 999999) + "0]}");
  };

  // ---- sizes: each allocated gigabytes (or tried to) ----
  c.push_back({"string_repeat_10g", "OOM", "{{ 'x' * 10000000000 }}", {}, kValueBytes});
  c.push_back({"list_repeat_10g", "OOM", "{{ [1, 2] * 10000000000 }}", {}, kValueBytes});
  c.push_back({"string_doubling_in_loop",
               "OOM",
               "{% set ns = namespace(s='x') %}{% for i in range(64) %}"
               "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
               {},
               kValueBytes});
  c.push_back({"string_multiplication_in_loop",
               "hang: 3 TB of memset",
               "{% for i in range(100000) %}{% set s = 'x' * 30000000 %}{% endfor %}",
               {},
               "max_total_bytes"});
  c.push_back({"list_growth_quadratic",
               "hang: 5e9 value copies",
               "{% set ns = namespace(l=[]) %}{% for i in range(100000) %}"
               "{% set ns.l = ns.l + [i] %}{% endfor %}{{ ns.l | length }}",
               {},
               "max_total_bytes"});
  c.push_back({"join_huge_separator",
               "OOM (100 GB)",
               "{{ range(100000) | join('x' * 1000000) }}",
               {},
               kValueBytes});
  c.push_back({"str_join_method_huge",
               "OOM",
               "{{ ('x' * 1000000).join(range(100000) | map('string')) }}",
               {},
               kValueBytes});
  c.push_back({"replace_amplification",
               "hang, then OOM (1 TB)",
               "{{ ('x' * 1000000).replace('x', 'y' * 1000000) }}",
               {},
               kValueBytes});
  c.push_back({"replace_empty_pattern",
               "OOM (bad_alloc escaped)",
               "{{ ('x' * 1000000).replace('', 'y' * 100000) }}",
               {},
               kValueBytes});
  c.push_back({"replace_filter_amplification",
               "variant: rendered 100 MB (100x growth)",
               "{{ ('x' * 1000000) | replace('x', 'y' * 100) }}",
               {},
               kValueBytes});
  c.push_back({"tojson_huge_indent",
               "OOM (bad_alloc escaped)",
               "{{ {'a': [[1]]} | tojson(indent=1000000000) }}",
               {},
               kValueBytes});
  c.push_back({"tojson_indent_wraps_int",
               "indent 2**32 wrapped to 0 and rendered",
               "{{ {'a': 1} | tojson(indent=4294967296) }}",
               {},
               kValueBytes});
  c.push_back({"indent_huge_width",
               "OOM (bad_alloc escaped)",
               "{{ 'a\\nb' | indent(100000000000) }}",
               {},
               kValueBytes});
  c.push_back({"indent_string_width",
               "OOM (10 GB)",
               "{{ ('a\\n' * 100000) | indent('x' * 100000) }}",
               {},
               kValueBytes});
  c.push_back({"exponential_tojson",
               "hang: 2**64 nodes",
               "{% set ns = namespace(l=[1]) %}{% for i in range(64) %}"
               "{% set ns.l = [ns.l, ns.l] %}{% endfor %}{{ ns.l | tojson }}",
               {},
               kValueBytes});
  c.push_back({"exponential_equality",
               "hang: 2**64 comparisons",
               "{% set ns = namespace(a=[1], b=[1]) %}{% for i in range(64) %}"
               "{% set ns.a = [ns.a, ns.a] %}{% set ns.b = [ns.b, ns.b] %}{% endfor %}"
               "{{ ns.a == ns.b }}",
               {},
               kValueBytes});
  c.push_back({"escape_amplification",
               "variant: rendered 50 MB (5x growth)",
               "{{ ('\"' * 10000000) | e }}",
               {},
               kValueBytes});
  c.push_back({"split_into_millions",
               "hang (16M one-character values)",
               "{{ (',' * 16000000).split(',') | length }}",
               {},
               kValueBytes});
  c.push_back({"string_to_list_of_chars",
               "hang (30M one-character values)",
               "{{ ('x' * 30000000) | list | length }}",
               {},
               kValueBytes});
  c.push_back({"center_huge_width",
               "refused too (variant of indent's width)",
               "{{ 'x' | center(100000000000) }}",
               {},
               "unsupported filter 'center'"});
  c.push_back({"format_huge_width",
               "refused too (variant of indent's width)",
               "{{ '%99999999999s' | format('x') }}",
               {},
               "unsupported filter 'format'"});
  c.push_back({"ljust_method_huge_width",
               "refused too (variant of indent's width)",
               "{{ 'x'.ljust(100000000000) }}",
               {},
               "no attribute 'ljust'"});
  c.push_back({"set_block_capture_growth",
               "variant: rendered (captured 20 MB)",
               "{% set x %}{% for i in range(1000) %}{% for j in range(20) %}{{ 'x' * 1000 }}"
               "{% endfor %}{% endfor %}{% endset %}{{ x | length }}",
               {},
               "max_output_bytes"});

  // ---- loops ----
  c.push_back({"nested_loops_1e10_outputs",
               "hang",
               "{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
               {},
               kIterations});
  c.push_back({"nested_loops_silent",
               "hang",
               "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
               {},
               kIterations});
  c.push_back({"nested_loops_filter_probes",
               "hang",
               "{% for i in range(100000) %}{% for j in range(100000) if j < 0 %}{% endfor %}"
               "{% endfor %}",
               {},
               kIterations});
  c.push_back({"loop_cycle_nested",
               "hang",
               "{% for i in range(100000) %}{% for j in range(100000) %}"
               "{{ loop.cycle('a', 'b') }}{% endfor %}{% endfor %}",
               {},
               kIterations});
  c.push_back({"dict_update_in_loop",
               "refused too: templates cannot mutate dicts",
               "{% set d = {} %}{% for i in range(100000) %}{% set _ = d.update({i: i}) %}"
               "{% endfor %}",
               {},
               "unsafe"});
  c.push_back({"list_append_self_in_loop",
               "refused too: templates cannot mutate lists",
               "{% set l = [] %}{% for i in range(100000) %}{% set _ = l.append(l) %}"
               "{% endfor %}",
               {},
               "unsafe"});
  c.push_back({"namespace_attribute_churn",
               "variant: 1e10 iterations",
               "{% set ns = namespace(n=0) %}{% for i in range(100000) %}"
               "{% for j in range(100000) %}{% set ns.n = ns.n + 1 %}{% endfor %}{% endfor %}",
               {},
               kIterations});

  // ---- linear work repeated: only the clock bounds these (limit lowered to keep tests fast)
  c.push_back({"substring_search_in_loop",
               "hang: 100,000 scans of 10 MB",
               "{% for i in range(100000) %}{% if 'zz' in s %}{% endif %}{% endfor %}",
               {},
               kClock,
               "",
               true,
               300});
  c.back().big_context = [] { return nlohmann::json{{"s", std::string(10000000, 'x')}}; };
  c.push_back({"unique_quadratic",
               "hang: 5e9 comparisons",
               "{{ range(100000) | unique | list | length }}",
               {},
               kClock,
               "",
               true,
               300});
  c.push_back({"dict_literal_quadratic",
               "hang: quadratic duplicate-key checks",
               "{{ {" +
                   [] {
                     std::string s;
                     for (int k = 0; k < 60000; ++k) s += std::to_string(k) + ":0,";
                     return s;
                   }() +
                   "} | length }}",
               {},
               kClock,
               "",
               true,
               300});

  // ---- source text ----
  c.push_back({"source_over_1mib",
               "variant: rendered (no bound on the source)",
               repeat("x", (size_t{1} << 20) + 1),
               {},
               "max_source_bytes"});
  c.push_back({"source_1mib_of_data",
               "rendered (kept: must stay fast and exact)",
               repeat("abcdefghij", 100000) + "{{ 1 }}",
               {},
               "",
               repeat("abcdefghij", 100000) + "1"});
  c.push_back({"source_100000_tags",
               "rendered (kept: must stay fast and exact)",
               repeat("{{ 'ab' }}", 100000),
               {},
               "",
               repeat("ab", 100000)});
  // Truncated and invalid sequences in the source, in literals and in input values go
  // through every code-point walk (length, slicing, case mapping, ensure_ascii, split, strip)
  // without reading past the end; what they print is not Python's business (Python cannot
  // hold invalid UTF-8 in a str), so only success is required.
  c.push_back({"invalid_utf8",
               "rendered (kept: no over-read on truncated sequences)",
               "\xff\xfe{{ s }}{{ s | length }}{{ s[::-1] }}{{ s.upper() }}{{ s | title }}"
               "{{ s | tojson(ensure_ascii=true) }}{{ s.split() }}{{ s.strip('\xc3') }}"
               "{{ s[-1] }}{{ s | reverse }}{{ s | list }}{{ '\xe2\x82' }}{{ s.find('a') }}",
               {{"s",
                 "\xff\xe2\x82"
                 "a\xc3"}},
               "",
               "",
               false});
  c.push_back({"nul_byte_outside_strings",
               "refused, naming a garbled NUL token",
               std::string("{{ 1 \0 2 }}", 11),
               {},
               "unexpected byte 0x00"});
  c.push_back({"invalid_hex_escape",
               "std::invalid_argument escaped (not a ChatTemplateError)",
               "{{ '\\xZZ' }}",
               {},
               "invalid"});
  return c;
}

}  // namespace hostile
