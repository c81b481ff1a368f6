#!/usr/bin/env python3
"""Goldens for Qwen3-Coder's tool-call parser: what vLLM 0.33 itself returns for Qwen3-Coder /
Qwen3.5 output under `--tool-call-parser qwen3_coder` (the same parser as `qwen3_xml`: the
engine-based Qwen3Parser of vllm/parser/qwen3.py), and with `--parser hermes` for Qwen2.5 / Qwen3
output under `--tool-call-parser hermes`, alone and with `--reasoning-parser qwen3`,
whole (the chat serving's Parser.parse + assemble_chat_message_fields) and streamed one token per
delta (its ChatStreamProcessor over Parser.parse_delta).

vLLM runs from an extracted wheel as in tools/make_minimax_m2_parser_goldens.py (whose loader this
reuses; see its docstring for the steps):

    python3 tools/make_qwen3_coder_parser_goldens.py --vllm-src /tmp/vllm033/src

The tokenizer is a stand-in: Qwen3's <think>, </think>, <tool_call>, </tool_call>, <|im_start|>
and <|im_end|> are single tokens, every other character is a token of its own, and no token is
special. The prompt ends as Qwen3's template ends it for a turn that thinks
("<|im_start|>assistant\\n<think>\\n") or not ("<|im_start|>assistant\\n").

Writes tests/golden/tool_parsers/qwen3_coder.json (or hermes.json);
tests/api/think_parsers_test.cpp reads them.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import make_minimax_m2_parser_goldens as mm  # noqa: E402
import make_reasoning_parser_goldens as rp  # noqa: E402

TOOLS = mm.TOOLS  # MiniMax-M2's: get_weather (typed parameters), now, write_file

B, E = "<tool_call>", "</tool_call>"


def fn(name, *params, close=True):
    body = "".join(f"\n<parameter={k}>\n{v}\n</parameter>" for k, v in params)
    return f"<function={name}>{body}\n" + ("</function>" if close else "")


def call(name, *params):
    return B + "\n" + fn(name, *params) + "\n" + E


TEXTS = [
    ("simple", "Let me check.\n" + call("get_weather", ("city", "Seattle"), ("days", "3"))),
    ("typed_two_calls", call("get_weather", ("city", "Paris"), ("days", "3"), ("metric", "True"),
                             ("temp", "21.50"), ("opts", '{"a": [1, 2.0], "b":"\\u00e9"}'),
                             ("tags", '["x","y"]'), ("note", "null"), ("unit", "c"))
     + "\n" + call("now")),
    ("no_call", "Just text.\n"),
    ("empty", ""),
    ("whitespace_only", " \n"),
    ("unknown_name", "Hi " + call("unknown", ("a", "1")) + " bye"),
    ("dropped_then_kept", "Ok. " + call("nope") + call("now") + " y"),
    ("function_without_tool_call", "Text " + fn("get_weather", ("city", "Oslo")) + " after"),
    ("two_functions_in_one_block", B + "\n" + fn("get_weather", ("city", "A")) + "\n"
     + fn("now") + "\n" + E),
    ("compact", B + "<function=get_weather><parameter=city>Rome</parameter>"
     "<parameter=days>2</parameter></function>" + E),
    ("unclosed_parameter", B + "\n<function=get_weather>\n<parameter=city>\nRome\n"
     "<parameter=days>\n2\n</function>\n" + E),
    ("missing_function_end", B + "\n" + fn("get_weather", ("city", "A"), close=False) + E
     + "\nMore text"),
    ("cut_in_value", B + "\n<function=get_weather>\n<parameter=days>\n2\n</parameter>\n"
     "<parameter=city>\nBer"),
    ("cut_in_name", B + "\n<function=get_weath"),
    ("cut_after_block_start", "Sure.\n" + B + "\n"),
    ("cut_in_tag", "Sure.\n<tool_c"),
    ("spaced_tags", B + "\n< function = get_weather >\n<parameter = city >\nLima\n< / parameter >"
     "\n</function>\n" + E),
    ("repeated_key", call("get_weather", ("city", "A"), ("days", "2"), ("city", "B"))),
    ("escapes_unicode", "Let me see." + call("get_weather", ("city", '  S\u00e3o "Paulo" \\ '),
                                             ("note", "\u65e5\u672c \U0001F680"))),
    ("newlines_kept_inside", call("write_file", ("path", "a.py"),
                                  ("content", "\n\nif x < y:\n    print('<p>')\n\n"))),
    ("no_newlines", B + "<function=write_file><parameter=content>ab</parameter></function>" + E),
    ("schema_strings_and_extras", call("get_weather", ("city", "42"), ("extra", "7"),
                                       ("days", "007"), ("temp", "2.0"), ("metric", "yes"))),
    ("bad_json_for_object", call("get_weather", ("opts", "not json"), ("tags", "[1e400]"),
                                 ("note", "Null"))),
    ("false_starts_in_value", call("write_file", ("content", "<param> <parameter x>hi </ function>"
                                                            " </think> </tool_call")),),
    ("two_blocks", call("get_weather", ("city", "A")) + "\nthen\n" + call("get_weather",
                                                                          ("city", "B"))),
    ("empty_block", "A " + B + "\n" + E + " B"),
    ("text_after_call", call("now") + "\nDone."),
    ("leading_whitespace", "\n\nSure.\n" + call("now")),
    ("json_style_call", B + '\n{"name": "now", "arguments": {}}\n' + E),
    ("untyped_function", call("now", ("n", "5"), ("flag", "true"))),
    ("name_with_spaces", B + "\n<function= get_weather >\n<parameter=city>\nX\n</parameter>\n"
     "</function>\n" + E),
    ("empty_parameter_name", call("get_weather", ("", "x"), ("city", "C"))),
    ("reasoning_then_call", "Need the weather.\n</think>\n\n" + call("get_weather",
                                                                       ("city", "Seattle"))),
    ("reasoning_only", "Still thinking about it..."),
    ("call_ends_reasoning", "plan  \n" + call("now")),
    ("think_tags_in_content", "a<think>b</think>c" + call("now")),
    ("long_string_value", "Writing.\n" + call("write_file", ("path", "/tmp/x.txt"),
                                              ("content", "line\n" * 40 + "end"))),
]

def hcall(obj, raw=None):
    return B + "\n" + (raw if raw is not None else json.dumps(obj, ensure_ascii=False)) + "\n" + E


# Hermes (Qwen2.5 / Qwen3 / Hermes 2 Pro) calls: JSON objects between the same tags.
HERMES_TEXTS = [
    ("simple", "Let me check.\n" + hcall({"name": "get_weather",
                                         "arguments": {"city": "Seattle", "days": 3}})),
    ("two_calls", hcall({"name": "get_weather", "arguments": {"city": "Paris", "temp": 21.50,
                                                           "opts": {"a": [1, 2.0]}}})
     + "\n" + hcall({"name": "now", "arguments": {}})),
    ("no_call", "Just text.\n"),
    ("empty", ""),
    ("whitespace_only", " \n"),
    ("unknown_name", "Hi " + hcall({"name": "unknown", "arguments": {"a": 1}}) + " bye"),
    ("text_after_call", hcall({"name": "now", "arguments": {}}) + "\nDone."),
    ("leading_whitespace", "\n\nSure.\n" + hcall({"name": "now", "arguments": {}})),
    ("compact", B + '{"name":"get_weather","arguments":{"city":"Rome"}}' + E),
    ("arguments_as_string", hcall(None, '{"name": "now", "arguments": "{\\"x\\": 1}"}')),
    ("missing_arguments", hcall(None, '{"name": "now"}')),
    ("bad_json", "Hmm " + hcall(None, '{"name": "now", "arguments": {')),
    ("unclosed_call", "Sure. " + B + '\n{"name": "get_weather", "arguments": {"city": "Ber"}}'),
    ("cut_in_json", "Sure. " + B + '\n{"name": "get_weather", "arguments": {"city": "Ber'),
    ("cut_after_tag", "Sure.\n" + B + "\n"),
    ("cut_in_tag", "Sure.\n<tool_c"),
    ("escapes_unicode", hcall({"name": "get_weather", "arguments": {
        "city": '  S\u00e3o "Paulo" \\ \n', "note": "\u65e5\u672c \U0001F680"}})),
    ("ascii_escapes", hcall(None, '{"name": "get_weather", "arguments": {"city": "\\u00e9\\u65e5"}}')),
    ("numbers", hcall(None, '{"name": "get_weather", "arguments": {"a": 1.0, "b": 1e5, "c": -0,'
                            ' "d": 1E-7, "e": 12345678901234567890, "f": true, "g": null}}')),
    ("nested_tags_in_string", hcall({"name": "write_file", "arguments": {
        "content": "a </tool_call> b"}})),
    ("two_calls_one_bad", hcall({"name": "now", "arguments": {}}) + hcall(None, "{oops}")),
    ("empty_block", "A " + B + E + " B"),
    ("whitespace_in_block", B + "\n\n  " + json.dumps({"name": "now", "arguments": {}}) + "  \n" + E),
    ("list_in_block", hcall(None, '[{"name": "now", "arguments": {}}]')),
    ("think_then_call", "<think>\nplan\n</think>\n\n" + hcall({"name": "now", "arguments": {}})),
    ("reasoning_then_call", "Need the weather.\n</think>\n\n" + hcall(
        {"name": "get_weather", "arguments": {"city": "Seattle"}})),
    ("call_ends_reasoning", "plan  \n" + hcall({"name": "now", "arguments": {}})),
    ("long_string_value", "Writing.\n" + hcall({"name": "write_file", "arguments": {
        "path": "/tmp/x.txt", "content": "line\n" * 40 + "end"}})),
    ("extra_keys", hcall(None, '{"name": "now", "arguments": {}, "id": 7}')),
    ("arguments_first", hcall(None, '{"arguments": {"city": "X"}, "name": "get_weather"}')),
]

# Pythonic calls (Llama 3.2 / 4 and Gemma 3 with vLLM's pythonic templates, ToolACE): a Python
# list of calls with keyword arguments.
PYTHONIC_TEXTS = [
    ("simple", '[get_weather(city="Paris", days=3)]'),
    ("two_calls", '[get_weather(city="Paris"), now()]'),
    ("spaced", '[ get_weather( city = "Paris" ) ,\n now() ]'),
    ("newline_after", '[now()]\n'),
    ("single_quotes", "[get_weather(city='Paris')]"),
    ("types", '[get_weather(city="X", days=-3, temp=21.50, metric=True, note=None, '
              'tags=["a", \'b\'], opts={"a": [1, 2.0], \'b\': (1, 2)}, unit=false, n=null, '
              'm=+4, e=1e3, f=.5, g=5., h=0x1F, i=1_000, j=0o17, k=0b101, big=12345678901234567890)]'),
    ("escapes", r'[get_weather(city="S\u00e3o \"Paulo\" \\ \n\t\x41\101", note=r"a\nb")]'),
    ("unicode", '[get_weather(city="\u65e5\u672c \U0001F680 \u00e9")]'),
    ("triple_quoted", '[write_file(path="a.py", content="""line1\nline2 "quoted" """)]'),
    ("concatenated", '[write_file(content="a" \'b\' "c")]'),
    ("fstring_plain", "[write_file(content=f'hi {{x}}')]"),
    ("fstring_placeholder", "[write_file(content=f'hi {x}')]"),
    ("bytes", "[write_file(content=b'hi')]"),
    ("leading_text", "Sure! [now()]"),
    ("leading_space", " [now()]"),
    ("trailing_text", "[now()] done"),
    ("positional", '[get_weather("Paris")]'),
    ("mixed_positional", '[get_weather(city="Paris", 3)]'),
    ("dotted", "[a.b(x=1)]"),
    ("empty_list", "[]"),
    ("not_calls", "[1, 2]"),
    ("nested_call", "[f(x=g())]"),
    ("name_literal", "[f(x=inf)]"),
    ("set_arg", "[f(x={1, 2})]"),
    ("dict_keys", "[f(x={1: 'a', None: 2, True: 3, 1.5: 4, 'k': 5, 'k': 6})]"),
    ("empty_containers", "[f(a=[], b={}, c=(), d=(1,), e=(1))]"),
    ("trailing_comma", "[f(x=1,), g(),]"),
    ("cut", '[get_weather(city="Par'),
    ("cut_after_call", '[get_weather(city="Paris"), '),
    ("bools", "[f(a=True, b=False, c=None, d=true)]"),
    ("unicode_name", "[caf\u00e9(x=1)]"),
    ("comment_after", "[now()]  # done"),
    ("second_statement", "[now()]\n[f(x=1)]"),
    ("negative_float", "[f(x=-1.5e-3, y=-0, z=--2)]"),
    ("unary_bool", "[f(x=-True)]"),
    ("complex", "[f(x=1j)]"),
    ("line_continuation", '[f(x="a\\\nb")]'),
    ("markdown_link", "[the docs](https://example.com) say so"),
    ("json_array", '["a", "b"]'),
    ("duplicate_kwarg", "[f(x=1, x=2)]"),
    ("kwargs_splat", "[f(**{'a': 1})]"),
    ("uppercase_prefix", "[f(a=R'x\\n', b=U'y')]"),
]

# DeepSeek V3 / R1 (--tool-call-parser deepseek_v3) and V3.1 (deepseek_v31) calls, between the
# special tokens of their vocabulary.
DS_TAGS = {"<\uff5ctool\u2581calls\u2581begin\uff5c>": 128806,
           "<\uff5ctool\u2581calls\u2581end\uff5c>": 128807,
           "<\uff5ctool\u2581call\u2581begin\uff5c>": 128808,
           "<\uff5ctool\u2581call\u2581end\uff5c>": 128809,
           "<\uff5ctool\u2581sep\uff5c>": 128814}
CB, CE, OB, OE, SEP = list(DS_TAGS)


def v3(name, args, typ="function"):
    return f"{OB}{typ}{SEP}{name}\n```json\n{args}\n```{OE}"


def v31(name, args):
    return f"{OB}{name}{SEP}{args}{OE}"


DEEPSEEK_V3_TEXTS = [
    ("simple", "Let me check." + CB + v3("get_weather", '{"city": "Paris"}') + CE),
    ("two_calls", CB + v3("get_weather", '{"city":"Paris",  "days": 3}') + "\n"
     + v3("now", "{}") + CE),
    ("no_call", "Just text.\n"),
    ("empty", ""),
    ("text_after", "A " + CB + v3("now", "{}") + CE + " after"),
    ("unclosed", "A " + CB + v3("now", "{}")),
    ("cut_in_args", "A " + CB + OB + "function" + SEP + "now\n```json\n{\"a\""),
    ("no_calls_inside", "A " + CB + "oops" + CE + " B"),
    ("bad_json_kept", CB + v3("now", "{not json}") + CE),
    ("multiline_args", CB + v3("write_file", '{\n  "content": "a\\nb"\n}') + CE),
    ("other_type", CB + v3("now", "{}", typ="tool") + CE),
    ("name_with_space", CB + v3(" now ", "{}") + CE),
    ("whitespace_only", "  " + CB + v3("now", "{}") + CE + "  "),
    ("unicode", "\u65e5\u672c" + CB + v3("get_weather", '{"city": "S\u00e3o"}') + CE),
    ("missing_fence", CB + OB + "function" + SEP + "now\n{}" + OE + CE),
    ("reasoning_then_call", "plan</think>\n\n" + CB + v3("now", "{}") + CE),
]

DEEPSEEK_V31_TEXTS = [
    ("simple", "Let me check." + CB + v31("get_weather", '{"city": "Paris"}') + CE),
    ("two_calls", CB + v31("get_weather", '{"city":"Paris",  "days": 3}') + v31("now", "{}") + CE),
    ("no_call", "Just text.\n"),
    ("empty", ""),
    ("text_after", "A " + CB + v31("now", "{}") + CE + " after"),
    ("unclosed", "A " + CB + v31("now", "{}")),
    ("cut_in_args", "A " + CB + OB + "now" + SEP + '{"a"'),
    ("no_calls_inside", "A " + CB + "oops" + CE + " B"),
    ("bad_json_kept", CB + v31("now", "{not json}") + CE),
    ("multiline_args", CB + v31("write_file", '{\n  "content": "a\\nb"\n}') + CE),
    ("name_with_newline", CB + OB + "now\nx" + SEP + "{}" + OE + v31("now", "{}") + CE),
    ("name_with_space", CB + v31(" now ", "{}") + CE),
    ("whitespace_only", "  " + CB + v31("now", "{}") + CE + "  "),
    ("unicode", "\u65e5\u672c" + CB + v31("get_weather", '{"city": "S\u00e3o"}') + CE),
    ("reasoning_then_call", "plan</think>\n\n" + CB + v31("now", "{}") + CE),
]

# Olmo 3 (--tool-call-parser olmo3): pythonic calls one per line, usually inside
# <function_calls>...</function_calls>; JSON's null / true / false as literals.
FC, FE = "<function_calls>", "</function_calls>"
OLMO3_TEXTS = [
    ("simple", FC + 'get_weather(city="Paris", days=3)' + FE),
    ("two_lines", FC + '\nget_weather(city="Paris")\nnow()\n' + FE),
    ("bare_lines", 'get_weather(city="Paris")\nnow()'),
    ("bare_one", "now()"),
    ("json_literals", FC + 'get_weather(city="X", note=null, metric=true, unit=false, '
                      'tags=["a", null], opts={"k": true})' + FE),
    ("python_literals", FC + "get_weather(city='X', note=None, metric=True)" + FE),
    ("text_before", "Let me check.\n" + FC + "now()" + FE),
    ("text_after", FC + "now()" + FE + "\nDone."),
    ("text_only", "The weather is nice."),
    ("empty", ""),
    ("whitespace", "  \n "),
    ("blank_lines", FC + "\n\n  now()  \n\n\tget_weather(city='A')\n" + FE),
    ("unclosed", FC + "now()"),
    ("cut_in_call", FC + 'get_weather(city="Par'),
    ("bad_call", FC + "not a call" + FE),
    ("positional", FC + 'get_weather("Paris")' + FE),
    ("list_form", FC + "[now(), get_weather(city='B')]" + FE),
    ("comma_lines", FC + "now(),\nget_weather(city='B')" + FE),
    ("multiline_arg", FC + "write_file(path='a',\ncontent='x')" + FE),
    ("two_blocks", FC + "now()" + FE + " and " + FC + "get_weather(city='C')" + FE),
    ("unicode", FC + 'get_weather(city="S\u00e3o \u65e5\u672c")' + FE),
    ("crlf", FC + "now()\r\nget_weather(city='D')\r\n" + FE),
    ("unicode_line_sep", FC + "now()\u2028get_weather(city='E')" + FE),
    ("nbsp_strip", FC + "\u00a0now()\u00a0" + FE),
    ("angle_text", "<b>bold</b> text"),
    ("lt_math", "1 < 2"),
    ("empty_block", FC + FE),
    ("markdown_link", "[the docs](https://example.com)"),
]

# Phi-4-mini (--tool-call-parser phi4_mini_json): functools[...] holding a JSON array of calls.
PHI4_TEXTS = [
    ("simple", 'functools[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]'),
    ("two_calls", 'functools[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
                  '{"name": "now", "arguments": {}}]'),
    ("parameters_key", 'functools[{"name": "now", "parameters": {"tz": "UTC"}}]'),
    ("text_before", 'Let me check. functools[{"name": "now", "arguments": {}}]'),
    ("text_after", 'functools[{"name": "now", "arguments": {}}] done'),
    ("text_only", "The weather is nice."),
    ("empty", ""),
    ("no_name", 'functools[{"arguments": {}}]'),
    ("no_arguments", 'functools[{"name": "now"}]'),
    ("string_arguments", 'functools[{"name": "now", "arguments": "x"}]'),
    ("unicode", 'functools[{"name": "get_weather", "arguments": {"city": "S\u00e3o \u65e5"}}]'),
    ("escaped_unicode", 'functools[{"name": "get_weather", "arguments": {"city": "\\u00e9"}}]'),
    ("newlines", 'functools[\n  {"name": "now",\n   "arguments": {}}\n]'),
    ("unclosed", 'functools[{"name": "now", "arguments": {}}'),
    ("word_only", "functools"),
    ("not_object", "functools[1, 2]"),
    ("empty_array", "functools[]"),
    ("float_args", 'functools[{"name": "get_weather", "arguments": {"temp": 21.50, "n": 1e3}}]'),
    ("both_keys", 'functools[{"parameters": {"a": 1}, "name": "now", "arguments": {"b": 2}}]'),
    ("duplicate_key", 'functools[{"name": "now", "arguments": {"a": 1}, "arguments": {"b": 2}}]'),
    ("null_name", 'functools[{"name": null, "arguments": {}}]'),
    ("space_before_array", 'functools [{"name": "now", "arguments": {}}]'),
    ("word_in_text", "Use the functools module."),
    # vLLM cuts the array at its first "]" and answers an empty message when that is not JSON;
    # tests/api/marked_calls_parsers_test.cpp checks what is done here instead.
    ("nested_array", 'functools[{"name": "get_weather", "arguments": {"tags": ["a", "b"]}}]'),
    ("bracket_in_string", 'functools[{"name": "write_file", "arguments": {"content": "x]"}}]'),
    ("bad_json", 'functools[{"name": "now", "arguments": {]'),
]

# Granite 3.0 / 3.1 (--tool-call-parser granite): <|tool_call|> (a special token, 3.0) or the
# text <tool_call> (3.1), then a JSON array of {"name", "arguments"} objects; no closing marker.
GRANITE_TAGS = {"<|tool_call|>": 49153, "<|start_of_role|>": 49152, "<|end_of_role|>": 49154,
                "<|end_of_text|>": 0}
GT, GS = "<|tool_call|>", "<tool_call>"
GRANITE_TEXTS = [
    ("simple", GT + '[{"name": "get_weather", "arguments": {"city": "Paris", "days": 3}}]'),
    ("simple_31", GS + '[{"name": "get_weather", "arguments": {"city": "Paris"}}]'),
    ("two_calls", GT + '[{"name": "get_weather", "arguments": {"city": "Paris"}}, '
                  '{"name": "now", "arguments": {}}]'),
    ("space_after_marker", GT + ' [{"name": "now", "arguments": {}}]'),
    ("text_before", "Let me check. " + GT + '[{"name": "now", "arguments": {}}]'),
    ("text_after", GT + '[{"name": "now", "arguments": {}}] Done.'),
    ("text_only", "The weather is nice."),
    ("empty", ""),
    ("whitespace", "  \n"),
    ("no_array", GT + "I cannot call tools."),
    ("object_not_array", GT + '{"name": "now", "arguments": {}}'),
    ("unclosed_array", GT + '[{"name": "now", "arguments": {}}'),
    ("cut_in_element", GT + '[{"name": "get_weather", "arguments": {"city": "Par'),
    ("no_arguments", GT + '[{"name": "now"}]'),
    ("no_name", GT + '[{"arguments": {"a": 1}}]'),
    ("arguments_first", GT + '[{"arguments": {"city": "Oslo"}, "name": "get_weather"}]'),
    ("nested", GT + '[{"name": "get_weather", "arguments": {"opts": {"a": [1, {"b": "}"}]}, '
                '"tags": ["x]"]}}]'),
    ("spacing_kept", GT + '[{"name":"get_weather","arguments":{"city":"Paris",  "temp": 21.50}}]'),
    ("unicode", GT + '[{"name": "get_weather", "arguments": {"city": "S\u00e3o \u65e5"}}]'),
    ("escaped", GT + '[{"name": "write_file", "arguments": {"content": "a\\"b\\nc\\u00e9"}}]'),
    ("unknown_name", GT + '[{"name": "nope", "arguments": {}}]'),
    ("two_markers", GT + '[{"name": "now", "arguments": {}}] and ' + GT
     + '[{"name": "get_weather", "arguments": {"city": "B"}}]'),
    ("marker_text_mid", "Sure" + GS + '[{"name": "now", "arguments": {}}]'),
    ("empty_array", GT + "[]"),
    ("junk_between", GT + '[{"name": "now", "arguments": {}} x]'),
    ("string_arguments", GT + '[{"name": "now", "arguments": "x"}]'),
    ("newlines", GT + '[\n  {"name": "now",\n   "arguments": {}}\n]\n'),
    # String values typed by the tool's parameter schema (vLLM's _fix_arg_types), then the
    # arguments written again by json.dumps.
    ("coerced", GT + '[{"name": "get_weather", "arguments": {"city": "Paris", "days": "3", '
                '"metric": "true", "temp": "21.50", "note": "null", "unit": "c", '
                '"opts": "{\\"a\\": 1}", "tags": "[1, 2]", "extra": 1.50, "n": 12345678901234567890}}]'),
    ("coerce_bad", GT + '[{"name": "get_weather", "arguments": {"days": "three", "temp": "inf"}}]'),
    ("name_in_args_first", GT + '[{"arguments": {"name": "x"}, "name": "now"}]'),
    ("name_spaces", GT + '[{"name": " now ", "arguments": {}}]'),
    ("parameters_key", GT + '[{"name": "now", "parameters": {"a": 1}}]'),
    ("array_arguments", GT + '[{"name": "now", "arguments": [1, 2.50]}]'),
    ("two_arrays_text_between", "A " + GT + '[{"arguments": {}}] B ' + GT
     + '[{"name": "now", "arguments": {}}] C'),
    ("trailing_space_before_marker", "Hi \n" + GT + '[{"name": "now", "arguments": {}}]'),
    ("leading_space_text", "  Hi"),
    ("marker_at_end", "Hi " + GT),
    ("dropped_with_text_around", "Hi " + GT + '[{"arguments": {}}] bye'),
    ("bail_then_call", "X " + GT + "oops " + GT + '[{"name": "now", "arguments": {}}] Y'),
    ("dropped_then_call_same_array", "X " + GT + '[{"arguments": {}}, {"name": "now", "arguments": {}}] Y'),
]

# InternLM2 / 2.5 (--tool-call-parser internlm): <|action_start|><|plugin|> then a JSON object
# {"name", "parameters" | "arguments"} up to <|action_end|>; one call per output.
INTERNLM_TAGS = {"<|action_start|>": 92543, "<|action_end|>": 92542, "<|plugin|>": 92541,
                 "<|im_start|>": 92544, "<|im_end|>": 92545}
AS, AE = "<|action_start|><|plugin|>", "<|action_end|>"
INTERNLM_TEXTS = [
    ("simple", AS + '\n{"name": "get_weather", "parameters": {"city": "Paris", "days": 3}}' + AE),
    ("arguments_key", AS + '{"name": "now", "arguments": {"tz": "UTC"}}' + AE),
    ("both_keys", AS + '{"name": "now", "arguments": {"a": 1}, "parameters": {"b": 2}}' + AE),
    ("no_args", AS + '{"name": "now"}' + AE),
    ("text_before", "Let me check.\n" + AS + '{"name": "now", "parameters": {}}' + AE),
    ("text_after", AS + '{"name": "now", "parameters": {}}' + AE + " done"),
    ("no_end", AS + '{"name": "now", "parameters": {}}'),
    ("text_only", "The weather is nice."),
    ("empty", ""),
    ("unicode", AS + '{"name": "get_weather", "parameters": {"city": "S\u00e3o \u65e5"}}' + AE),
    ("escaped", AS + '{"name": "get_weather", "parameters": {"city": "\\u00e9", "n": 1.50}}' + AE),
    ("junk_before_brace", AS + 'call: {"name": "now", "parameters": {}}' + AE),
    ("unknown_name", AS + '{"name": "nope", "parameters": {}}' + AE),
    ("action_start_only", "<|action_start|>" + '{"name": "now", "parameters": {}}' + AE),
    ("string_params", AS + '{"name": "now", "parameters": "x"}' + AE),
    ("spacing", AS + '{"name":"now","parameters":{"a":1,  "b":[1,2]}}' + AE),
]
# Outputs vLLM's parser raises on (its chat serving then answers an error): two calls, a call
# that is not JSON, no name. tests/api/marked_calls_parsers_test.cpp checks what is done here.
INTERNLM_RAISES = [
    ("two_calls", AS + '{"name": "now", "parameters": {}}' + AE + AS
     + '{"name": "get_weather", "parameters": {"city": "B"}}' + AE),
    ("bad_json", AS + '{"name": "now", "parameters": {' + AE),
    ("no_name", AS + '{"parameters": {}}' + AE),
    ("no_brace", AS + "now()" + AE),
]

# Llama 3.x JSON calls (--tool-call-parser llama3_json): vLLM 0.33's whole response reads every
# JSON object from each "{" (ignoring the text around them), its stream only an output that
# starts with "{" or <|python_tag|>.
LLAMA3_TAGS = {"<|python_tag|>": 128010, "<|eot_id|>": 128009, "<|start_header_id|>": 128006,
               "<|end_header_id|>": 128007}
LLAMA3_TEXTS = [
    ("simple", '{"name": "get_weather", "parameters": {"city": "Paris"}}'),
    ("python_tag", '<|python_tag|>{"name": "now", "parameters": {}}'),
    ("two_calls", '{"name": "get_weather", "parameters": {"city": "B", "days": 3}}; '
     '{"name": "now", "arguments": {}}'),
    ("arguments_key", '{"name": "now", "arguments": {"tz": "UTC"}}'),
    ("text_before", 'Sure. {"name": "now", "parameters": {}}'),
    ("text_after", '{"name": "now", "parameters": {}} done.'),
    ("text_after_brace", '{"name": "now", "parameters": {}} see {x}'),
    ("newline_separated", '{"name": "now", "parameters": {}}\n{"name": "get_weather", '
     '"parameters": {"city": "C"}}'),
    ("not_a_call", '{"a": 1}'),
    ("no_brace", "Plain answer."),
    ("empty", ""),
    ("bad_json", '{"name": "now", "parameters": {oops}}'),
    ("nested", '{"name": "write_file", "parameters": {"a": {"b": [1, {"c": 2}]}}}'),
    ("name_not_string", '{"name": 3, "parameters": {}}'),
    ("cut", '{"name": "now", "parameters": {'),
    ("unicode", '{"name": "get_weather", "parameters": {"city": "S\u00e3o \u65e5"}}'),
    ("spaces_inside", '{ "name" : "now" , "parameters" : { } }'),
    ("floats", '{"name": "get_weather", "parameters": {"t": 1.50, "n": -0, "e": 1e5}}'),
    ("calls_then_text", '{"name": "now", "parameters": {}}; {"name": "now", "parameters": {}}'
     " and that is all"),
]

SEED_TAGS = {"<seed:think>": 7, "</seed:think>": 8, "<seed:tool_call>": 9,
             "</seed:tool_call>": 10, "<seed:bos>": 0, "<seed:eos>": 2}


def seed(text):
    for a, b in (("<think>", "<seed:think>"), ("</think>", "</seed:think>"),
                 ("<tool_call>", "<seed:tool_call>"), ("</tool_call>", "</seed:tool_call>"),
                 ("<|im_start|>", "<seed:bos>"), ("<|im_end|>", "<seed:eos>")):
        text = text.replace(a, b)
    return text


CONFIGS = [  # (reasoning parser, prompt)
    (None, rp.USER),
    ("qwen3", rp.USER + "<think>\n"),
    ("qwen3", rp.USER + "<think>\n\n</think>\n\n"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm-src", default="/tmp/vllm033/src",
                    help="an extracted vllm-0.33.0 wheel (the folder holding vllm/)")
    ap.add_argument("--parser", default="qwen3_coder",
                    choices=["qwen3_coder", "hermes", "pythonic", "deepseek_v3",
                             "deepseek_v31", "seed_oss", "olmo3", "phi4_mini_json", "granite", "internlm",
                             "llama3_json"])
    ap.add_argument("--out", help="default: tests/golden/tool_parsers/PARSER.json")
    args = ap.parse_args()
    out = args.out or os.path.join(ROOT, f"tests/golden/tool_parsers/{args.parser}.json")
    texts = {"qwen3_coder": TEXTS, "hermes": HERMES_TEXTS, "pythonic": PYTHONIC_TEXTS,
             "deepseek_v3": DEEPSEEK_V3_TEXTS, "deepseek_v31": DEEPSEEK_V31_TEXTS,
             "seed_oss": TEXTS, "olmo3": OLMO3_TEXTS, "phi4_mini_json": PHI4_TEXTS,
             "granite": GRANITE_TEXTS, "internlm": INTERNLM_TEXTS + INTERNLM_RAISES,
             "llama3_json": LLAMA3_TEXTS}[args.parser]
    configs = CONFIGS[:1] if args.parser in ("pythonic", "deepseek_v3", "deepseek_v31", "olmo3",
                                             "phi4_mini_json", "granite",
                                             "internlm", "llama3_json") else CONFIGS
    if args.parser in ("granite", "internlm", "llama3_json"):
        rp.TAGS.clear()
        rp.TAGS.update({"granite": GRANITE_TAGS, "internlm": INTERNLM_TAGS,
                        "llama3_json": LLAMA3_TAGS}[args.parser])
    if args.parser.startswith("deepseek"):
        rp.TAGS.update(DS_TAGS)
    if args.parser == "seed_oss":
        # Seed-OSS: Qwen3-Coder's grammar and texts with its own tags (vllm/parser/seed_oss.py).
        rp.TAGS.update(SEED_TAGS)
        texts = [(n, seed(t)) for n, t in TEXTS]
        configs = [(None if r is None else "seed_oss", seed(pr)) for r, pr in CONFIGS]
    vllm = mm.load_vllm(args.vllm_src, mm.find_stand_ins(args.vllm_src))
    ParserManager, Request = vllm[0], vllm[1]
    tok = mm.Tokenizer(rp.TAGS)
    cases = []
    for reasoning, ptext in configs:
        cls = ParserManager.get_parser(tool_parser_name=args.parser,
                                       reasoning_parser_name=reasoning,
                                       enable_auto_tools=True, model_name="m", tokenizer=tok)
        prompt = tok.encode(ptext)
        for name, text in texts:
            request = Request(model="m", messages=[{"role": "user", "content": "hi"}],
                              tools=TOOLS, tool_choice="auto")
            try:
                whole, stream = mm.run_case(vllm, cls, tok, request, text, prompt, True)
            except Exception as e:  # noqa: BLE001 - vLLM's parser raised: record it
                whole, stream = {"raises": type(e).__name__}, {"raises": type(e).__name__}
            cases.append({"name": name, "reasoning_parser": reasoning, "prompt": ptext,
                          "tool_parser": args.parser,
                          "text": text, "whole": whole, "stream": stream})
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"vllm": "0.33.0", "parser": args.parser, "tags": rp.TAGS, "tools": TOOLS,
                   "cases": cases}, fh,
                  ensure_ascii=False, indent=1)
    read = [c for c in cases if "raises" not in c["whole"] and "raises" not in c["stream"]]
    differ = sum(1 for c in read if c["whole"]["tool_calls"] != c["stream"]["tool_calls"] or
                 (c["whole"]["content"] or "") != c["stream"]["content"])
    print(f"{len(cases)} cases; vLLM's stream differs from its whole response in {differ}")


if __name__ == "__main__":
    main()
