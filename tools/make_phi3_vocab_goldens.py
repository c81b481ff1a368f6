#!/usr/bin/env python3
"""Goldens for Phi-3's GGUF vocabulary from llama.cpp itself: llama.cpp's test file
models/ggml-vocab-phi-3.gguf (Phi-3-mini's 32064 SentencePiece pieces, general.name "Phi3",
fetched by scripts/fetch_vocabs.sh), on which llama.cpp sets rstrip on the special tokens by
the model's name (all but <unk>, <s>, <|endoftext|>).

  python3 tools/make_phi3_vocab_goldens.py --vocab ~/.cache/vllm-cpp/vocab/ggml-vocab-phi-3.gguf

Writes tests/golden/tokenizer/phi3_spm.jsonl: {"text", "ids" (BOS added, special tokens
parsed), "decoded"} for the SentencePiece corpus and Phi-3 chat strings. Needs llama-cpp-python
0.3.36.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_spm_goldens import LlamaCppVocab, spm_cases  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests", "golden",
                                                  "tokenizer", "phi3_spm.jsonl"))
    a = ap.parse_args()
    tok = LlamaCppVocab(a.vocab)
    llama_spm = os.path.join(os.path.dirname(a.vocab), "ggml-vocab-llama-spm.gguf")
    cases = spm_cases(llama_spm) + [
        "<|user|>\nHello<|end|>\n<|assistant|>\n", "<|system|>  You are helpful.<|end|>\n",
        "<|user|>   spaces after<|end|>   \n\n<|assistant|>", "</s>  after eos", "<s>  x",
        "<|endoftext|>  y", "<unk>  z", "a<|end|>b", "<|placeholder1|>\t\ttabs",
        "<|user|>\n\n\ndouble<|end|>\n<|user|>\nsecond<|end|>\n<|assistant|>\n"]
    with open(a.out, "w", encoding="utf-8") as f:
        for t in dict.fromkeys(cases):
            if "\0" in t:
                continue
            ids = tok.tokenize(t, True)
            f.write(json.dumps({"text": t, "ids": ids, "decoded": tok.detokenize(ids)},
                               ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
