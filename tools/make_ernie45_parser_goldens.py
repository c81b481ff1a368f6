#!/usr/bin/env python3
"""Goldens for ERNIE 4.5's parsers: what vLLM 0.33 itself returns for ERNIE-4.5 (and
ERNIE-4.5-21B-A3B-Thinking) output under `--tool-call-parser ernie45` and `--reasoning-parser
ernie45`, alone and together, whole (the chat serving's Parser.parse +
assemble_chat_message_fields) and streamed one token per delta (its ChatStreamProcessor).

vLLM runs from an extracted wheel as in tools/make_minimax_m2_parser_goldens.py (whose loader this
reuses; see its docstring for the steps):

    python3 tools/make_ernie45_parser_goldens.py --vllm-src /tmp/vllm033/src

The tokenizer is a stand-in: ERNIE's <think>, </think>, <response>, </response>, <tool_call>,
</tool_call> and its turn markers are single tokens, every other character is a token of its
own, and "\\n" is also the vocabulary's "<0x0A>" (ERNIE's SentencePiece byte token, which vLLM's
ERNIE parsers look up). No token is special.

Writes tests/golden/tool_parsers/ernie45.json; tests/api/ernie_parsers_test.cpp reads it.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import make_minimax_m2_parser_goldens as mm  # noqa: E402

TOOLS = mm.TOOLS  # get_weather (typed parameters), now, write_file

TAGS = {"<think>": 100272, "</think>": 100273, "<response>": 100274, "</response>": 100275,
        "<tool_call>": 100276, "</tool_call>": 100277, "<|im_start|>": 100278,
        "<|im_end|>": 100279}
USER = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"

B, E = "<tool_call>", "</tool_call>"


def call(name, args, nl=True):
    body = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    return B + "\n" + body + "\n" + E + "\n" if nl else B + body + E


W = call("get_weather", {"city": "Paris"})
N = call("now", {})
TEXTS = [
    ("documented_response", "abc\n</think>\n\n<response>\ndef\n</response>\n"),
    ("documented_plain", "abc\n</think>\ndef"),
    ("documented_call", "abc\n</think>\n\n\n" + W),
    ("two_calls", "plan\n</think>\n\n" + W + N),
    ("only_reasoning", "just thinking"),
    ("think_tags", "<think>abc</think>def"),
    ("text_before_think", "x<think>abc</think>def"),
    ("empty", ""),
    ("newlines_only", "\n\n"),
    ("end_only", "</think>"),
    ("plain_answer", "The answer is 4."),
    ("call_no_reasoning", W),
    ("text_then_call", "Sure.\n\n" + W),
    ("text_newlines_then_call", "\n\nSure\n\n" + W),
    ("compact_call", call("now", {}, nl=False)),
    ("text_after_call", W + "done"),
    ("bad_json", B + "\n{not json}\n" + E),
    ("bad_json_then_good", B + "\n{bad}\n" + E + W),
    ("cut_call", "A " + B + '\n{"name": "now"'),
    ("call_start_only", "Sure. " + B),
    ("no_name", B + '\n{"arguments": {"a": 1}}\n' + E),
    ("no_arguments", B + '\n{"name": "now"}\n' + E),
    ("name_not_string", B + '\n{"name": 3, "arguments": {}}\n' + E),
    ("string_arguments", B + '\n{"name": "now", "arguments": "{\\"a\\": 1}"}\n' + E),
    ("nested_arguments", B + '\n{"name": "get_weather", "arguments": {"opts": {"a": [1, 2.50, '
     '{"b": null}]}, "tags": ["x"], "t": 1e5}}\n' + E),
    ("spacing", B + '  {"name":"now","arguments":{"a":1,  "b":[1,2]}}  ' + E),
    ("unicode", "\u65e5\u672c\n" + B + '\n{"name": "get_weather", "arguments": {"city": '
     '"S\u00e3o \\u00e9 \U0001F680"}}\n' + E),
    ("array_body", B + '\n[{"name": "now"}]\n' + E),
    ("brace_in_string", B + '\n{"name": "now", "arguments": {"s": "a}b"}}\n' + E),
    ("response_without_end", "a</think>\n\n<response>\ndef"),
    ("response_end_without_start", "a</think>def</response>\n"),
    ("two_responses", "a</think><response>x</response> mid <response>y</response>"),
    ("response_end_before_start", "a</think></response>x<response>y"),
    ("reasoning_then_call_no_newlines", "plan</think>" + call("now", {}, nl=False)),
    ("call_inside_response", "a</think>\n\n<response>\n" + W + "</response>\n"),
    ("second_think_end", "a</think>b</think>c"),
]

CONFIGS = [  # (reasoning parser, tool parser, prompt)
    (None, "ernie45", USER),
    ("ernie45", "ernie45", USER),
    ("ernie45", None, USER),
    ("ernie45", "ernie45", USER + "<think>\n\n</think>\n\n"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm-src", default="/tmp/vllm033/src",
                    help="an extracted vllm-0.33.0 wheel (the folder holding vllm/)")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/golden/tool_parsers/ernie45.json"))
    args = ap.parse_args()
    vllm = mm.load_vllm(args.vllm_src, mm.find_stand_ins(args.vllm_src))
    ParserManager, Request = vllm[0], vllm[1]
    tok = mm.Tokenizer(TAGS)
    tok.vocab["<0x0A>"] = 1000 + ord("\n")
    tok.text[1000 + ord("\n")] = "\n"
    cases = []
    for reasoning, tools, ptext in CONFIGS:
        cls = ParserManager.get_parser(tool_parser_name=tools, reasoning_parser_name=reasoning,
                                       enable_auto_tools=tools is not None, model_name="m",
                                       tokenizer=tok)
        prompt = tok.encode(ptext)
        for name, text in TEXTS:
            request = Request(model="m", messages=[{"role": "user", "content": "hi"}],
                              tools=TOOLS, tool_choice="auto")
            try:
                whole, stream = mm.run_case(vllm, cls, tok, request, text, prompt,
                                            tools is not None,
                                            reasoning_tokens=reasoning is not None)
            except Exception as e:  # noqa: BLE001 - vLLM's parser raised: record it
                whole, stream = {"raises": type(e).__name__}, {"raises": type(e).__name__}
            cases.append({"name": name, "reasoning_parser": reasoning, "tool_parser": tools,
                          "prompt": ptext, "text": text, "whole": whole, "stream": stream})
    mm.save_cases(args.out, "ernie45", TAGS, TOOLS, cases)


if __name__ == "__main__":
    main()
