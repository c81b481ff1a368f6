#!/usr/bin/env python3
"""Render chat templates with Python jinja2, configured as transformers' _compile_jinja_template
(ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]),
json.dumps-based tojson, raise_exception, strftime_now, dict, namespace), and write
tests/golden/chat_template/<name>.json: {template, cases: [{name, context, expected | error}]}.

Usage: python3 tools/make_chat_template_goldens.py [--gguf PATH] [--qwen3 PATH] [--out DIR]
"""
import argparse
import json
import os
import re
import sys
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_env():
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    class TemplateDict:
        def __call__(self, *args, **kwargs):
            return dict(*args, **kwargs)

        def fromkeys(self, *args, **kwargs):
            return dict.fromkeys(*args, **kwargs)

    class TemplateNamespace(jinja2.utils.Namespace):
        # Same underscore guard as transformers' namespace.
        def __init__(*args, **kwargs):
            self, args = args[0], args[1:]
            attrs = dict(*args, **kwargs)
            for name in attrs:
                TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__init__(self, attrs)

        def __setitem__(self, name, value):
            TemplateNamespace._check_name(name)
            jinja2.utils.Namespace.__setitem__(self, name, value)

        @staticmethod
        def _check_name(name):
            if isinstance(name, str) and name.startswith("_"):
                raise jinja2.exceptions.SecurityError(
                    f"Chat templates cannot store underscore-prefixed attributes on a namespace, but got {name!r}. "
                    "Please rename the attribute.")

    env.globals["dict"] = TemplateDict()
    env.globals["namespace"] = TemplateNamespace
    return env


def chatml_from_cpp():
    src = open(os.path.join(ROOT, "src/tokenizer/chat_template/chat_template.cpp")).read()
    m = re.search(r'R"JINJA\((.*?)\)JINJA"', src, re.S)
    return m.group(1)


def smollm2_template(path):
    import gguf
    r = gguf.GGUFReader(path)
    f = r.fields["tokenizer.chat_template"]
    return bytes(f.parts[f.data[0]]).decode("utf-8")


# A Llama-3.1-style template (tools in the system or first user message, ipython role).
LLAMA3 = r"""{{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- set date_string = "26 Jul 2024" %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message + builtin tools #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {#- Extract the first user message so we can plug it in here #}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
        {{- '{"name": "' + tool_call.name + '", ' }}
        {{- '"parameters": ' }}
        {{- tool_call.arguments | tojson }}
        {{- "}" }}
        {{- "<|eot_id|>" }}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
"""

# A Qwen2.5-style template (default system prompt, tool calls with or without `function`).
QWEN25 = r"""{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
"""

# A Mistral-style template: strict user/assistant alternation enforced with raise_exception.
# Gemma 3's chat_template (google/gemma-3-*-it tokenizer_config.json, as GGUFs carry it): the
# model's own template, data of the model files users run.
GEMMA3 = r"""{{ bos_token }}
{%- if messages[0]['role'] == 'system' -%}
    {%- if messages[0]['content'] is string -%}
        {%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}
    {%- else -%}
        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\n\n' -%}
    {%- endif -%}
    {%- set loop_messages = messages[1:] -%}
{%- else -%}
    {%- set first_user_prefix = "" -%}
    {%- set loop_messages = messages -%}
{%- endif -%}
{%- for message in loop_messages -%}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}
        {{ raise_exception("Conversation roles must alternate user/assistant/user/assistant/...") }}
    {%- endif -%}
    {%- if (message['role'] == 'assistant') -%}
        {%- set role = "model" -%}
    {%- else -%}
        {%- set role = message['role'] -%}
    {%- endif -%}
    {{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else "") }}
    {%- if message['content'] is string -%}
        {{ message['content'] | trim }}
    {%- elif message['content'] is iterable -%}
        {%- for item in message['content'] -%}
            {%- if item['type'] == 'image' -%}
                {{ '<start_of_image>' }}
            {%- elif item['type'] == 'text' -%}
                {{ item['text'] | trim }}
            {%- endif -%}
        {%- endfor -%}
    {%- else -%}
        {{ raise_exception("Invalid content type") }}
    {%- endif -%}
    {{ '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{'<start_of_turn>model\n'}}
{%- endif -%}
"""

MISTRAL = r"""{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- if loop.first and system_message is defined %}
            {{- ' [INST] ' + system_message + '\n\n' + message['content'] + ' [/INST]' }}
        {%- else %}
            {{- ' [INST] ' + message['content'] + ' [/INST]' }}
        {%- endif %}
    {%- elif message['role'] == 'assistant' %}
        {{- ' ' + message['content'] + eos_token}}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}
    {%- endif %}
{%- endfor %}
"""

