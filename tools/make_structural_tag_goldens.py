#!/usr/bin/env python3
"""Goldens for structural tags (tests/golden/structured_output/structural_tags.json):

  * "grammars": structural tags (xgrammar's format, as vLLM takes them in response_format and
    structured_outputs) with texts, and what xgrammar itself answers for each text: accepted as
    a prefix (require_termination=False) and accepted whole. The C++ structural-tag front end
    must answer the same (tests/engine/structural_tag_test.cpp).
  * "hermes": chat requests with tools (tool_choice, parallel_tool_calls, strict tools,
    response_format) and the structural tag vLLM 0.33's parser layer puts on them under
    `--tool-call-parser hermes` (Parser._apply_structural_tag, run from vLLM's wheel with the
    hermes parser's structural_tag_model), or null where it puts none. The server must build
    the same tag (tests/api/strict_tools_test.cpp).
  * "builtin": the same requests under the other parsers vLLM constrains (llama3_json,
    deepseek_v3, deepseek_v31, qwen3_coder, minimax_m2, glm45, kimi_k2, openai), each tag with
    texts in that model's call format and xgrammar's answers for them.
  * "harmony_outputs": gpt-oss chat requests with a structured output (response_format,
    structured_outputs) and the structural tag vLLM's HarmonyParser makes of each
    (vllm/parser/harmony.py _adjust_output_format), with harmony texts and xgrammar's answers.

    python3 -m pip install xgrammar==0.2.9 apache-tvm-ffi transformers
    python3 tools/make_structural_tag_goldens.py --vllm-src /tmp/vllm033/src

(vLLM's wheel extracted as for tools/make_tool_choice_none_goldens.py; importing its parser
layer also needs cbor2 psutil pyzmq aiohttp openai_harmony fastapi pillow pybase64 cachetools
prometheus_client uvloop py-cpuinfo partial_json_parser.)
"""
import argparse
import json
import os
import sys
import types

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "golden", "structured_output", "structural_tags.json")


def tag(begin, content, end):
    return {"type": "tag", "begin": begin, "content": content, "end": end}


def schema(s):
    return {"type": "json_schema", "json_schema": s}


INT_A = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"],
         "additionalProperties": False}
CALL_F = tag("<tool_call>f:", schema(INT_A), "</tool_call>")
CALL_G = tag("<tool_call>g:", {"type": "any_text"}, "</tool_call>")
F1 = '<tool_call>f:{"a": 1}</tool_call>'
G1 = "<tool_call>g:hi there</tool_call>"

TRIGGER_TEXTS = ["", "hi", F1, G1, "hi " + F1, F1 + " bye", F1 + G1, "a" + F1 + "b" + G1 + "c",
                 "<tool_call>", "hi <tool_call>x", '<tool_call>f:{"a": "x"}</tool_call>',
                 "<tool", "<tool<tool_call>f:" + '{"a": 2}</tool_call>', "<<tool_call>g:</tool_call>",
                 "<tool_cal", "text with < and > and <tool_ca ll>", F1 + F1,
                 "<tool_call>g:a</tool_call", "<tool_call>g:a</tool_cal</tool_call>"]


