#!/usr/bin/env python3
"""Goldens for the <think> reasoning parsers: what vLLM 0.33 itself returns under
`--reasoning-parser deepseek_r1 | deepseek_v3 | qwen3` for a set of outputs, whole (the chat
serving's Parser.parse + assemble_chat_message_fields, and the usage's reasoning_tokens from its
count_reasoning_tokens) and streamed one token per delta (its
ChatStreamProcessor over Parser.parse_delta), after three kinds of prompt:

  open    the prompt ends inside the reasoning, as DeepSeek-R1's distills end it
          ("<|Assistant|><think>\\n");
  closed  the prompt closed it, as DeepSeek-V3.1's non-thinking template ("...</think>") or
          Qwen3's enable_thinking=false ("<think>\\n\\n</think>\\n\\n") end it;
  none    no think tag in the prompt (older R1 templates; the model writes its own <think>).

deepseek_v3 runs with chat_template_kwargs {} (no thinking), {"thinking": true} and
{"enable_thinking": true}.

vLLM runs from an extracted wheel as in tools/make_minimax_m2_parser_goldens.py (whose loader this
reuses; see its docstring for the steps):

    python3 tools/make_reasoning_parser_goldens.py --vllm-src /tmp/vllm033/src

The tokenizer is a stand-in: <think> and </think> are single tokens, every other character is a
token of its own, and no token is special.

Writes tests/golden/tool_parsers/think.json; tests/api/reasoning_parser_test.cpp reads it.
"""
import argparse
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import make_minimax_m2_parser_goldens as mm  # noqa: E402

TAGS = {"<think>": 151667, "</think>": 151668, "<tool_call>": 151657, "</tool_call>": 151658,
        "<|im_start|>": 151644, "<|im_end|>": 151645}


USER = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
PROMPTS = {
    "open": USER + "<think>\n",
    "closed": USER + "<think>\n\n</think>\n\n",
    "none": USER,
    "earlier_turn_closed": "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\n<think>\nx\n"
                           "</think>\n\ny<|im_end|>\n" + USER,
}

TEXTS = [
    ("reasoning_then_answer", "Okay, 2+2.\n</think>\n\nThe answer is 4."),
    ("reasoning_only", "Still thinking about it..."),
    ("think_written", "<think>\nplan\n</think>\n\nAnswer"),
    ("think_written_no_end", "<think>\nplan, still"),
    ("text_before_think", "Hmm <think>plan</think>Answer"),
    ("text_before_think_no_end", "Hmm <think>plan"),
    ("end_tag_only", "</think>"),
    ("end_at_end", "plan</think>"),
    ("empty", ""),
    ("whitespace_after_end", "plan</think>\n\n"),
    ("two_ends", "a</think>b</think>c"),
    ("think_after_end", "a</think>b<think>c</think>d"),
    ("think_after_end_open", "a</think>b<think>c"),
    ("two_starts", "<think>a<think>b</think>c"),
    ("unicode", "\u65e5\u672c \U0001F680 plan\n</think>\u00e9t\u00e9"),
    ("tags_as_text", "x &lt;think&gt; y </thin k> z</think>w"),
    ("call_after_reasoning", "plan</think>\n\n<tool_call>\n{\"name\": \"now\", \"arguments\": {}}"
     "\n</tool_call>"),
    ("call_ends_reasoning", "plan <tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n"
     "</tool_call>"),
    ("call_then_think", "<tool_call>\n{\"name\": \"now\", \"arguments\": {}}\n</tool_call>"
     "a</think>b"),
]

TOOLS = [{"type": "function", "function": {"name": "now", "parameters": {
    "type": "object", "properties": {}}}}]

CONFIGS = [
    ("deepseek_r1", {}, None),
    ("deepseek_v3", {}, None),
    ("deepseek_v3", {"thinking": True}, None),
    ("deepseek_v3", {"enable_thinking": True}, None),
    ("deepseek_v3", {"thinking": False}, None),
    ("qwen3", {}, None),
    ("qwen3", {"enable_thinking": False}, None),
    ("qwen3", {"enable_thinking": True}, None),
    ("qwen3", {"thinking": False}, None),
    ("qwen3", {}, "hermes"),
    ("qwen3", {"enable_thinking": False}, "hermes"),
    ("deepseek_r1", {}, "hermes"),
]


# Olmo 3 (--reasoning-parser olmo3): <think> and </think> are plain text in its vocabulary,
# "</think>" the tokens "</", "think", ">" (vLLM's Olmo3ReasoningParser looks those up, with
# "\u0120</"). Its texts add what only its string-space parser reads differently.
OLMO3_TAGS = {"</": 510, "\u0120</": 694, "think": 26127, ">": 29, "<|im_start|>": 100264,
              "<|im_end|>": 100265}
