#!/usr/bin/env python3
"""Goldens for long pre-tokens and NFC edge cases (tests/tokenizer/tokenizer_long_test.cpp).

  python3 tools/make_tokenizer_long_goldens.py [--gguf PATH] [--qwen3 DIR] [--out tests/golden/tokenizer]

Needs Hugging Face `tokenizers` (and `gguf` for SmolLM2; without it only Qwen3 is written).
Writes:
  <name>_long.jsonl  pre-tokens longer than the BPE window (src/tokenizer/bpe.h, 1024 bytes) and
                     their ids from the reference, one per line: {"text", "ids", "kind"}. kind is
                     "natural" (text people write: runs of CJK without punctuation, indentation,
                     ruler lines, emoji, long letter strings) or "repeat" (one character or pair
                     repeated: the pathological pieces whose merges interact over any distance).
  nfc.jsonl          {"text", "nfc"}: Python unicodedata NFC (its Unicode version must equal the
                     one in src/tokenizer/unicode_nfc_data.cpp) of strings built to stress
                     canonical ordering and composition: long unsorted runs of marks, Hangul
                     jamo, singletons, astral compositions.
"""
import argparse
import json
import os
import random
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_tokenizer_goldens as base  # noqa: E402

# A few paragraphs written for this file, punctuation removed below so each becomes one piece.
ZH = ("分词器把文本切成模型认识的单元服务引擎在收到请求以后先做模板渲染再做分词然后按长度检查"
      "如果提示太长就直接拒绝而不是先花很多时间去处理整个输入这样一个没有认证的客户端也不能用"
      "一个很长的单词把处理器占满几十秒批处理调度器把等待中的请求按到达顺序放进同一批在显存"
      "或内存不够的时候抢占最后进入的请求以后再重新计算它的缓存前缀缓存让共享同一段系统提示的"
      "请求不必重复计算那一段的键和值我们用哈希链来识别已经算过的块每个块的哈希由父块的哈希"
      "和本块的词元决定这样两个请求只要前缀相同就会得到相同的块哈希解码阶段每一步只产生一个"
      "新词元所以瓶颈是读权重的内存带宽而不是算力预填充阶段则相反一次处理很多词元更依赖算力")
JA = ("トークナイザーはテキストをモデルが知っている単位に分けますサーバーは要求を受け取ると"
      "まずテンプレートを描画しそれから分割して長さを確かめます長すぎる入力はすぐに断ります"
      "日本語の文章には単語の間に空白がないので句読点を除くと一つの長い断片になります")


def strip_punct(s):
    return "".join(c for c in s if unicodedata.category(c).startswith("L"))


def long_cases():
    rng = random.Random(20251130)
    letters = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(3000))
    mixed_case = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
                         for _ in range(2500))
    natural = [
        strip_punct(ZH) * 2, strip_punct(ZH) * 3, strip_punct(JA) * 4, strip_punct(ZH + JA) * 2,
        " " * 1500 + "x", "\t" * 1100 + "y", "\n" * 1300 + "z", " \n" * 700, "    \n" * 300,
        "-" * 2000, "=" * 3000, "*" * 1500, "#" * 1100, "/" * 1200, "_" * 1500, "." * 2048,
        "😀" * 400, "🙂👍" * 300, "→" * 500, letters, mixed_case,
        "ACGT" * 400, "".join(rng.choice("ACGT") for _ in range(4000)),
    ]
    repeat = ["a" * n for n in (1025, 1536, 2000, 4096, 10000)] + [
        "ab" * 1500, " " * 5000, "\n" * 5000, "中" * 2000, "z" * 3333]
    return [(t, "natural") for t in natural] + [(t, "repeat") for t in repeat]


def nfc_cases():
    rng = random.Random(14)
    marks = [c for c in range(0x300, 0x370)] + [c for c in range(0x591, 0x5C8)] + \
            [0x93C, 0x94D, 0x1DC0, 0x1DCF, 0x20D0, 0x302A, 0x302B, 0x302E, 0x3099, 0x309A, 0x1D165]
    marks = [c for c in marks if unicodedata.combining(chr(c))]
    starters = [ord(c) for c in "aAeEoOuUiInNcCsSyYwWkK"] + [
        0x212A, 0x212B, 0x2126, 0x3B1, 0x3A9, 0x3C9, 0x415, 0x435, 0x928, 0x915, 0xC5, 0xE9, 0x1E00,
        0x4E2D, 0xF900, 0x2F800, 0x11099, 0x110BA, 0x1100, 0x1161, 0x11A8, 0xAC00, 0xAC01, 0x304B,
        0x30AB, 0x3099, 0xB47, 0xB3E, 0xDD9, 0xDCF, 0x1025, 0x102E]
    out = []
    for n in (1, 2, 3, 5, 8, 40):
        for _ in range(60):
            s = []
            for _ in range(n):
                s.append(rng.choice(starters))
                s.extend(rng.choice(marks) for _ in range(rng.randrange(4)))
            out.append("".join(map(chr, s)))
    # Long runs of marks: sorted, reversed, shuffled (the counting-sort path), after a starter.
    run = [rng.choice(marks) for _ in range(5000)]
    out += ["a" + "".join(map(chr, run)), "e" + "".join(map(chr, sorted(run, key=lambda c: -unicodedata.combining(chr(c))))),
            "\u0301" * 3000, "o" + "\u0323\u0302" * 1500, "\u1100\u1161\u11a8" * 1000]
    # Every composition pair once, decomposed and reordered with an extra mark.
    for cp in range(0xC0, 0x30000):
        if 0xD800 <= cp < 0xE000:
            continue
        d = unicodedata.normalize("NFD", chr(cp))
        if len(d) > 1 and rng.random() < 0.05:
            out.append(d + "\u0323" + chr(cp))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gguf", default=os.environ.get(
        "VLLM_TEST_GGUF", os.path.expanduser("~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf")))
    ap.add_argument("--qwen3", default=os.path.join(base.ROOT, "..", "shared", "fixtures", "qwen3-tokenizer"))
    ap.add_argument("--out", default=os.path.join(base.ROOT, "tests", "golden", "tokenizer"))
    a = ap.parse_args()
    cases = long_cases()
    toks = [("qwen3", base.qwen3(a.qwen3))]
    try:
        toks.append(("smollm2", base.smollm2(a.gguf)))
    except ImportError as e:
        print(f"smollm2 skipped: {e}", file=sys.stderr)
    for name, tok in toks:
        with open(os.path.join(a.out, f"{name}_long.jsonl"), "w", encoding="utf-8") as f:
            for text, kind in cases:
                ids = tok.encode(text, add_special_tokens=False).ids
                f.write(json.dumps({"text": text, "ids": ids, "kind": kind}, ensure_ascii=False) + "\n")
        print(f"{name}: {len(cases)} long cases", file=sys.stderr)
    with open(os.path.join(a.out, "nfc.jsonl"), "w", encoding="utf-8") as f:
        for s in nfc_cases():
            f.write(json.dumps({"text": s, "nfc": unicodedata.normalize("NFC", s)}, ensure_ascii=False) + "\n")
    print(f"nfc: Unicode {unicodedata.unidata_version}", file=sys.stderr)


if __name__ == "__main__":
    main()