def grammar_cases():
    cases = []
    for alo in (False, True):
        for saf in (False, True):
            cases.append((f"triggered_alo{int(alo)}_saf{int(saf)}",
                          {"type": "triggered_tags", "triggers": ["<tool_call>"],
                           "tags": [CALL_F, CALL_G], "at_least_one": alo, "stop_after_first": saf},
                          TRIGGER_TEXTS))
    cases.append(("triggered_excludes",
                  {"type": "triggered_tags", "triggers": ["<tool_call>"], "tags": [CALL_F],
                   "excludes": ["<|im_end|>", "STOP"]},
                  ["hi", "hi STOP", "ST OP", "STO", F1 + "STOP", "x<|im_end|>", F1 + "<|im_end"]))
    cases.append(("triggered_two_triggers",
                  {"type": "triggered_tags", "triggers": ["<a>", "<bb>"],
                   "tags": [tag("<a>", {"type": "const_string", "value": "1"}, "</a>"),
                            tag("<bb>", {"type": "regex", "pattern": "[0-9]+"}, "</bb>")]},
                  ["x<a>1</a>y<bb>42</bb>", "<a>2</a>", "<bb></bb>", "<b><a", "<<bb>7</bb>",
                   "<bbb>", "a<b"]))
    for alo in (False, True):
        for saf in (False, True):
            cases.append((f"separator_alo{int(alo)}_saf{int(saf)}",
                          {"type": "tags_with_separator", "tags": [CALL_F, CALL_G],
                           "separator": ",", "at_least_one": alo, "stop_after_first": saf},
                          ["", F1, G1, F1 + "," + G1, F1 + G1, F1 + ",", "x" + F1, F1 + "," + F1 + "," + G1]))
    cases.append(("any_text_in_tag",
                  tag("<think>", {"type": "any_text"}, "</think>"),
                  ["<think></think>", "<think>a</think>", "<think>a</think>b", "<think>a</thin",
                   "<think>a </ think></think>", "<think>日本語😀</think>", "<think>"]))
    cases.append(("any_text_excludes_multibyte",
                  {"type": "any_text", "excludes": ["日本", "ab"]},
                  ["", "日", "本日", "日本", "a b", "xab", "日x本", "aab", "😀"]))
    cases.append(("sequence_text_then_json",
                  {"type": "sequence", "elements": [
                      tag("", {"type": "any_text"}, "</think>"),
                      {"type": "const_string", "value": "\n"},
                      schema({"type": "array", "items": {"type": "integer"}})]},
                  ["</think>\n[1, 2]", "reasoning</think>\n[]", "a</think>\n[1,", "</think>[1]",
                   "x</think>y</think>\n[3]"]))
    cases.append(("or_optional_plus_star_repeat",
                  {"type": "sequence", "elements": [
                      {"type": "or", "elements": [{"type": "const_string", "value": "yes"},
                                                  {"type": "const_string", "value": "no"}]},
                      {"type": "optional", "content": {"type": "const_string", "value": "!"}},
                      {"type": "plus", "content": {"type": "const_string", "value": "."}},
                      {"type": "star", "content": {"type": "regex", "pattern": "[a-c]"}},
                      {"type": "repeat", "min": 1, "max": 2,
                       "content": {"type": "const_string", "value": "#"}}]},
                  ["yes.#", "no!..abc##", "yes!#", "maybe.#", "yes.###", "no..cab#", "yes."]))
    cases.append(("grammar_format",
                  {"type": "tag", "begin": "<g>",
                   "content": {"type": "grammar", "grammar": 'root ::= "x" root | "y"'},
                   "end": "</g>"},
                  ["<g>y</g>", "<g>xxy</g>", "<g>x</g>", "<g></g>"]))
    cases.append(("end_list",
                  {"type": "tag", "begin": "[", "content": {"type": "any_text"}, "end": ["]", ")"]},
                  ["[a]", "[a)", "[a", "[a]]", "[]"]))
    xml = {"type": "object", "properties": {"city": {"type": "string"}, "n": {"type": "integer"},
                                            "opt": {"type": "object",
                                                    "properties": {"a": {"type": "boolean"}}}},
           "required": ["city", "n"]}
    cases.append(("qwen_xml_object",
                  {"type": "json_schema", "style": "qwen_xml", "json_schema": xml},
                  ["<parameter=city>Paris</parameter><parameter=n>3</parameter>",
                   "<parameter=city>\nParis\n</parameter>\n<parameter=n>\n3\n</parameter>\n",
                   '<parameter=city>"P"</parameter><parameter=n>3</parameter>',
                   "<parameter=n>3</parameter><parameter=city>P</parameter>",
                   '<parameter=city>P</parameter><parameter=n>3</parameter><parameter=opt>{"a": true}'
                   "</parameter>",
                   "<parameter=city>P</parameter><parameter=n>x</parameter>",
                   "<parameter=city>P</parameter>",
                   "<parameter=city>a</paramete</parameter><parameter=n>-1</parameter>",
                   "<parameter=city>P</parameter><parameter=n>3</parameter><parameter=z>1"
                   "</parameter>"]))
    kinds = {"type": "object", "properties": {
        "u": {"type": "string", "enum": ["c", "f"]}, "m": {"type": "string", "maxLength": 3},
        "p": {"type": "string", "pattern": "[a-z]+"}, "x": {"type": ["string", "null"]},
        "y": {"anyOf": [{"type": "string"}, {"type": "integer"}]}}}
    cases.append(("qwen_xml_value_kinds",
                  {"type": "json_schema", "style": "qwen_xml", "json_schema": kinds},
                  ["", "<parameter=u>c</parameter>", "<parameter=u> f\n</parameter>",
                   "<parameter=u>x</parameter>", "<parameter=m>abc</parameter>",
                   "<parameter=m>abcd</parameter>", "<parameter=p>abc</parameter>",
                   "<parameter=p>ab1</parameter>", "<parameter=x>null</parameter>",
                   "<parameter=x>anything</parameter>", "<parameter=y>12</parameter>",
                   "<parameter=y>twelve</parameter>",
                   "<parameter=u>c</parameter><parameter=y>1</parameter>",
                   "<parameter=y>1</parameter><parameter=u>c</parameter>"]))
    cases.append(("qwen_xml_enums",
                  {"type": "json_schema", "style": "qwen_xml", "json_schema": {
                      "type": "object", "properties": {
                          "u": {"enum": ["c", 1, None, True]}, "k": {"const": "x"},
                          "i": {"type": "integer", "enum": [1, 2]}, "b": {"type": "boolean"}}}},
                  ["<parameter=u>c</parameter>", "<parameter=u>1</parameter>",
                   "<parameter=u>null</parameter>", '<parameter=u>"c"</parameter>',
                   "<parameter=k>x</parameter>", "<parameter=i>2</parameter>",
                   "<parameter=i>3</parameter>", "<parameter=b> true </parameter>"]))
    for style, el in (("glm_xml", lambda k, v: f"<arg_key>{k}</arg_key><arg_value>{v}</arg_value>"),
                      ("minimax_xml", lambda k, v: f'<parameter name="{k}">{v}</parameter>')):
        cases.append((style + "_object",
                      {"type": "json_schema", "style": style, "json_schema": xml},
                      [el("city", "Paris") + el("n", "3"),
                       el("city", "\nParis\n") + "\n" + el("n", " 3 ") + "\n",
                       el("n", "3") + el("city", "P"),
                       el("city", "P") + el("n", "3") + el("opt", '{"a": true}'),
                       el("city", "P") + el("n", "x"), el("city", "P"),
                       el("city", "P") + el("n", "3") + el("z", "1"),
                       "<arg_key>city</arg_key>\n<arg_value>P</arg_value>" + el("n", "1")]))
        cases.append((style + "_any", {"type": "json_schema", "style": style, "json_schema": True},
                      ["", el("a", "1"), el("b", "text") + el("c", "[1]"), el("1x", "1")]))
    for name, s in (("qwen_xml_any", True), ("qwen_xml_any_object", {"type": "object"}),
                    ("qwen_xml_additional", {"type": "object", "properties": {"a": {"type": "integer"}},
                                             "additionalProperties": True})):
        cases.append((name, {"type": "json_schema", "style": "qwen_xml", "json_schema": s},
                      ["", "<parameter=a>1</parameter>", "<parameter=b>text</parameter>",
                       '<parameter=a>1</parameter><parameter=b>[1, 2]</parameter>',
                       "<parameter=1x>1</parameter>", "<parameter=a>x</parameter>",
                       '<parameter=b>{"k": 1}</parameter>\n']))
    return cases


