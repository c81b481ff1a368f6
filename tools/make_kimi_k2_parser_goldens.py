#!/usr/bin/env python3
"""Goldens for Kimi K2's parsers: what vLLM 0.33 itself returns for Kimi K2 / K2-Thinking output
under `--tool-call-parser kimi_k2`, alone and with `--reasoning-parser kimi_k2` (both the
engine-based KimiK2Parser of vllm/parser/kimi_k2.py), whole (the chat serving's Parser.parse +
assemble_chat_message_fields) and streamed one token per delta (its ChatStreamProcessor over
Parser.parse_delta). Each call is recorded with its id: Kimi's ids are the model's own header
("functions.NAME:N"), which its chat template writes back into the next prompt.

vLLM runs from an extracted wheel as in tools/make_minimax_m2_parser_goldens.py (whose loader this
reuses; see its docstring for the steps):

    python3 tools/make_kimi_k2_parser_goldens.py --vllm-src /tmp/vllm033/src

The tokenizer is a stand-in: Kimi's think tags, tool-call markers and turn markers are single
tokens, every other character is a token of its own, and no token is special. The prompt ends as
Kimi K2's template ends it ("<|im_assistant|>assistant<|im_middle|>"), or with an empty think
block after it.

Writes tests/golden/tool_parsers/kimi_k2.json; tests/api/kimi_parsers_test.cpp reads it.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import make_minimax_m2_parser_goldens as mm  # noqa: E402

TOOLS = mm.TOOLS  # get_weather (typed parameters), now, write_file

# Kimi K2's ids for these tokens (tokenizer_config.json's added_tokens_decoder).
TAGS = {"<|im_end|>": 163586, "<|im_user|>": 163587, "<|im_assistant|>": 163588,
        "<|im_middle|>": 163601, "<|tool_calls_section_begin|>": 163595,
        "<|tool_calls_section_end|>": 163596, "<|tool_call_begin|>": 163597,
        "<|tool_call_argument_begin|>": 163598, "<|tool_call_end|>": 163599,
        "<think>": 163606, "</think>": 163607}
SB, SE, CB, AB, CE = ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>",
                      "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>")
USER = "<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|>"


def call(header, args):
    return CB + header + AB + args + CE


W0 = "functions.get_weather:0"
N1 = "functions.now:1"
TEXTS = [
    ("simple", "Let me check." + SB + call(W0, '{"city": "Paris"}') + SE),
    ("two_calls", SB + call(W0, '{"city":"Paris",  "days": 3}') + call(N1, "{}") + SE),
    ("documented_layout", SB + "\n" + CB + W0 + "\n" + AB + '{"city": "Tokyo"}' + CE + "\n" + SE),
    ("no_call", "Just text.\n"),
    ("empty", ""),
    ("whitespace_only", " \n"),
    ("think_then_answer", "<think>plan</think>The answer."),
    ("reasoning_then_call", "I should call.</think>" + SB + call(W0, '{"city": "A"}') + SE),
    ("reasoning_then_text_then_call", "Plan. </think>\n\nSure. " + SB + call(N1, "{}") + SE),
    ("section_ends_reasoning", "thinking " + SB + call(W0, '{"city": "B"}') + SE),
    ("reasoning_trailing_space", "plan  \n</think>answer"),
    ("text_after", SB + call(N1, "{}") + SE + " trailing"),
    ("unclosed_section", "A " + SB + call(N1, "{}")),
    ("cut_in_args", "A " + SB + CB + W0 + AB + '{"city": "Par'),
    ("cut_in_header", "A " + SB + CB + "functions.get_wea"),
    ("cut_after_section_begin", "Sure. " + SB),
    ("header_without_index", SB + call("functions.get_weather", '{"city": "C"}') + SE),
    ("header_without_prefix", SB + call("get_weather:3", '{"city": "D"}') + SE),
    ("dotted_name", SB + call("functions.my.tool:0", "{}") + SE),
    ("unknown_tool", SB + call("functions.unknown:0", '{"a": 1}') + SE),
    ("empty_args", SB + call(N1, "") + SE),
    ("spaced_args", SB + call(N1, '  {"a": 1}  \n') + SE),
    ("spaced_header", SB + call("  functions.now:2 \n", "{}") + SE),
    ("bad_json", SB + call(N1, "{not json}") + SE),
    ("section_end_in_args", SB + CB + N1 + AB + '{"a": 1}' + SE + " after"),
    ("text_inside_section", SB + "junk " + call(N1, "{}") + " more " + SE),
    ("call_without_section", "Hi " + call(N1, "{}") + " bye"),
    ("stray_think_end", "</think>Answer </think> more"),
    ("think_in_content", "</think>A <think>b</think> c"),
    ("two_sections", SB + call(W0, '{"city": "E"}') + SE + " mid " + SB + call(N1, "{}") + SE),
    ("unicode", "\u65e5\u672c" + SB + call(W0, '{"city": "S\u00e3o \U0001F680"}') + SE),
    ("multiline_args", SB + call("functions.write_file:0",
                                 '{\n  "path": "a.py",\n  "content": "x\\ny"\n}') + SE),
    ("nested_args", SB + call(W0, '{"opts": {"a": [1, {"b": null}]}, "tags": ["x"]}') + SE),
    ("stray_section_end", "Text " + SE + " more"),
    ("call_end_without_args", SB + CB + N1 + CE + SE),
    ("cut_in_header_spaced", "A " + SB + CB + " functions.get_wea "),
    ("cut_after_header", SB + CB + "functions.now:1"),
    ("call_end_in_header", SB + CB + "functions.get_weather" + CE + SE),
    ("call_end_in_header_indexed", SB + CB + "functions.now:4" + CE + SE + " x"),
    ("whitespace_then_empty_section", " \n" + SB + SE),
    ("whitespace_before_call", " \n " + SB + call(N1, "{}") + SE),
    ("header_newline_first", SB + call("x\nfunctions.now:1", "{}") + SE),
    ("header_two_colons", SB + call("functions.a:b:7", "{}") + SE),
    ("header_digits_then_text", SB + call("functions.now:12abc", "{}") + SE),
    ("tags_in_args", SB + CB + N1 + AB + '{"s": "' + CB + SB + AB + '"}' + CE + SE),
    ("think_end_in_args", SB + call(N1, '{"s": "</think>"}') + SE),
    ("section_begin_twice", SB + SB + call(N1, "{}") + SE),
    ("empty_header", SB + call("", "{}") + SE),
]

CONFIGS = [  # (reasoning parser, prompt, chat_template_kwargs, tool_choice)
    (None, USER, {}, "auto"),
    ("kimi_k2", USER, {}, "auto"),
    ("kimi_k2", USER, {"thinking": False}, "auto"),
    ("kimi_k2", USER + "<think></think>", {}, "auto"),
    (None, USER, {"thinking": False}, "auto"),
    (None, USER, {}, "none"),
    ("kimi_k2", USER, {}, "none"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm-src", default="/tmp/vllm033/src",
                    help="an extracted vllm-0.33.0 wheel (the folder holding vllm/)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/golden/tool_parsers/kimi_k2.json"))
    args = ap.parse_args()
    vllm = mm.load_vllm(args.vllm_src, mm.find_stand_ins(args.vllm_src))
    ParserManager, Request = vllm[0], vllm[1]
    tok = mm.Tokenizer(TAGS)
    cases = []
    for reasoning, ptext, kwargs, choice in CONFIGS:
        cls = ParserManager.get_parser(tool_parser_name="kimi_k2", reasoning_parser_name=reasoning,
                                       enable_auto_tools=True, model_name="m", tokenizer=tok)
        prompt = tok.encode(ptext)
        for name, text in TEXTS:
            request = Request(model="m", messages=[{"role": "user", "content": "hi"}],
                              tools=TOOLS, tool_choice=choice,
                              chat_template_kwargs=kwargs or None)
            try:
                whole, stream = mm.run_case(vllm, cls, tok, request, text, prompt, True, kwargs,
                                            reasoning_tokens=reasoning is not None, with_ids=True)
            except Exception as e:  # noqa: BLE001 - vLLM's parser raised: record it
                whole, stream = {"raises": type(e).__name__}, {"raises": type(e).__name__}
            cases.append({"name": name, "reasoning_parser": reasoning, "prompt": ptext,
                          "chat_template_kwargs": kwargs, "tool_choice": choice,
                          "tool_parser": "kimi_k2",
                          "text": text, "whole": whole, "stream": stream})
    mm.save_cases(args.out, "kimi_k2", TAGS, TOOLS, cases)


if __name__ == "__main__":
    main()
