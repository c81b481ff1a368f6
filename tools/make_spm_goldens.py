#!/usr/bin/env python3
"""Goldens for the SentencePiece-style tokenizer (GGUF tokenizer.ggml.model "llama": Llama 2,
Mistral 7B, TinyLlama), from llama.cpp itself (llama-cpp-python's low-level API on a
vocabulary-only load).

  python3 tools/make_spm_tokenizer_json.py --vocab V --out DIR   # V: scripts/fetch_vocabs.sh
  python3 tools/make_spm_goldens.py --vocab V --hf DIR [--out tests/golden/tokenizer]

The vocabulary is llama.cpp's test file models/ggml-vocab-llama-spm.gguf (Llama 2's 32000
pieces with their scores), fetched by scripts/fetch_vocabs.sh with llama.cpp's test inputs for
it (the .inp beside it, added to the corpus). Writes:
  llama_spm.jsonl     one case per line: {"text", "ids" (BOS added, special tokens parsed),
                      "ids_plain" (no BOS), "decoded" (llama_detokenize of ids, special tokens
                      shown, the leading space of text after BOS kept as llama.cpp does)}
  llama_spm_big.bin   ids (no BOS) of a ~256 KB mix of the texts (big_text()), uint32 LE
  llama_spm_big.json  that text's length and sha256
and, from Hugging Face `tokenizers` on the three tokenizer.json forms that
tools/make_spm_tokenizer_json.py writes for the same vocabulary (--hf DIR, its --out):
  hf_llama_legacy.jsonl, hf_llama_metaspace.jsonl, hf_llama_gemma.jsonl
                      {"text", "ids" (add_special_tokens=True), "ids_plain" (False), "decoded",
                      "decoded_skip" (skip_special_tokens=True)}
  hf_llama_spm.json   the sha256 of each tokenizer.json they were made from
  llama_spm_noprefix.jsonl  llama.cpp on the vocabulary with add_space_prefix = false (Gemma's
                      GGUFs): {"text", "ids", "ids_plain", "decoded"}
Needs llama-cpp-python (the same version the peer benchmarks use, 0.3.36) and tokenizers 0.23.3.
"""
import argparse
import ctypes
import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_tokenizer_goldens import big_text, corpus  # noqa: E402


def spm_cases(vocab):
    cases = corpus()
    inp = vocab + ".inp"  # llama.cpp's own test inputs for this vocabulary, beside it
    if os.path.exists(inp):
        with open(inp, encoding="utf-8") as f:
            cases += [t for t in f.read().split("\n__ggml_vocab_test__\n") if t]
    cases += [
        "<s>", "</s>", "<unk>", "<s><s>", "a<s>b", " <s> ", "text</s>\nmore", "<s>Hello</s>",
        "[INST] What is 2+2? [/INST]",
        "<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nHi there [/INST] Hello! </s>",
        "<s>[INST] first [/INST] answer </s><s>[INST] second [/INST]",
        " ", "  Hello", "Hello  ", "\tHello", "\nHello", "Hello\n", "a b  c   d    e",
        "    def f():\n        return 1\n", "x" * 1500, "ab " * 600, "word" * 400,
        "\u4e2d" * 1200, "Hello world " * 200, " " * 1100, "\n" * 1100,
    ]
    return list(dict.fromkeys(cases))  # first occurrences, in order


class LlamaCppVocab:
    def __init__(self, path):
        import llama_cpp
        self.l = llama_cpp
        llama_cpp.llama_backend_init()
        p = llama_cpp.llama_model_default_params()
        p.vocab_only = True
        self.model = llama_cpp.llama_model_load_from_file(path.encode(), p)
        if not self.model:
            raise SystemExit(f"llama.cpp could not load {path}")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)

    def tokenize(self, text, add_special):
        b = text.encode("utf-8")
        n = len(b) + 8
        arr = (self.l.llama_token * n)()
        k = self.l.llama_tokenize(self.vocab, b, len(b), arr, n, add_special, True)
        assert k >= 0, text
        return list(arr[:k])

    def detokenize(self, ids):
        arr = (self.l.llama_token * max(1, len(ids)))(*ids)
        buf = ctypes.create_string_buffer(len(ids) * 64 + 16)
        k = self.l.llama_detokenize(self.vocab, arr, len(ids), buf, len(buf), False, True)
        assert k >= 0
        return buf.raw[:k].decode("utf-8", errors="replace")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--hf", required=True, help="make_spm_tokenizer_json.py's --out")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests/golden/tokenizer"))
    a = ap.parse_args()
    tok = LlamaCppVocab(a.vocab)
    cases = spm_cases(a.vocab)
    with open(os.path.join(a.out, "llama_spm.jsonl"), "w", encoding="utf-8") as f:
        for t in cases:
            ids = tok.tokenize(t, True)
            f.write(json.dumps({"text": t, "ids": ids, "ids_plain": tok.tokenize(t, False),
                                "decoded": tok.detokenize(ids)}, ensure_ascii=False) + "\n")
    big = big_text(cases, 1 << 18)
    ids = tok.tokenize(big, False)
    with open(os.path.join(a.out, "llama_spm_big.bin"), "wb") as f:
        f.write(struct.pack(f"<{len(ids)}I", *ids))
    raw = big.encode("utf-8")
    with open(os.path.join(a.out, "llama_spm_big.json"), "w") as f:
        json.dump({"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(),
                   "vocab_sha256": hashlib.sha256(open(a.vocab, "rb").read()).hexdigest()}, f)
        f.write("\n")
    print(f"{len(cases)} cases, big text {len(raw)} bytes -> {len(ids)} ids")
    from tokenizers import Tokenizer
    shas = {}
    for form in ("legacy", "metaspace", "gemma"):
        path = os.path.join(a.hf, "llama-" + form, "tokenizer.json")
        shas[form] = hashlib.sha256(open(path, "rb").read()).hexdigest()
        hf = Tokenizer.from_file(path)
        with open(os.path.join(a.out, f"hf_llama_{form}.jsonl"), "w", encoding="utf-8") as f:
            for t in cases:
                ids = hf.encode(t).ids
                f.write(json.dumps({"text": t, "ids": ids,
                                    "ids_plain": hf.encode(t, add_special_tokens=False).ids,
                                    "decoded": hf.decode(ids, skip_special_tokens=False),
                                    "decoded_skip": hf.decode(ids, skip_special_tokens=True)},
                                   ensure_ascii=False) + "\n")
    # The same vocabulary with tokenizer.ggml.add_space_prefix = false (Gemma's GGUFs), which
    # make_spm_tokenizer_json.py writes beside the tokenizer.json forms.
    noprefix = os.path.join(a.hf, "ggml-vocab-llama-spm-noprefix.gguf")
    tok2 = LlamaCppVocab(noprefix)
    with open(os.path.join(a.out, "llama_spm_noprefix.jsonl"), "w", encoding="utf-8") as f:
        for t in cases:
            ids = tok2.tokenize(t, True)
            f.write(json.dumps({"text": t, "ids": ids, "ids_plain": tok2.tokenize(t, False),
                                "decoded": tok2.detokenize(ids)}, ensure_ascii=False) + "\n")
    with open(os.path.join(a.out, "hf_llama_spm.json"), "w") as f:
        json.dump({"tokenizer_json_sha256": shas,
                   "noprefix_gguf_sha256": hashlib.sha256(open(noprefix, "rb").read()).hexdigest()},
                  f)
        f.write("\n")


if __name__ == "__main__":
    main()