def legacy_cases():
    return [("legacy_structures",
             {"type": "structural_tag",
              "structures": [{"begin": "<function=f>", "schema": INT_A, "end": "</function>"},
                             {"begin": "<function=g>", "schema": {"type": "string"},
                              "end": "</function>"}],
              "triggers": ["<function="]},
             ["", "hi", '<function=f>{"a": 3}</function>', '<function=g>"s"</function> ok',
              '<function=h>{}</function>', '<function=f>{"a": "x"}</function>',
              'a<function=g>"x"</function>b<function=f>{"a":1}</function>'])]


def xgr_answers(st, texts):
    import xgrammar as xgr
    from xgrammar.testing import _is_grammar_accept_string
    if "structures" in st:  # the legacy form, compiled as vLLM's xgrammar backend does
        items = [xgr.StructuralTagItem(begin=s["begin"], schema=json.dumps(s["schema"]),
                                       end=s["end"]) for s in st["structures"]]
        g = xgr.Grammar.from_structural_tag(items, st["triggers"])
    else:
        g = xgr.Grammar.from_structural_tag(json.dumps(st))
    return [{"text": t, "prefix": _is_grammar_accept_string(g, t, require_termination=False),
             "complete": _is_grammar_accept_string(g, t)} for t in texts]


TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"},
                                                        "unit": {"enum": ["c", "f"]}},
                       "required": ["city"]}, "strict": True}},
    {"type": "function", "function": {
        "name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                                      "b": {"type": "integer"}}}}},
    {"type": "function", "function": {"name": "ping"}},
]


def hermes_requests():
    loose = [dict(t, function={k: v for k, v in t["function"].items() if k != "strict"})
             for t in TOOLS]
    named = {"type": "function", "function": {"name": "add"}}
    rf = {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}}}
    reqs = []
    for name, tools in (("strict", TOOLS), ("loose", loose)):
        for choice in ("auto", "required", named, "none"):
            for parallel in (None, False):
                for level in (None, "function", "parameter"):
                    cname = choice if isinstance(choice, str) else "named"
                    req = {"tools": tools, "tool_choice": choice}
                    if parallel is not None:
                        req["parallel_tool_calls"] = parallel
                    reqs.append((f"{name}_{cname}_par{parallel}_{level}", req, level))
    reqs.append(("strict_auto_response_format", {"tools": TOOLS, "tool_choice": "auto",
                                                 "response_format": rf}, None))
    reqs.append(("loose_auto_response_format", {"tools": loose, "tool_choice": "auto",
                                                "response_format": rf}, None))
    reqs.append(("loose_auto_response_format_single",
                 {"tools": loose, "tool_choice": "auto", "response_format": rf,
                  "parallel_tool_calls": False}, None))
    reqs.append(("strict_required_response_format",
                 {"tools": TOOLS, "tool_choice": "required", "response_format": rf}, None))
    return reqs


