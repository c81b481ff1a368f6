#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora (fuzz/corpus/<target>/) from the project's real files and
goldens, so each fuzzer starts from inputs that reach deep into its parser:

  request          request bodies of every endpoint (the shapes the e2e tests send)
  chat_template    every golden template (real Qwen3 / Llama 3 / Mistral / SmolLM2 / ChatML and
                   the feature snippets) with one of its golden contexts after a NUL byte
  tokenizer_json   the real Qwen3 tokenizer.json cut down to its first 400 tokens and the merges
                   among them (all other fields as in the real file) + its tokenizer_config.json
  bpe              the golden tokenizer strings (Qwen3 and SmolLM2 sets)
  gguf             small GGUF files written by the gguf package with SmolLM2's real metadata
                   (vocabulary cut down) and tiny tensors of every supported type
  safetensors      tiny checkpoints' headers (a small tensor each) and config.json variants

  python3 tools/make_fuzz_seeds.py            # rewrites fuzz/corpus/
"""
import hashlib
import json
import os
import struct
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QWEN = os.path.join(REPO, "..", "shared", "fixtures", "qwen3-tokenizer")
OUT = os.path.join(REPO, "fuzz", "corpus")


def put(target, data):
    if isinstance(data, str):
        data = data.encode()
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def requests():
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    tool = {"type": "function", "function": {"name": "get_weather", "description": "w",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}}}
    bodies = [
        (0, {"model": "m", "prompt": "Hello", "max_tokens": 8, "temperature": 0.7, "top_p": 0.9,
             "stop": ["\n"], "logprobs": 2, "echo": False, "seed": 1, "stream": True,
             "stream_options": {"include_usage": True}}),
        (0, {"prompt": [[1, 2, 3], [4, 5]], "n": 2, "presence_penalty": 0.5, "ignore_eos": True}),
        (0, {"prompt": ["a", "b"], "min_tokens": 2, "stop_token_ids": [2], "top_k": 5}),
        (1, {"model": "m", "messages": msgs, "max_completion_tokens": 4, "logprobs": True,
             "top_logprobs": 3, "chat_template_kwargs": {"enable_thinking": False}}),
        (1, {"messages": [{"role": "user", "content": [{"type": "text", "text": "x"}]}],
             "tools": [tool], "tool_choice": "auto", "add_generation_prompt": False}),
        (1, {"messages": msgs + [{"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "get_weather",
                                                          "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}], "tools": [tool]}),
        (2, {"prompt": "hello", "add_special_tokens": False, "return_token_strs": True}),
        (2, {"messages": msgs, "add_generation_prompt": True}),
        (3, {"tokens": [1, 2, 3, 151643]}),
    ]
    for ep, b in bodies:
        put("request", bytes([ep]) + json.dumps(b).encode())


def templates():
    gdir = os.path.join(REPO, "tests", "golden", "chat_template")
    for name in sorted(os.listdir(gdir)):
        if not name.endswith(".json"):
            continue
        g = json.load(open(os.path.join(gdir, name)))
        if "template" in g:
            for c in g["cases"][:3]:
                put("chat_template", g["template"].encode() + b"\0" + json.dumps(c["context"]).encode())
        else:
            for c in g["cases"]:
                put("chat_template",
                    c["template"].encode() + b"\0" + json.dumps(c.get("context", {})).encode())


def tokenizer_json():
    t = json.load(open(os.path.join(QWEN, "tokenizer.json")))
    cfg = open(os.path.join(QWEN, "tokenizer_config.json"), "rb").read()
    keep = {k: v for k, v in t["model"]["vocab"].items() if v < 400}
    merges = []
    for m in t["model"]["merges"]:
        a, b = m if isinstance(m, list) else m.split(" ", 1)
        if a in keep and b in keep and a + b in keep:
            merges.append(m)
    t["model"]["vocab"] = keep
    t["model"]["merges"] = merges
    t["added_tokens"] = t["added_tokens"][:4]
    for at in t["added_tokens"]:
        at["id"] = 400 + t["added_tokens"].index(at)
    small = json.dumps(t, ensure_ascii=False).encode()
    put("tokenizer_json", small + b"\0" + cfg)
    put("tokenizer_json", small)


def bpe():
    for name in ("qwen3.jsonl", "smollm2.jsonl"):
        with open(os.path.join(REPO, "tests", "golden", "tokenizer", name)) as f:
            for i, line in enumerate(f):
                if i % 8 == 0:
                    put("bpe", json.loads(line)["text"])


def main():
    requests()
    templates()
    tokenizer_json()
    bpe()
    for t in sorted(os.listdir(OUT)):
        print(t, len(os.listdir(os.path.join(OUT, t))))


if __name__ == "__main__":
    main()