# Exercises the rest of the subset: filters, tests, macros, call blocks, loop controls,
# slicing, string/dict methods, operators, literals, whitespace control and comments.
FEATURES = r"""{#- feature sweep -#}
{% macro render_msg(m, prefix='> ', upper=false) -%}
{{ prefix }}{{ m.role | upper if upper else m.role }}: {{ m.content | default('(none)', true) | trim }}
{%- endmacro %}
{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}
{% set ns = namespace(count=0, roles=[]) %}
{% for m in messages %}
  {% set ns.count = ns.count + 1 %}
  {% set ns.roles = ns.roles + [m.role] %}
{{ loop.index }}/{{ loop.length }} {{ loop.index0 }} {{ loop.revindex }} {{ loop.first }} {{ loop.last }} {{ render_msg(m) }}
{% endfor %}
count={{ ns.count }} roles={{ ns.roles | join(',') }} unique={{ ns.roles | unique | list | join('|') }}
{%- for m in messages if m.role != 'system' %}
[{{ loop.index }}:{{ m.role | capitalize }}]
{%- if loop.index > 3 %}{% break %}{% endif %}
{%- endfor %}
{% for m in messages %}{% if m.role == 'user' %}{% continue %}{% endif %}({{ m.role }}){% else %}empty{% endfor %}
{% for x in [] %}never{% else %}else-branch{% endfor %}
{{ messages | map(attribute='role') | join(', ') }}
{{ messages | selectattr('role', 'equalto', 'user') | list | length }} users, {{ messages | rejectattr('role', 'equalto', 'user') | list | length }} others
{{ messages | first | tojson }} / {{ (messages | last).role }}
{{ messages[::-1] | map(attribute='role') | list }} {{ messages[1:3] | length }} {{ messages[-1].role }}
{%- set text = messages[-1].content | string %}
{{ text.upper() }}|{{ text.lower() }}|{{ text | title }}|{{ text.split(' ') | length }}|{{ text.split() }}
{{ '  padded  '.strip() }}|{{ 'xxhixx'.strip('x') }}|{{ '\n\nabc\n'.lstrip('\n') }}|{{ 'abc\n\n'.rstrip() }}|{{ 'a,b,,c'.split(',') }}|{{ 'a b c'.rsplit(' ', 1) }}
{{ 'hello'.startswith('he') }} {{ 'hello'.endswith(('lo', 'x')) }} {{ 'hello'.replace('l', 'L') }} {{ 'hello' | replace('l', '_', 1) }} {{ 'hello'.find('l') }} {{ 'hello'.count('l') }}
{{ 1 + 2 * 3 - 4 / 2 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 2 ** 8 }} {{ 1.5 + 1 }} {{ 10 / 4 }} {{ 0.1 + 0.2 }} {{ 1e3 }} {{ 3 * 'ab' }} {{ [1] * 2 }}
{{ 'a' ~ 1 ~ none ~ true }} {{ 'abc'[1] }} {{ 'abc'[-1] }} {{ 'héllo wörld'[1:5] }} {{ 'héllo' | length }} {{ [3,1,2] | sort }} {{ ['b','A','c'] | sort(reverse=true) }}
{{ 1 < 2 < 3 }} {{ 1 < 3 < 2 }} {{ 'b' > 'a' }} {{ [1,2] == [1,2] }} {{ 2 in [1,2] }} {{ 'x' not in 'abc' }} {{ 'k' in {'k': 1} }} {{ none is none }} {{ 1 is number }} {{ 'a' is string }}
{{ true and 'yes' }} {{ false or 'fallback' }} {{ 0 or '' or 'last' }} {{ not none }} {{ 'a' if 1 > 2 else 'b' }} [{{ 'never' if false }}]
{{ undefined_thing is defined }} {{ undefined_thing is undefined }} [{{ undefined_thing }}] {{ undefined_thing | default('dflt') }} {{ '' | default('empty-kept') }}|{{ '' | default('empty-replaced', true) }}
{{ {'b': 1, 'a': [1, 2.5, none, true, 'x"y']} | tojson }} {{ {'b': 1, 'a': {'c': []}} | tojson(indent=2) }} {{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}
{{ {'k': 'v', 'n': 1}.items() | list }} {{ {'k': 'v'}.keys() | list }} {{ {'k': 'v'}.values() | list }} {{ {'k': 'v'}.get('k') }} {{ {'k': 'v'}.get('z', 'dz') }} {{ {'k': 'v'}.get('z') }}
{% for k, v in {'one': 1, 'two': 2} | items %}{{ k }}={{ v }};{% endfor %} {% for k, v in {'x': 1}.items() %}{{ k }}{{ v }}{% endfor %}
{{ '42' | int + 1 }} {{ '3.9' | int }} {{ 'abc' | int }} {{ 3.7 | int }} {{ '2.5' | float }} {{ 5 | string ~ '!' }} {{ [1, 2, 3] | sum }} {{ [4, 2, 9] | max }} {{ [4, 2, 9] | min }} {{ -3 | abs }}
{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ dict(a=1, b='x') }} {{ [1, 'a', none, 1.0, {'q': (1, 2)}] }} {{ ('t',) }}
{{ messages | length is divisibleby 1 }} {{ 3 is odd }} {{ 4 is even }} {{ 'ABC' is upper }} {{ [] is iterable }} {{ {} is mapping }} {{ 1 is sameas 1 }} {{ true is true }} {{ 0 is false }}
{% call wrap('b') %}inner {{ messages | length }}{% endcall %}
{% filter upper %}filtered {{ 'text' }}{% endfilter %}
{% set block_var %}captured {{ 1 + 1 }}{% endset %}{{ block_var | trim }}
{{ "line1\nline2\n\nline4" | indent(2) }}
{{ "line1\nline2" | indent(4, true) }}
{{ "<a href='x'>&</a>" | e }}
{%- if messages | selectattr('role', 'equalto', 'tool') | list %}
has-tool
{%- elif messages | length > 2 %}
long
{%- else %}
short
{%- endif %}
{% raw %}{{ not rendered }} {% if %}{% endraw %}
    {%+ if true %}kept-indent{% endif %}
    {% if true +%}
plus-kept-newline{% endif %}
{{ 'end' -}}
   
"""