# --tool-call-parser -> the vLLM class whose structural_tag_model the tags come from.
PARSERS = {"hermes": ("hermes_tool_parser", "Hermes2ProToolParser"),
           "llama3_json": ("llama_tool_parser", "Llama3JsonToolParser"),
           "deepseek_v3": ("deepseekv3_tool_parser", "DeepSeekV3ToolParser"),
           "deepseek_v31": ("deepseekv31_tool_parser", "DeepSeekV31ToolParser"),
           "qwen3_coder": ("qwen3_engine_tool_parser", "Qwen3EngineToolParser"),
           "minimax_m2": ("minimax_m2_tool_parser", "MinimaxM2ToolParser"),
           "glm45": ("glm47_moe_tool_parser", "Glm47MoeModelToolParser"),
           "kimi_k2": ("kimi_k2_tool_parser", "KimiK2ToolParser"),
           "openai": ("gptoss_tool_parser", "GptOssToolParser")}


def vllm_tool_tags(vllm_src, parser="hermes"):
    sys.path.insert(0, vllm_src)
    import importlib
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.abstract_parser import DelegatingParser
    from vllm.tool_parsers.abstract_tool_parser import ToolParser
    from vllm.tool_parsers.tool_strict_level import ToolStrictLevel
    mod, cls = PARSERS[parser]
    real = getattr(importlib.import_module("vllm.tool_parsers." + mod), cls)

    class Parser(ToolParser):  # the parser's class attributes, without a tokenizer
        structural_tag_model = real.structural_tag_model
        default_tool_strict_level = real.default_tool_strict_level

        def __init__(self):
            pass

    out = []
    for name, body, level in hermes_requests():
        req = ChatCompletionRequest.model_validate(
            dict(body, model="m", messages=[{"role": "user", "content": "hi"}]))
        fake = types.SimpleNamespace(
            _tool_parser=Parser(),
            tool_strict_level=None if level is None else ToolStrictLevel.from_name(level))
        req = DelegatingParser._apply_structural_tag(fake, req)
        so = req.structured_outputs
        st = json.loads(so.structural_tag) if so is not None and so.structural_tag else None
        out.append({"name": name, "request": body, "tool_strict_level": level,
                    "structural_tag": st})
    return out