OLMO3_TEXTS = TEXTS[:16] + [
    ("end_then_think_text", "plan</think>the <think> tag"),
    ("spaced_end", "plan </think> answer"),
    ("broken_end", "plan</ think>answer"),
    ("lt_in_reasoning", "a < b and c > d</think>yes"),
]
# Granite 3.2 (--reasoning-parser granite): plain-text phrases open the reasoning and the
# response; nothing is a special token.
GRANITE_TAGS = {"<|start_of_role|>": 49152, "<|end_of_role|>": 49153, "<|end_of_text|>": 0}
GRANITE_PROMPTS = {"none": "<|start_of_role|>user<|end_of_role|>hi<|end_of_text|>\n"
                           "<|start_of_role|>assistant<|end_of_role|>"}
TP, TQ, RP, RQ = ("Here is my thought process:", "Here's my thought process:",
                  "Here is my response:", "Here's my response:")
GRANITE_TEXTS = [
    ("both", TP + " 2+2 is 4. " + RP + " The answer is 4."),
    ("both_short_forms", TQ + "\nplan\n" + RQ + "\nAnswer"),
    ("mixed_forms", TP + "plan" + RQ + "Answer"),
    ("no_response", TP + " still thinking"),
    ("no_phrases", "The answer is 4."),
    ("empty", ""),
    ("empty_reasoning", TP + RP + "Answer"),
    ("empty_response", TP + "plan" + RP),
    ("text_before", "Sure. " + TP + "plan" + RP + "Answer"),
    ("response_only", RP + " Answer"),
    ("two_responses", TP + "a" + RP + "b" + RP + "c"),
    ("two_thoughts", TP + "a" + TP + "b" + RP + "c"),
    ("colons_in_reasoning", TP + " x: y: Here is my z: w " + RP + " done: yes"),
    ("almost_phrase", "Here is my thought: x " + RP + " y"),
    ("lowercase", "here is my thought process: a here is my response: b"),
    ("unicode", TP + " \u65e5\u672c " + RP + " \u00e9t\u00e9"),
    ("newline_start", "\n" + TP + "a" + RP + "b"),
    ("here_prefix_text", "Here we go: " + TP + "a" + RP + "b"),
    ("cut_in_response_phrase", TP + "plan Here is my resp"),
]
GRANITE_CONFIGS = [("granite", {}, None), ("granite", {"thinking": True}, None)]
OLMO3_CONFIGS = [("olmo3", {}, None), ("olmo3", {"enable_thinking": False}, None)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vllm-src", default="/tmp/vllm033/src",
                    help="an extracted vllm-0.33.0 wheel (the folder holding vllm/)")
    ap.add_argument("--parser", choices=["think", "olmo3", "granite"], default="think",
                    help="think: deepseek_r1 / deepseek_v3 / qwen3 (think.json); olmo3 / "
                         "granite: olmo3_reasoning.json / granite_reasoning.json")
    ap.add_argument("--out")
    args = ap.parse_args()
    olmo3, granite = args.parser == "olmo3", args.parser == "granite"
    out = args.out or os.path.join(
        ROOT, "tests/golden/tool_parsers/" + ("think.json" if args.parser == "think"
                                              else args.parser + "_reasoning.json"))
    tags = OLMO3_TAGS if olmo3 else GRANITE_TAGS if granite else TAGS
    texts = OLMO3_TEXTS if olmo3 else GRANITE_TEXTS if granite else TEXTS
    prompts = GRANITE_PROMPTS if granite else PROMPTS
    vllm = mm.load_vllm(args.vllm_src, mm.find_stand_ins(args.vllm_src))
    ParserManager, Request = vllm[0], vllm[1]
    tok = mm.Tokenizer(tags)
    cases = []
    for rp, kwargs, tp in (OLMO3_CONFIGS if olmo3 else GRANITE_CONFIGS if granite else CONFIGS):
        auto = tp is not None
        tools = TOOLS if auto else None
        cls = ParserManager.get_parser(tool_parser_name=tp, reasoning_parser_name=rp,
                                       enable_auto_tools=auto, model_name="m", tokenizer=tok)
        for pname, ptext in prompts.items():
            prompt = tok.encode(ptext)
            for name, text in texts:
                request = Request(model="m", messages=[{"role": "user", "content": "hi"}],
                                  chat_template_kwargs=dict(kwargs), tools=tools,
                                  tool_choice="auto" if auto else None)
                whole, stream = mm.run_case(vllm, cls, tok, request, text, prompt, auto, kwargs,
                                            reasoning_tokens=True)
                cases.append({"name": name, "reasoning_parser": rp, "tool_parser": tp,
                              "chat_template_kwargs": kwargs, "prompt": pname, "text": text,
                              "whole": whole, "stream": stream})
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "w", encoding="utf-8") as fh:
        json.dump({"vllm": "0.33.0", "tags": tags, "prompts": prompts, "tools": TOOLS,
                   "cases": cases}, fh,
                  ensure_ascii=False, indent=1)
    differ = sum(1 for c in cases if (c["whole"]["content"] or "") != c["stream"]["content"] or
                 (c["whole"]["reasoning"] or "") != c["stream"]["reasoning"])
    print(f"{len(cases)} cases; vLLM's stream differs from its whole response in {differ}")


if __name__ == "__main__":
    main()