# Small templates, one behaviour each: whitespace control (trim_blocks, lstrip_blocks, -/+),
# scoping, operators, Undefined, filters and error cases. (name, template, context)
SNIPPETS = [
    ("trim_blocks", "{% if true %}\nA\n{% endif %}\nB\n", {}),
    ("lstrip_blocks", "  {% if true %}\n  A\n  {% endif %}\nB", {}),
    ("lstrip_not_variables", "  {{ 'x' }}\n  {% if true %}y{% endif %}", {}),
    ("lstrip_only_ws_before", "a {% if true %}b{% endif %} c", {}),
    ("minus_left", "a  \n\n  {%- if true %}b{% endif %}", {}),
    ("minus_right", "{% if true -%}  \n\n  b{% endif %}", {}),
    ("minus_var", "a \n {{- 'b' -}} \n c", {}),
    ("plus_left_keeps_indent", "  {%+ if true %}x{% endif %}", {}),
    ("plus_right_keeps_newline", "{% if true +%}\nx{% endif %}", {}),
    ("comment_trim", "a\n  {# comment #}\nb", {}),
    ("comment_minus", "a  {#- comment -#}  b", {}),
    ("trailing_newline_dropped", "x\n", {}),
    ("two_trailing_newlines", "x\n\n", {}),
    ("crlf_normalized", "a\r\nb\rc{% if true %}\r\nd{% endif %}", {}),
    ("tab_lstrip", "\t\t{% if true %}x{% endif %}", {}),
    ("first_line_lstrip", "   {% if true %}x{% endif %}", {}),
    ("var_then_block_same_line", "{{ 'a' }}  {% if true %}b{% endif %}", {}),
    ("block_end_newline_then_indent", "{% set x = 1 %}\n    {% if x %}\n    y\n    {% endif %}\n", {}),
    ("raw_block", "{% raw %}{{ x }}{% endraw %}|{%- raw -%}  {% y %}  {%- endraw %}", {}),
    ("nested_loops_scope", "{% for a in [1,2] %}{% for b in 'xy' %}{{ a }}{{ b }}{{ loop.index }}{% endfor %}{{ loop.index }};{% endfor %}", {}),
    ("set_in_loop_is_local", "{% set x = 0 %}{% for i in [1,2] %}{% set x = i %}{{ x }}{% endfor %}{{ x }}", {}),
    ("set_in_if_is_global", "{% if true %}{% set x = 5 %}{% endif %}{{ x }}", {}),
    ("namespace_in_loop", "{% set ns = namespace(v=0) %}{% for i in range(4) %}{% set ns.v = ns.v + i %}{% endfor %}{{ ns.v }}", {}),
    ("loop_prev_next", "{% for i in [1,2,3] %}{{ loop.previtem }}-{{ loop.nextitem }}-{{ loop.cycle('a','b') }} {% endfor %}", {}),
    ("loop_filter_length", "{% for i in range(10) if i is odd %}{{ i }}/{{ loop.length }}{{ ',' if not loop.last }}{% endfor %}", {}),
    ("break_else", "{% for i in [1] %}{% break %}{% else %}else{% endfor %}", {}),
    ("macro_defaults_kwargs", "{% macro f(a, b=2, c='z') %}{{ a }}{{ b }}{{ c }}{% endmacro %}{{ f(1) }} {{ f(1, c=3) }} {{ f(a=0, b=none) }}", {}),
    ("macro_sees_later_set", "{% macro f() %}{{ y }}{% endmacro %}{% set y = 'late' %}{{ f() }}", {}),
    ("macro_missing_arg_undefined", "{% macro f(a, b) %}[{{ b }}]{% endmacro %}{{ f(1) }}", {}),
    ("call_block_args", "{% macro m() %}{{ caller(7) }}{% endmacro %}{% call(x) m() %}got {{ x }}{% endcall %}", {}),
    ("float_repr", "{{ 1/3 }} {{ 2.0 }} {{ 1e16 }} {{ 1e15 }} {{ 123456789.125 }} {{ 1e-5 }} {{ 0.0001 }} {{ -0.0 }} {{ 1.5e300 * 1 }}", {}),
    ("int_ops", "{{ 7 // -2 }} {{ 7 % -2 }} {{ -7.5 // 2 }} {{ -7.5 % 2 }} {{ 2 ** -1 }} {{ 10 - 3 - 2 }} {{ 2 * 3 ** 2 }}", {}),
    ("bool_arith", "{{ true + 1 }} {{ true == 1 }} {{ 1 == 1.0 }} {{ false * 3 }}", {}),
    ("string_concat_ops", "{{ 'a' + 'b' }} {{ 'a' ~ 2 }} {{ 'ab' * 2 }} {{ ('x' ~ none) }}", {}),
    ("compare_chain", "{{ 1 < 2 > 0 }} {{ 1 == 1 != 2 }} {{ 'abc' < 'abd' }} {{ [1, 2] < [1, 3] }}", {}),
    ("in_ops", "{{ 'a' in 'cat' }} {{ 'z' not in ['a'] }} {{ 1 in {1: 2} }} {{ 'x' in [] }}", {}),
    ("ternary_nested", "{{ 'a' if x else 'b' if y else 'c' }}", {"x": False, "y": True}),
    ("ternary_no_else", "[{{ 'a' if false }}]", {}),
    ("not_precedence", "{{ not 1 == 2 }} {{ not x is defined }} {{ (not true) or true }}", {}),
    ("filter_precedence", "{{ -3 | abs }} {{ 'a' ~ 'b' | upper }} {{ [1,2] | length + 1 }}", {}),
    ("undefined_print", "[{{ missing }}][{{ missing | string }}][{{ missing | length }}]", {}),
    ("undefined_attr_of_dict", "[{{ d.nokey }}][{{ d['nokey'] }}][{{ d.nokey is defined }}]", {"d": {"k": 1}}),
    ("undefined_iter", "{% for x in missing %}x{% else %}none{% endfor %}", {}),
    ("undefined_eq", "{{ missing == missing2 }} {{ missing == none }} {{ missing != 1 }}", {}),
    ("none_attr", "[{{ n.x }}]", {"n": None}),
    ("dict_attr_vs_method", "{{ d.items is callable }}|{{ d['items'] }}|{{ d.get('items') }}|{{ d.items() | list }}", {"d": {"items": "key"}}),
    ("error_namespace_underscore_set", "{% set ns = namespace(a=1) %}{% set ns._b = 2 %}{{ ns.a }}", {}),
    ("dict_literal_order", "{{ {'z': 1, 'a': 2, 'z': 3} }}", {}),
    ("list_index_negative", "{{ l[-1] }} {{ l[0] }} [{{ l[5] }}] {{ l[1:] }} {{ l[:-1] }} {{ l[::2] }} {{ l[::-1] }} {{ l[5:] }}", {"l": [1, 2, 3, 4]}),
    ("string_slicing_unicode", "{{ s[::-1] }} {{ s[2:4] }} {{ s[-2:] }} {{ s | length }}", {"s": "añ日本🚀x"}),
    ("string_methods_ws", "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ s.split() }}][{{ s.split(' ') }}]", {"s": "  a  b\t\nc  "}),
    ("split_maxsplit", "{{ 'a,b,c,d'.split(',', 2) }} {{ 'a,b,c,d'.rsplit(',', 2) }} {{ ' a b c '.split(none, 1) }} {{ ' a b c '.rsplit(none, 1) }} {{ 'a'.rsplit(',') }}", {}),
    ("long_needle_search", "{{ s.find(n) }} {{ s.rfind(n) }} {{ s.index(n) }} {{ s.rindex(n) }} {{ s.count(n) }} {{ s.rsplit(n, 1) }} {{ s.rsplit(n) }} {{ s.split(n, 1) }} {{ s.replace(n, '|') }} {{ s.rfind(n + 'zz') }} {{ ('é' + n).rfind(n) }}", {"s": "ab" + "0123456789abcdefXY" * 3 + "ñ" + "0123456789abcdefXY" + "cd", "n": "0123456789abcdefXY"}),
    ("split_think", "{{ c.split('</think>')[-1].lstrip('\\n') }}|{{ c.split('</think>')[0].rstrip('\\n').split('<think>')[-1].lstrip('\\n') }}", {"c": "<think>\nabc\n</think>\n\nanswer"}),
    ("startswith_tuple", "{{ 'hello'.startswith(('x', 'he')) }} {{ 'hello'.endswith('') }}", {}),
    ("capitalize_title", "{{ 'hELLO wORLD' | capitalize }} {{ 'hello-world foo(bar)' | title }} {{ \"they're\".title() }}", {}),
    ("trim_filter", "[{{ '  x  ' | trim }}][{{ 'xxyxx' | trim('x') }}]", {}),
    ("join_attribute", "{{ users | join(', ', attribute='name') }} {{ [1, 2] | join }}", {"users": [{"name": "a"}, {"name": "b"}]}),
    ("map_filters", "{{ ['a', 'B'] | map('upper') | list }} {{ [{'x': {'y': 1}}] | map(attribute='x.y') | list }} {{ [{}] | map(attribute='q', default='d') | list }}", {}),
    ("select_reject", "{{ [0, 1, 2, none, ''] | select | list }} {{ [1, 2, 3, 4] | reject('odd') | list }} {{ [1, 2, 3] | select('gt', 1) | list }}", {}),
    ("selectattr_truthy", "{{ ms | selectattr('tool_calls') | list | length }} {{ ms | rejectattr('tool_calls') | map(attribute='role') | list }}", {"ms": [{"role": "a", "tool_calls": [1]}, {"role": "b"}]}),
    ("selectattr_defined", "{{ ms | selectattr('x', 'defined') | list | length }} {{ ms | selectattr('x', 'none') | list | length }}", {"ms": [{"x": None}, {}, {"x": 1}]}),
    ("default_filter", "{{ none | default('d') }} {{ none | default('d', true) }} {{ x | d('dd') }} {{ 0 | default(5, boolean=true) }}", {}),
    ("first_last", "{{ [1, 2] | first }} {{ 'abc' | last }} [{{ [] | first }}]", {}),
    ("tojson_unicode_escapes", "{{ d | tojson }}", {"d": {"s": "é\u00e9 \u2028 \x01 \t \\ / 🚀", "f": 1.0, "i": -3, "e": 1e-7}}),
    ("tojson_indent", "{{ d | tojson(indent=4) }}", {"d": {"a": [1, {"b": None}], "c": {}, "d": []}}),
    ("tojson_ensure_ascii", "{{ 'é🚀' | tojson(ensure_ascii=true) }} {{ 'é' | tojson(true) }}", {}),
    ("tojson_separators", "{{ {'a': [1, 2]} | tojson(separators=(',', ':')) }}", {}),
    ("tojson_scalars", "{{ none | tojson }} {{ true | tojson }} {{ 'x' | tojson }} {{ 3 | tojson }} {{ 2.50 | tojson }}", {}),
    ("repr_strings", "{{ ['it\\'s', 'say \"hi\"', 'both \\' \"', 'nl\\n', 'tab\\t', 'back\\\\'] }}", {}),
    ("items_filter", "{% for k, v in d | items %}{{ k }}={{ v }},{% endfor %}{{ d | list }}", {"d": {"b": 1, "a": [2]}}),
    ("dict_global", "{{ dict(a=1) }} {{ dict({'x': 1}, y=2) }}", {}),
    ("int_float_filters", "{{ ' 12 ' | int }} {{ '0x1A' | int }} {{ 'x' | int(7) }} {{ '1e3' | float }} {{ true | int }} {{ 3 | float }}", {}),
    ("string_filter_types", "{{ [1, 'a'] | string }} {{ none | string }} {{ 1.0 | string }}", {}),
    ("tests_misc", "{{ 3 is integer }} {{ 3.0 is float }} {{ true is boolean }} {{ 'a' is lower }} {{ none is string }} {{ [1] is sequence }} {{ f is callable }}", {"f": None}),
    ("is_test_with_arg", "{{ 4 is divisibleby 2 }} {{ 'a' is in 'abc' }} {{ x is eq 3 }} {{ x is not equalto 4 }}", {"x": 3}),
    ("range_forms", "{{ range(0) | list }} {{ range(5, 0, -2) | list }}", {}),
    ("indent_filter", "{{ 'a\\nb\\n\\nc' | indent(3, first=true, blank=true) }}|{{ 'x\\ny' | indent('--') }}", {}),
    ("strings_adjacent", "{{ 'a' 'b' \"c\" }}", {}),
    ("string_escapes", "{{ '\\x41\\u00e9\\U0001F680\\101\\q' }}", {}),
    ("multiline_expression", "{{\n  'a'\n  ~\n  'b'\n}}", {}),
    ("unique_sort", "{{ ['b', 'A', 'a', 'B'] | unique | list }} {{ ['b', 'A', 'c'] | sort }} {{ [{'n': 2}, {'n': 1}] | sort(attribute='n') | map(attribute='n') | list }}", {}),
    ("sum_min_max", "{{ [1, 2.5] | sum }} {{ [{'v': 2}, {'v': 3}] | sum(attribute='v') }} {{ ['b', 'A'] | max }}", {}),
    ("replace_count", "{{ 'aaaa' | replace('a', 'b', 2) }} {{ 'abc'.replace('', '-') }}", {}),
    ("count_wordcount", "{{ [1,2] | count }} {{ 'a b  c' | wordcount }}", {}),
    ("filter_block", "{% filter replace('a', 'o') %}banana {{ 'cat' }}{% endfilter %}", {}),
    ("set_block", "{% set x -%}\n  inner {{ 1 }}\n{%- endset %}[{{ x }}]", {}),
    ("tuple_unpack_set", "{% set a, b = 1, 2 %}{{ a }}{{ b }}", {}),
    ("loop_unpack_lists", "{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }};{% endfor %}", {}),
    ("for_items_filtered", "{% for k, v in d.items() if k != 'return' %}{{ k }}:{{ v | tojson }};{% endfor %}", {"d": {"name": "f", "return": 1, "args": [1]}}),
    ("reject_in_list", "{{ d.keys() | reject('in', ['a', 'c']) | list }}", {"d": {"a": 1, "b": 2, "c": 3, "e": 4}}),
    ("selectattr_undefined", "{{ ms | selectattr('tool_calls', 'undefined') | map(attribute='role') | join(',') }}", {"ms": [{"role": "u"}, {"role": "a", "tool_calls": []}, {"role": "t"}]}),
    ("tag_chars_in_strings", "{{ '%}' ~ \"}}\" ~ '{{' }}{% if '%}' %}ok{% endif %}", {}),
    ("dot_integer_index", "{{ l.0 }}{{ l.1.0 }}", {"l": ["a", ["b"]]}),
    ("both_minus", "x   {%- if true -%}   y   {%- endif -%}   z", {}),
    ("minus_comment_and_lstrip", "a\n    {#- c #}\n    b\n    {# d -#}\n    e", {}),
    ("nested_if_indent", "<\n{% for i in [1, 2] %}\n    {% if i == 1 %}\n        one\n    {% else %}\n        other\n    {% endif %}\n{% endfor %}\n>", {}),
    ("newline_after_var", "{{ 'a' }}\n{{ 'b' }}\n", {}),
    ("unicode_methods", "{{ s.upper() }} {{ s | length }} {{ s.split('ü') }} {{ s.replace('ö', 'o') }}", {"s": "grüße aus köln"}),
    ("unicode_case_scripts", "{{ s.upper() }}|{{ s.lower() }}|{{ s.title() }}|{{ s | capitalize }}|{{ s.isupper() }}|{{ 'ΑΒΓ'.isupper() }}", {"s": "Ελληνικά για όλους, Русский язык, ÀÉÎÕÜ àéîõü ĀāĒēŁłŚśŽž ßtraße"}),
    ("error_raise", "{{ raise_exception('custom message: ' ~ x) }}", {"x": 42}),
    ("error_raise_in_loop", "{% for m in ms %}{% if m > 1 %}{{ raise_exception('too big') }}{% endif %}{{ m }}{% endfor %}", {"ms": [1, 2]}),
    ("error_undefined_attr", "{{ missing.attr }}", {}),
    ("error_undefined_add", "{{ missing + 1 }}", {}),
    ("error_type_concat", "{{ 'a' + 1 }}", {}),
    ("error_none_in", "{{ 'a' in none }}", {}),
    ("error_compare_types", "{{ 1 < 'a' }}", {}),
    ("error_div_zero", "{{ 1 / 0 }}", {}),
    ("error_call_non_callable", "{{ 'abc'() }}", {}),
    ("error_mutating_method", "{{ l.append(1) }}", {"l": []}),
    ("error_namespace_underscore", "{% set ns = namespace(_x=1) %}", {}),
]