# gpt-oss (harmony): vLLM 0.33's HarmonyParser.adjust_request turns a chat request's structured
# output into a structural tag around harmony's channels (vllm/parser/harmony.py
# _adjust_output_format): an optional analysis message, then the final message constrained.
HARMONY_OUTPUTS = [
    ("json_schema", {"response_format": {"type": "json_schema", "json_schema": {
        "name": "r", "schema": {"type": "object", "properties": {"n": {"type": "integer"}},
                                "required": ["n"]}}}}),
    ("json_object", {"response_format": {"type": "json_object"}}),
    ("regex", {"structured_outputs": {"regex": "[a-c]+"}}),
    ("choice", {"structured_outputs": {"choice": ["yes", "no"]}}),
    ("grammar", {"structured_outputs": {"grammar": 'root ::= "x" "y"*'}}),
    ("structural_tag", {"response_format": {"type": "structural_tag", "format": {
        "type": "const_string", "value": "hi"}}}),
]
HARMONY_TEXTS = [
    '<|channel|>final<|constrain|>json<|message|>{"n": 1}<|end|>',
    '<|channel|>final <|constrain|>json<|message|>{"n": 1}<|end|>',
    '<|channel|>final json<|message|>{"n": 1}',
    '<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final json<|message|>'
    '{"n": 2}<|end|>',
    '<|channel|>final<|message|>{"n": 1}<|end|>',
    '<|channel|>final<|message|>abc<|end|>',
    "<|channel|>final<|message|>yes",
    "<|channel|>final<|message|>xyy<|end|>",
    "<|channel|>final<|message|>hi<|end|>",
    '{"n": 1}',
    "<|channel|>analysis<|message|>a<|end|><|start|>assistant<|channel|>final<|message|>no",
    "<|channel|>commentary<|message|>x<|end|><|start|>assistant<|channel|>final<|message|>no",
]


