// ChatTemplateLimits: every bound the chat-template engine enforces on a template and on the
// values rendered through it. Templates come from downloaded model files and (later) request
// bodies, so both the source and its inputs are untrusted; going past any bound is a
// ChatTemplateError naming the bound, never a crash, a hang or a multi-gigabyte allocation.
// docs/CHAT_TEMPLATES.md explains each default against what real templates need.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vllm::tok {

struct ChatTemplateLimits {
  // ---- load time (ChatTemplate's constructor) ----
  // Template source size. Real templates are under 64 KiB.
  size_t max_source_bytes = size_t{1} << 20;
  // How deeply blocks ({% if %} inside {% for %}...), parentheses, brackets, unary operators and
  // operator / filter / attribute chains may nest. Python jinja2 itself gives up near 60
  // parentheses, 100 blocks or 450-term chains; real templates stay under 20.
  int max_nesting_depth = 512;

  // ---- render time (each render() call) ----
  // Bytes of rendered text: the final output and each captured block ({% set %}...{% endset %},
  // macro and caller() bodies, {% filter %} blocks).
  size_t max_output_bytes = size_t{16} << 20;
  // Size of any one string, list or dict an operator, filter, method or literal produces.
  // Strings count their bytes; lists and dicts count sizeof(Value) per item (per key and value)
  // plus their items' own sizes, a shared item counted each time it appears, so that walks
  // over the value (tojson, ==, str) are bounded too.
  size_t max_value_bytes = size_t{32} << 20;
  // Sum over the render of the bytes newly allocated for strings, lists, dicts and output.
  // Bounds the memory a template can hold at once and catches quadratic growth
  // (ns.l = ns.l + [x]) and churn; a real template allocates about ten times what it reads
  // (32x the largest request body the server accepts is room to spare).
  size_t max_total_bytes = size_t{256} << 20;
  // Nesting of lists and dicts, in the input context (request messages, tools, kwargs) and in
  // values the template builds; also bounds printing values that nest through namespace().
  int max_value_depth = 512;
  // Nested macro and caller() calls (Python jinja2 overflows near 150).
  int max_call_depth = 200;
  // Statements and expressions being evaluated at once, summed over all active calls: bounds
  // the interpreter's C++ stack whatever mix of nesting and recursion a template uses. With
  // the defaults, the deepest render (or parse) measured needs under 1 MiB of stack with GCC
  // -O2 and under 4 MiB with AddressSanitizer (chat_template_limits_test's stack probe).
  int max_eval_depth = 2000;
  // Loop iterations over the whole render (nested loops multiply), including items that a
  // loop's `if` filter skips, plus macro and caller() calls (a macro calling itself twice
  // fans out like a loop). A chat template iterates a few times per message and tool, so this
  // covers conversations of tens of thousands of messages; it is also what keeps a runaway
  // loop to a fraction of a second.
  int64_t max_loop_iterations = 100000;
  // CPU time of one render (the rendering thread's, so load elsewhere on the machine does not
  // count): the backstop for work that is linear per operation but repeated many times (a
  // substring search over a large input inside a long loop). Real templates render in
  // milliseconds. 0 disables it.
  int64_t max_render_ms = 2000;
};

}  // namespace vllm::tok