def base_messages():
    tools = [
        {"type": "function", "function": {
            "name": "get_weather", "description": "Get the current weather in a city",
            "parameters": {"type": "object", "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                "required": ["city"]}}},
        {"type": "function", "function": {
            "name": "search", "description": "Search the web — für alle",
            "parameters": {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}},
    ]
    call = {"type": "function", "function": {"name": "get_weather",
                                             "arguments": {"city": "Paris", "unit": "celsius"}}}
    call_str = {"type": "function", "function": {"name": "search", "arguments": "{\"q\": \"weather\"}"}}
    cases = []

    def add(name, messages, **kw):
        cases.append((name, messages, kw))

    u = lambda c: {"role": "user", "content": c}
    a = lambda c: {"role": "assistant", "content": c}
    s = lambda c: {"role": "system", "content": c}
    t = lambda c: {"role": "tool", "content": c}
    add("single_user", [u("Hello!")])
    add("single_user_no_gen", [u("Hello!")], add_generation_prompt=False)
    add("system_user", [s("You are terse."), u("What is 2+2?")])
    add("multi_turn", [u("Hi"), a("Hello! How can I help?"), u("Tell me a joke.")])
    add("multi_turn_system", [s("Be nice."), u("Hi"), a("Hey."), u("Bye"), a("Goodbye!")],
        add_generation_prompt=False)
    add("unicode", [u("Grüße, 世界! 🚀 Ça va? naïve café"), a("Très bien — merci 🙏"), u("日本語で答えて")])
    add("empty_content", [u("")])
    add("empty_assistant", [u("Hi"), a(""), u("again")])
    add("special_chars", [u("quote \" apostrophe ' backslash \\ tab\tnewline\nend"),
                          a("<b>html</b> & {{ not jinja }} {% raw %}")])
    add("whitespace_content", [u("  leading and trailing  \n\n"), a("\n\nanswer\n\n"), u(" q ")])
    add("tools_user", [u("What's the weather in Paris?")], tools=tools)
    add("tools_system_user", [s("You can use tools."), u("Weather in Paris?")], tools=tools)
    add("tool_call_dict_args", [u("Weather in Paris?"), {"role": "assistant", "content": "", "tool_calls": [call]},
                                t("{\"temp\": 21}")], tools=tools)
    add("tool_call_string_args", [u("Search weather"), {"role": "assistant", "content": "Let me search.",
                                                      "tool_calls": [call_str]},
                                  t("sunny")], tools=tools)
    add("multi_tool_calls", [u("Both please"), {"role": "assistant", "content": "", "tool_calls": [call, call_str]},
                             t("{\"temp\": 21}"), t("results..."), a("It is 21C and sunny.")], tools=tools)
    add("tool_then_user", [u("Weather?"), {"role": "assistant", "content": "", "tool_calls": [call]},
                           t("21C"), a("It's 21C."), u("Thanks! And tomorrow?")], tools=tools)
    add("tool_response_tagged", [u("<tool_response>\nfake\n</tool_response>"), a("ok")])
    add("reasoning_content", [u("Think about 2+2"), {"role": "assistant", "content": "4",
                                                      "reasoning_content": "2+2 is 4."}])
    add("reasoning_content_then_user", [u("2+2?"), {"role": "assistant", "content": "4",
                                                    "reasoning_content": "easy"}, u("and 3+3?")])
    add("think_in_content", [u("Q"), a("<think>\nsome thoughts\n</think>\n\nThe answer.")])
    add("think_in_content_history", [u("Q1"), a("<think>t1</think>A1"), u("Q2"),
                                     a("<think>\nt2\n</think>\n\nA2")], add_generation_prompt=False)
    add("enable_thinking_false", [u("Hi")], enable_thinking=False)
    add("enable_thinking_true", [u("Hi")], enable_thinking=True)
    add("enable_thinking_false_no_gen", [u("Hi")], enable_thinking=False, add_generation_prompt=False)
    add("system_in_middle", [u("Hi"), s("New instructions"), u("ok?")])
    add("long_conversation", [s("sys")] + [m for k in range(6) for m in (u(f"question {k}"), a(f"answer {k}"))]
        + [u("final")])
    add("assistant_last_gen", [u("Hi"), a("partial answ")], add_generation_prompt=False)
    add("content_none_assistant_tool", [u("call it"), {"role": "assistant", "content": None,
                                                       "tool_calls": [call]}, t("done")], tools=tools)
    add("tools_no_messages_system", [u("hello")], tools=tools[:1])
    add("numbers_in_args", [u("calc"), {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "calc", "arguments": {
            "x": 1.5, "y": -2, "z": 1e20, "w": 0.0001, "v": True, "n": None, "l": [1, 2.0, "3"]}}}]},
        t("4.5")], tools=tools)
    add("roles_not_alternating", [u("a"), u("b")])
    add("starts_with_assistant", [a("I speak first"), u("ok")])
    add("unknown_role", [u("hi"), {"role": "narrator", "content": "Meanwhile..."}])
    add("content_parts", [{"role": "user", "content": [{"type": "text", "text": "part one "},
                                                        {"type": "image"}, {"type": "text", "text": "part two"}]}])
    add("no_tools_key", [u("no tools key at all")], _drop_tools=True)
    add("tool_call_no_function_wrapper", [u("x"), {"role": "assistant", "content": "c", "tool_calls": [
        {"name": "search", "arguments": {"q": "direct"}}]}, t("r")], tools=tools)
    add("emoji_only", [u("🎉🎉🎉")])
    add("cjk_system", [s("你是一个乐于助人的助手。"), u("你好")])
    add("newlines_only", [u("\n\n\n")])
    return cases


# Hostile-template cases whose right answer Python jinja2 knows (tests/tokenizer/
# chat_template_test.cpp checks them like the snippets; chat_template_hostile_test.cpp holds the
# ones Python cannot answer). The comment after each says what the engine did before
# ChatTemplateLimits (commit 4b92f3b, ASan+UBSan build); "same" cases guard code that changed.
# Python's output or error is the reference; syntax errors count as errors here too.
def deep_list(n):
    v = []
    for _ in range(n):
        v = [v]
    return v


HOSTILE = [
    # signed overflow stepping past the end (heap over-read without UBSan)
    ("slice_huge_steps", "{{ 'abc'[1::9223372036854775807] }}|{{ 'abcdef'[::-9223372036854775807] }}|"
     "{{ [1,2,3][-9223372036854775807:9223372036854775807:9223372036854775807] }}|"
     "{{ 'abc'[9223372036854775807:] }}|{{ 'abc'[:-9223372036854775807] }}|"
     "{{ 'abc'[::-9223372036854775807-1] }}|{{ l[::4611686018427387904] }}", {"l": [1, 2, 3]}),
    # same error; the slice loop was rewritten
    ("slice_zero_step", "{{ 'abc'[::0] }}", {}),
    # SIGFPE
    ("int_min_mod_minus_one", "{{ (-9223372036854775807-1) % -1 }} {{ 7 % -1 }} {{ 7 // -1 }}", {}),
    # signed overflow in the range loop
    ("range_extreme_bounds", "{{ range(-9223372036854775807-1, 9223372036854775807, 9223372036854775807) | list }}"
     "{{ range(9223372036854775806, 9223372036854775807, 2) | list }}"
     "{{ range(9223372036854775807, -9223372036854775807-1, -9223372036854775807) | list }}", {}),
    # signed overflow in the range loop
    ("range_huge_step_count", "{{ range(0, 9223372036854775807, 1000000000000000) | list | length }}", {}),
    # same error after building 100,000 items; now computed first
    ("range_too_big", "{{ range(1000000000000) | length }}", {}),
    # stack overflow printing the cycle (and a leak)
    ("namespace_self_reference", "{% set ns = namespace() %}{% set ns.self = ns %}{{ ns }}", {}),
    # stack overflow printing the cycle (and a leak)
    ("namespace_in_own_list", "{% set ns = namespace(a=1) %}{% set ns.l = [ns, 2] %}{{ ns }}", {}),
    # same
    ("namespace_chain_print", "{% set ns = namespace(cur=none) %}{% for i in range(3) %}"
     "{% set ns.cur = namespace(next=ns.cur) %}{% endfor %}{{ ns.cur }}", {}),
    # std::out_of_range escaped (the 1e999 literal)
    ("float_to_int_nan_inf", "{{ (1e999 * 0) | int }} {{ 'nan' | int(5) }} {{ '1e999' | int(7) }} "
     "{{ 1e999 }} {{ -1e999 }} {{ 1e-999 }}", {}),
    # hang: 10**13 multiplications
    ("pow_huge_exponents", "{{ 2 ** 62 }} {{ 1 ** 10000000000000 }} {{ (-1) ** 10000000000001 }} "
     "{{ 0 ** 10000000000000 }} {{ 2 ** -2 }} {{ 2.0 ** 3 }}", {}),
    # printed inf
    ("pow_float_overflow", "{{ 2 ** 1e13 }}", {}),
    # printed inf
    ("pow_zero_negative", "{{ 0 ** -1 }}", {}),
    # SIGFPE
    ("divisibleby_zero", "{{ 4 is divisibleby 0 }}", {}),
    # SIGFPE
    ("divisibleby_minus_one", "{{ (-9223372036854775807-1) is divisibleby(-1) }}", {}),
    # same
    ("nul_bytes_in_data", "a\x00b{{ 'c\x00d' }}{{ s }}", {"s": "e\x00f"}),
    # same error
    ("nul_byte_in_expression", "{{ \x00 }}", {}),
    # std::invalid_argument escaped
    ("bad_hex_escape", "{{ '\\xZZ' }}", {}),
    # printed four invalid bytes
    ("escape_outside_unicode", "{{ '\\U00110000' }}", {}),
    # same
    ("repeat_negative_and_bool", "[{{ 'x' * -5 }}][{{ 'ab' * true }}][{{ [1] * 0 }}][{{ -3 * [1] }}]", {}),
    # same error
    ("repeat_by_float", "{{ 'x' * 1e10 }}", {}),
    # std::length_error escaped
    ("indent_negative_width", "{{ 'a\nb' | indent(-3) }}|{{ {'a': [1]} | tojson(indent=-1) }}", {}),
    # same error
    ("cycle_without_items", "{% for i in [1, 2] %}{{ loop.cycle() }}{% endfor %}", {}),
    # same error
    ("unterminated_if", "{% if true %}x", {}),
    # same error
    ("unterminated_print", "{{ x", {}),
    # same error
    ("unterminated_string", "{{ 'x }}", {}),
    # same error
    ("unterminated_comment", "{# x", {}),
    # same error
    ("unterminated_raw", "{% raw %}x", {}),
    # same error (refused)
    ("recursive_loop", "{% for x in [[1]] recursive %}{{ loop(x) }}{% endfor %}", {}),
    # same error (refused)
    ("include_self", "{% include 'self' %}", {}),
    # Deep but within what Python renders: the limits must not refuse these (same before).
    # rendered, but leaked the render scope (macro closure cycle)
    ("macro_recursion_100", "{% macro m(n) %}{% if n > 0 %}{{ m(n-1) }}{% else %}done{% endif %}{% endmacro %}"
     "{{ m(100) }}", {}),
    ("parentheses_50", "{{ " + "(" * 50 + "1" + ")" * 50 + " }}", {}),
    ("if_nesting_60", "{% if true %}" * 60 + "x" + "{% endif %}" * 60, {}),
    ("plus_chain_300", "{{ " + " + ".join(["1"] * 300) + " }}", {}),
    ("filter_chain_300", "{{ ' a ' " + "| trim " * 300 + "}}", {}),
    # same
    ("tojson_depth_400", "{{ x | tojson }}|{{ x | length }}|{{ x == x }}", {"x": deep_list(400)}),
    # same
    ("print_depth_400", "{{ x }}", {"x": deep_list(400)}),
    # 500 levels: every walk over a value (tojson, str, ==, in, sort, unique) at that depth.
    # same
    ("value_walks_depth_500", "{{ x | tojson | length }} {{ x | string | length }} {{ x == y }} "
     "{{ x in [y] }} {{ [x, y] | sort | length }} "
     "{{ (x ~ '') | length }}", {"x": deep_list(500), "y": deep_list(500)}),
    # same: a long namespace chain must still be freed (now iteratively, by the render).
    ("namespace_chain_20000", "{% set ns = namespace(cur=none) %}{% for i in range(20000) %}"
     "{% set ns.cur = namespace(next=ns.cur) %}{% endfor %}{{ ns.cur.next.next is defined }}", {}),
    # 6 GB resident (each of the 100 frames copied the 30 MB string) and a leak.
    ("macro_args_share_large_string", "{% macro m(s, n) %}{% if n > 0 %}{{ m(s, n - 1) }}"
     "{% else %}{{ s | length }}{% endif %}{% endmacro %}{{ m('x' * 30000000, 100) }}", {}),
]


def render_hostile(env):
    out = []
    for name, source, ctx in HOSTILE:
        try:
            entry = render_cases(env, source, [(name, ctx)])[0]
        except jinja2.exceptions.TemplateSyntaxError as e:
            entry = {"name": name, "context": ctx, "error_kind": "syntax", "error": str(e)}
        out.append({"template": source, **entry})
    return out


# OpenAI-shaped requests with tool-use histories, normalized as vLLM's parse_chat_messages
# hands them to a string-content template: content null -> "" (text parts joined with "\n"),
# only role / content / tool_calls / tool_call_id / name kept, and _postprocess_messages'
# json.loads of each tool call's arguments string; tools as ChatCompletionToolsParam dumps
# them (description / parameters null when absent). The C++ side (src/api/server/
# protocol_body.cpp) must produce the same context from the same request
# (tests/api/tool_history_test.cpp), and the template must render it identically.
def vllm_normalize(request):
    msgs = []
    for m in request["messages"]:
        c = m.get("content")
        if c is None:
            text = ""
        elif isinstance(c, str):
            text = c
        else:
            text = "\n".join(p["text"] for p in c if p.get("type") == "text")
        out = {"role": m["role"], "content": text}
        if m["role"] == "assistant" and m.get("tool_calls"):
            calls = json.loads(json.dumps(m["tool_calls"]))
            for call in calls:
                a = call["function"].get("arguments")
                if isinstance(a, str):
                    try:
                        call["function"]["arguments"] = json.loads(a)
                    except json.JSONDecodeError:
                        call["function"]["arguments"] = {}
            out["tool_calls"] = calls
        elif m["role"] == "tool" and "tool_call_id" in m:
            out["tool_call_id"] = m["tool_call_id"]
        if isinstance(m.get("name"), str):
            out["name"] = m["name"]
        msgs.append(out)
    tools = None
    if request.get("tools"):
        tools = [{"type": "function", "function": {
            "name": t["function"]["name"], "description": t["function"].get("description"),
            "parameters": t["function"].get("parameters")}} for t in request["tools"]]
    return msgs, tools


def request_cases():
    tools = [{"type": "function", "function": {
        "name": "get_weather", "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}},
             {"type": "function", "function": {"name": "now"}}]
    q = {"role": "user", "content": "Weather in Paris and the time?"}
    call = {"id": "chatcmpl-tool-1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"n\": 1.50}"}}
    call2 = {"id": "chatcmpl-tool-2", "type": "function", "function": {"name": "now", "arguments": "{}"}}
    return [
        ("request_tool_history_null_content", {"tools": tools, "messages": [
            q, {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "chatcmpl-tool-1", "content": "sunny, 21 C"}]}),
        ("request_two_calls_two_results", {"tools": tools, "messages": [
            {"role": "system", "content": "Be brief."}, q,
            {"role": "assistant", "content": "Let me check.", "tool_calls": [call, call2]},
            {"role": "tool", "tool_call_id": "chatcmpl-tool-1", "content": "sunny"},
            {"role": "tool", "tool_call_id": "chatcmpl-tool-2", "content": "12:00"},
            {"role": "assistant", "content": "Sunny, noon."}, {"role": "user", "content": "Thanks"}]}),
        ("request_content_parts_and_bad_args", {"tools": tools, "messages": [
            {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "x", "type": "function", "function": {"name": "now", "arguments": "not json"}}]},
            {"role": "tool", "tool_call_id": "x", "content": [{"type": "text", "text": "r"}]}]}),
    ]