def harmony_output_tags(vllm_src):
    sys.path.insert(0, vllm_src)
    from vllm.entrypoints.openai.chat_completion.protocol import ChatCompletionRequest
    from vllm.parser.harmony import _adjust_output_format
    out = []
    for name, body in HARMONY_OUTPUTS:
        req = ChatCompletionRequest.model_validate(
            dict(body, model="m", messages=[{"role": "user", "content": "hi"}]))
        req = _adjust_output_format(req)
        st = json.loads(req.structured_outputs.structural_tag)
        out.append({"name": name, "request": body, "structural_tag": st,
                    "texts": xgr_answers(st, HARMONY_TEXTS)})
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm-src", default="/tmp/vllm033/src")
    a = ap.parse_args()
    grammars = []
    for name, fmt, texts in grammar_cases():
        st = {"type": "structural_tag", "format": fmt}
        grammars.append({"name": name, "structural_tag": st, "texts": xgr_answers(st, texts)})
    for name, st, texts in legacy_cases():
        grammars.append({"name": name, "structural_tag": st, "texts": xgr_answers(st, texts)})
    hermes = vllm_tool_tags(a.vllm_src)
    # The tags vLLM builds, with texts a strict call must pass or fail.
    calls = ['<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
             '<tool_call>{"name": "get_weather", "arguments": {"city": 3}}</tool_call>',
             '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": "x"}}\n</tool_call>',
             '<tool_call>{"name": "ping", "arguments": {}}</tool_call>',
             '<tool_call>\n{"name": "nope", "arguments": {}}\n</tool_call>']
    texts = ["", "Sure.", *calls, "Sure. " + calls[0], calls[0] + calls[2], calls[3] + " done",
             '{"answer": 1}']
    for h in hermes:
        if h["structural_tag"] is not None:
            h["texts"] = xgr_answers(h["structural_tag"], texts)
    # The same requests under the other parsers whose tags are built here (xgrammar's builtin
    # llama, deepseek_r1 and deepseek_v3_1 formats), with calls written in each format.
    others = {}
    ds_calls = lambda begin, mid, end: [  # noqa: E731
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + begin + "get_weather" + mid +
        '{"city": "Paris"}' + end + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + begin + "get_weather" + mid +
        '{"city": 3}' + end + "<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>" + begin + "add" + mid + '{"a": 1}' + end +
        "<｜tool▁call▁end｜>\n<｜tool▁call▁begin｜>" + begin + "ping" + mid + "{}" + end +
        "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"]
    other_texts = {
        "llama3_json": ['{"name": "get_weather", "parameters": {"city": "Paris"}}',
                        '{"name": "get_weather", "parameters": {"city": 3}}',
                        '{"name": "add", "parameters": {"a": 1}}; {"name": "ping", "parameters": {}}',
                        'Sure. {"name": "add", "parameters": {"a": 1, "b": "x"}}'],
        "deepseek_v3": ds_calls("function<｜tool▁sep｜>", "\n```json\n", "\n```"),
        "deepseek_v31": ds_calls("", "<｜tool▁sep｜>", ""),
        "qwen3_coder": [
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
            "</function>\n</tool_call>",
            "<tool_call>\n<function=get_weather>\n<parameter=unit>\nc\n</parameter>\n"
            "</function>\n</tool_call>",
            "Sure. <tool_call>\n<function=add>\n<parameter=a>\n1\n</parameter>\n"
            "</function>\n</tool_call>",
            "<tool_call>\n<function=ping>\n</function>\n</tool_call>"],
        "minimax_m2": [
            '\n<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris'
            "</parameter>\n</invoke>\n</minimax:tool_call>",
            '<minimax:tool_call>\n<invoke name="add">\n<parameter name="a">1</parameter>\n'
            '</invoke>\n<invoke name="ping">\n</invoke>\n</minimax:tool_call>',
            'Sure. <minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">3'
            "</parameter></invoke>\n</minimax:tool_call>"],
        "glm45": [
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>",
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>3</arg_value></tool_call>",
            "Sure. <tool_call>add<arg_key>a</arg_key><arg_value>1</arg_value><arg_key>b</arg_key>"
            "<arg_value>2</arg_value></tool_call>",
            "<tool_call>add<arg_key>a</arg_key><arg_value>x</arg_value></tool_call>"
            "<tool_call>ping</tool_call>",
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Oslo</arg_value>\n"
            "</tool_call>",
            "<tool_call>nope</tool_call>",
            "Hi </arg_value>"],
        "kimi_k2": [
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            '<|tool_call_argument_begin|>{"city": "Paris"}<|tool_call_end|>'
            "<|tool_calls_section_end|>",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
            '<|tool_call_argument_begin|>{"city": 3}<|tool_call_end|><|tool_calls_section_end|>',
            "Sure. <|tool_calls_section_begin|><|tool_call_begin|>functions.add:12"
            '<|tool_call_argument_begin|>{"a": 1}<|tool_call_end|><|tool_call_begin|>'
            "functions.ping:13<|tool_call_argument_begin|>{}<|tool_call_end|>"
            "<|tool_calls_section_end|>",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.ping:x"
            "<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>",
            "Hi <|tool_call_begin|>"],
        "openai": [
            '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>'
            '{"city": "Paris"}<|end|>',
            '<|channel|>analysis<|message|>Let me look.<|end|><|start|>assistant'
            '<|channel|>commentary to=functions.get_weather json<|message|>{"city": 3}',
            ' to=functions.add<|channel|>commentary json<|message|>{"a": 1}',
            "<|channel|>final<|message|>Hello there.<|end|>",
            '<|channel|>commentary to=functions.nope json<|message|>{}<|end|>',
            "<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant"
            '<|channel|>commentary to=functions.ping json<|message|>{}'],
    }
    for parser, ptexts in other_texts.items():
        tags = vllm_tool_tags(a.vllm_src, parser)
        for t in tags:
            if t["structural_tag"] is not None:
                t["texts"] = xgr_answers(t["structural_tag"], ["", "Sure.", *ptexts,
                                                               "Hi <think>"])
        others[parser] = tags
    harmony = harmony_output_tags(a.vllm_src)
    with open(OUT, "w") as f:
        json.dump({"grammars": grammars, "hermes": hermes, "builtin": others,
                   "harmony_outputs": harmony}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"wrote {OUT}: {len(grammars)} grammars, {len(hermes)} hermes requests")


if __name__ == "__main__":
    main()
