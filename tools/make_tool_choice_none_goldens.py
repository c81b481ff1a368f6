#!/usr/bin/env python3
"""Goldens for tool_choice "none" under `--enable-auto-tool-choice --tool-call-parser P`: what
vLLM 0.33 itself returns when a request's tool_choice is "none", given with tools or taken by
default (a request without tools), whole (the chat serving's Parser.parse +
assemble_chat_message_fields) and streamed one token per delta (its ChatStreamProcessor over
Parser.parse_delta).

vLLM's parser still runs there: where the tool parser and the reasoning parser (if any) are
engine-based (vllm/parser/engine: qwen3_coder, seed_oss, minimax_m2, granite, with the qwen3,
seed_oss and minimax_m2 reasoning parsers), the output goes through the tool parser and its
calls are dropped, so the call markup leaves the content; elsewhere (hermes, pythonic,
deepseek_v3, olmo3, phi4_mini_json, or beside minimax_m2_append_think / deepseek_r1) the content stays as written. Each case records
which (`engine_based`, the composed parser's own flag).

The outputs, prompts, tools and stand-in tokenizers are those of
tools/make_qwen3_coder_parser_goldens.py and tools/make_minimax_m2_parser_goldens.py (the first
few outputs of each parser's list); vLLM runs from an extracted wheel as there:

    python3 tools/make_tool_choice_none_goldens.py --vllm-src /tmp/vllm033/src

Writes tests/golden/tool_parsers/tool_choice_none.json; tests/api/think_parsers_test.cpp reads it.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import make_minimax_m2_parser_goldens as mm  # noqa: E402
import make_qwen3_coder_parser_goldens as qc  # noqa: E402
import make_reasoning_parser_goldens as rp  # noqa: E402

N_TEXTS = 10  # outputs per parser: calls, text around them, unknown names, markup alone


def configs():
    """(tool parser, [(reasoning parser, prompt)], outputs, tags)"""
    qwen = dict(rp.TAGS)
    seed = dict(rp.TAGS, **qc.SEED_TAGS)
    ds = dict(rp.TAGS, **qc.DS_TAGS)
    mm_prompt = "]~b]ai\n<think>\n"
    return [
        ("qwen3_coder", qc.CONFIGS, qc.TEXTS, qwen),
        ("seed_oss", [(None if r is None else "seed_oss", qc.seed(p)) for r, p in qc.CONFIGS],
         [(n, qc.seed(t)) for n, t in qc.TEXTS], seed),
        ("hermes", qc.CONFIGS[:2], qc.HERMES_TEXTS, qwen),
        ("pythonic", qc.CONFIGS[:1], qc.PYTHONIC_TEXTS, qwen),
        ("deepseek_v3", qc.CONFIGS[:1], qc.DEEPSEEK_V3_TEXTS, ds),
        ("minimax_m2", [(None, mm_prompt), ("minimax_m2", mm_prompt),
                        ("minimax_m2_append_think", mm_prompt)], mm.TEXTS, dict(mm.TAGS)),
        ("granite", qc.CONFIGS[:1], qc.GRANITE_TEXTS, dict(qc.GRANITE_TAGS)),
        ("olmo3", qc.CONFIGS[:1], qc.OLMO3_TEXTS, qwen),
        ("phi4_mini_json", qc.CONFIGS[:1], qc.PHI4_TEXTS, qwen),
    ]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm-src", default="/tmp/vllm033/src",
                    help="an extracted vllm-0.33.0 wheel (the folder holding vllm/)")
    ap.add_argument("--out", default=os.path.join(ROOT,
                                                  "tests/golden/tool_parsers/tool_choice_none.json"))
    args = ap.parse_args()
    vllm = mm.load_vllm(args.vllm_src, mm.find_stand_ins(args.vllm_src))
    ParserManager, Request = vllm[0], vllm[1]
    cases = []
    for tp, reasoning_configs, texts, tags in configs():
        tok = mm.Tokenizer(tags)
        for reasoning, ptext in reasoning_configs:
            cls = ParserManager.get_parser(tool_parser_name=tp, reasoning_parser_name=reasoning,
                                           enable_auto_tools=True, model_name="m", tokenizer=tok)
            engine_based = cls(tok, None)._engine_based
            prompt = tok.encode(ptext)
            for with_tools in (True, False):
                for name, text in texts[:N_TEXTS]:
                    extra = {"tools": qc.TOOLS, "tool_choice": "none"} if with_tools else {}
                    request = Request(model="m", messages=[{"role": "user", "content": "hi"}],
                                      **extra)
                    assert request.tool_choice == "none"
                    whole, stream = mm.run_case(vllm, cls, tok, request, text, prompt, True)
                    cases.append({"name": name, "tool_parser": tp, "reasoning_parser": reasoning,
                                  "prompt": ptext, "tools": with_tools,
                                  "engine_based": engine_based, "tags": tags, "text": text,
                                  "whole": whole, "stream": stream})
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as fh:
        json.dump({"vllm": "0.33.0", "tools": qc.TOOLS, "cases": cases}, fh,
                  ensure_ascii=False, indent=1)
    stripped = sum(1 for c in cases if (c["whole"]["content"] or "") != c["text"])
    print(f"{len(cases)} cases; the content is not the output in {stripped}")


if __name__ == "__main__":
    main()