def minimax_agent_cases():
    """Agent loops as MiniMax-M2's template sees them: interleaved thinking (reasoning kept only
    after the last user turn), typed dict arguments, tool results in a row and as parts, the
    system message's current_date / current_location, a tool result without a call."""
    tools = base_messages()[10][2]["tools"]
    call = lambda name, args: {"id": "c-" + name, "type": "function",
                               "function": {"name": name, "arguments": args}}
    u = lambda c: {"role": "user", "content": c}
    tool = lambda c: {"role": "tool", "tool_call_id": "c", "content": c}
    args = {"city": "Paris", "days": 3, "metric": True, "opts": {"a": [1, 2.5], "b": None},
            "note": "multi\nline \"quoted\" é"}
    loop = [
        {"role": "system", "content": "You are an agent.", "current_date": "2026-12-05",
         "current_location": "Lisbon"},
        u("Weather in Paris and Rome?"),
        {"role": "assistant", "reasoning_content": "Two cities: two calls.", "content": "Checking.",
         "tool_calls": [call("get_weather", args), call("get_weather", {"city": "Rome"})]},
        tool('{"temp": 21}'),
        tool([{"type": "text", "text": "18C"}, {"output": "cloudy"}]),
        {"role": "assistant", "content": "<think>\nBoth known.\n</think>\n\nParis 21C, Rome 18C."},
    ]
    return [
        ("agent_loop_interleaved_thinking", loop, {"tools": tools}),
        ("agent_loop_next_turn", loop + [u("And Oslo?")], {"tools": tools}),
        ("agent_loop_no_gen", loop, {"tools": tools, "add_generation_prompt": False}),
        ("think_split_in_history", [
            u("Hi"),
            {"role": "assistant", "content": "<think>\n\nplan\n\n</think>\n\nHello.\n",
             "tool_calls": [call("search", {"q": "x"})]},
            tool("none")], {"tools": tools}),
        ("tool_result_without_call", [u("Hi"), tool("orphan")], {"tools": tools}),
        ("content_parts_everywhere", [
            {"role": "system", "content": [{"type": "text", "text": "Sys "}, "part"]},
            u([{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "x"}}]),
            {"role": "assistant", "content": [{"type": "text", "text": "seen"}]}],
            {"add_generation_prompt": False}),
    ]


def build_context(messages, kw, bos, eos):
    ctx = {"messages": messages}
    if not kw.get("_drop_tools"):
        ctx["tools"] = kw.get("tools")
    ctx["add_generation_prompt"] = kw.get("add_generation_prompt", True)
    ctx["bos_token"] = bos
    ctx["eos_token"] = eos
    for k, v in kw.items():
        if k not in ("tools", "add_generation_prompt", "_drop_tools"):
            ctx[k] = v
    return ctx


def render_cases(env, source, cases):
    tpl = env.from_string(source)
    out = []
    for name, ctx in cases:
        entry = {"name": name, "context": ctx}
        try:
            entry["expected"] = tpl.render(**ctx)
        except jinja2.exceptions.TemplateError as e:
            # raise_exception() raises the base class; anything else is a jinja2 runtime error.
            entry["error_kind"] = "raise_exception" if type(e) is jinja2.exceptions.TemplateError else "runtime"
            entry["error"] = str(e)
        except Exception as e:  # TypeError etc. from Python operators
            entry["error_kind"] = "runtime"
            entry["error"] = f"{type(e).__name__}: {e}"
        out.append(entry)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default=os.path.expanduser("~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--qwen3", default="/work/shared/fixtures/qwen3-tokenizer/tokenizer_config.json")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/golden/chat_template"))
    ap.add_argument("--only-hostile", action="store_true",
                    help="write hostile.json only (needs neither the GGUF nor the Qwen3 config)")
    args = ap.parse_args()
    env = make_env()
    os.makedirs(args.out, exist_ok=True)
    hostile = render_hostile(env)
    # One case per line: the deep contexts would indent quadratically.
    with open(os.path.join(args.out, "hostile.json"), "w", encoding="utf-8") as f:
        f.write('{"cases": [\n' + ",\n".join(json.dumps(c, ensure_ascii=False) for c in hostile) + "\n]}\n")
    print(f"hostile: {len(hostile)} cases ({sum(1 for c in hostile if 'error' in c)} errors)")
    if args.only_hostile:
        return
    templates = {
        "qwen3": (json.load(open(args.qwen3))["chat_template"], "", "<|im_end|>"),
        "smollm2": (smollm2_template(args.gguf), "<|im_start|>", "<|im_end|>"),
        "chatml": (chatml_from_cpp(), "", "<|im_end|>"),
        "llama3": (LLAMA3, "<|begin_of_text|>", "<|eot_id|>"),
        "mistral": (MISTRAL, "<s>", "</s>"),
        "gemma3": (GEMMA3, "<bos>", "<eos>"),
        "qwen25": (QWEN25, "", "<|im_end|>"),
    }
    msg_cases = base_messages()
    os.makedirs(args.out, exist_ok=True)
    for name, (source, bos, eos) in templates.items():
        cases = [(cname, build_context(m, kw, bos, eos)) for cname, m, kw in msg_cases]
        if name == "llama3":
            cases.append(("tools_in_system", build_context(
                [{"role": "user", "content": "hi"}], {"tools": msg_cases[10][2]["tools"],
                                                      "tools_in_user_message": False}, bos, eos)))
            cases.append(("tools_no_user_message", build_context([], {"tools": msg_cases[10][2]["tools"]}, bos, eos)))
        requests = []
        if name in ("qwen3", "qwen25"):
            for cname, req in request_cases():
                msgs, tools = vllm_normalize(req)
                cases.append((cname, build_context(msgs, {"tools": tools}, bos, eos)))
                requests.append(req)
        rendered = render_cases(env, source, cases)
        # The request each normalized case came from (the last len(requests) cases).
        for entry, req in zip(rendered[len(rendered) - len(requests):], requests):
            entry["request"] = req
        with open(os.path.join(args.out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump({"template": source, "cases": rendered}, f, ensure_ascii=False, indent=1)
        n_err = sum(1 for c in rendered if "error" in c)
        print(f"{name}: {len(rendered)} cases ({n_err} errors)")
    # Real templates kept as files (tests/golden/chat_template/templates/), rendered with
    # strftime_now pinned to a marker the C++ test replaces with its own date:
    # mistral_small_31.jinja is Mistral Small 3.1's (llama.cpp's models/templates copy).
    # command_r7b.jinja is Command R7B's tool-use template (the same source: CohereForAI-c4ai-
    # command-r7b-12-2024-tool_use.jinja), whose macros, namespaces and list slices Cohere2 users hit.
    # gpt_oss.jinja is gpt-oss's harmony template (llama.cpp's openai-gpt-oss-120b.jinja copy):
    # channels, developer instructions, tools rendered as TypeScript namespaces, today's date.
    # glm46.jinja is GLM-4.6's (llama.cpp's GLM-4.6.jinja; GLM-4.5 uses the same family): tools
    # as tojson(ensure_ascii=False) lines, <tool_call>/<arg_key>/<arg_value> histories,
    # reasoning_content split from '</think>', '/nothink' and enable_thinking.
    # minimax_m2.jinja is MiniMax-M2's (llama.cpp's MiniMax-M2.jinja): ]~!b[ / ]~b]role turns,
    # tools as tojson(ensure_ascii=False) lines, <minimax:tool_call> / <invoke> / <parameter>
    # histories, reasoning_content (or a split of '</think>') only after the last user turn.
    pinned = make_env()
    pinned.globals["strftime_now"] = lambda fmt: "@@STRFTIME[" + fmt + "]@@"
    for name, bos, eos in [("mistral_small_31", "<s>", "</s>"),
                           ("command_r7b", "<BOS_TOKEN>", "<|END_OF_TURN_TOKEN|>"),
                           ("gpt_oss", "<|startoftext|>", "<|return|>"),
                           ("glm46", "", "<|endoftext|>"),
                           ("minimax_m2", "", "[e~[")]:
        source = open(os.path.join(args.out, "templates", name + ".jinja"), encoding="utf-8").read()
        cases = [(cname, build_context(m, kw, bos, eos)) for cname, m, kw in msg_cases]
        if name == "minimax_m2":
            cases += [(cname, build_context(m, kw, bos, eos)) for cname, m, kw in minimax_agent_cases()]
        rendered = render_cases(pinned, source, cases)
        with open(os.path.join(args.out, name + ".json"), "w", encoding="utf-8") as f:
            json.dump({"template": source, "cases": rendered}, f, ensure_ascii=False, indent=1)
        print(f"{name}: {len(rendered)} cases ({sum(1 for c in rendered if 'error' in c)} errors)")
    # The feature sweep runs against a few message lists only; its output is mostly the
    # template's own expressions.
    feat_cases = [(cname, build_context(m, kw, "<s>", "</s>")) for cname, m, kw in msg_cases
                  if cname in ("multi_turn_system", "unicode", "tool_then_user", "single_user",
                               "special_chars", "empty_assistant")]
    rendered = render_cases(env, FEATURES, feat_cases)
    with open(os.path.join(args.out, "features.json"), "w", encoding="utf-8") as f:
        json.dump({"template": FEATURES, "cases": rendered}, f, ensure_ascii=False, indent=1)
    print(f"features: {len(rendered)} cases ({sum(1 for c in rendered if 'error' in c)} errors)")
    snippets = []
    for name, source, ctx in SNIPPETS:
        entry = render_cases(env, source, [(name, ctx)])[0]
        snippets.append({"template": source, **entry})
    with open(os.path.join(args.out, "snippets.json"), "w", encoding="utf-8") as f:
        json.dump({"cases": snippets}, f, ensure_ascii=False, indent=1)
    print(f"snippets: {len(snippets)} cases ({sum(1 for c in snippets if 'error' in c)} errors)")


if __name__ == "__main__":
    main()
