#!/usr/bin/env python3
"""Goldens for Mistral's Tekken tokenizer (Mistral Nemo, Mistral Small 3, Ministral,
Devstral), from mistral_common itself and Hugging Face `tokenizers`, with llama.cpp's
tokenization of the GGUF form reported beside them.

  python3 tools/make_tekken_tokenizer.py --tekken T --out DIR --no-check  # T: fetch_vocabs.sh
  python3 tools/make_tekken_goldens.py --tekken T --dir DIR [--out tests/golden/tokenizer]

Writes:
  tekken.jsonl      one case per line: {"text", "ids" (<s> first, special-token strings
                    parsed), "ids_plain" (no <s>), "decoded", "decoded_skip"} from Hugging Face
                    `tokenizers` on DIR/tekken/tokenizer.json
  tekken_big.bin    ids (no <s>) of the ~256 KB big_text() of the corpus, uint32 LE
  tekken.json       that text's length and sha256, and the sha256 of each file
                    make_tekken_tokenizer.py wrote (the goldens were made from these bytes)
Checks, and stops if any fails: the ids equal those of transformers' own converter
(MistralConverter) and, for every text without a special-token string in it, those of
mistral_common's Tekkenizer (the tokenizer the models were trained with; it does not parse
special-token strings). Prints how many texts llama.cpp (llama-cpp-python 0.3.36) tokenizes
differently on DIR/ggml-vocab-tekken.gguf (it rewrites the pattern for its own regex engine).
Needs mistral-common 1.13.1, transformers, tokenizers 0.23.3, llama-cpp-python 0.3.36.
"""
import argparse
import hashlib
import json
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from make_spm_goldens import LlamaCppVocab  # noqa: E402
from make_tokenizer_goldens import big_text, corpus  # noqa: E402


def tekken_cases(inp):
    cases = corpus()
    if os.path.exists(inp):
        with open(inp, encoding="utf-8") as f:
            cases += [t for t in f.read().split("\n__ggml_vocab_test__\n") if t]
    cases += [
        "<s>", "</s>", "<unk>", "[INST]", "<s>[INST]Hello[/INST]", "a<s>b", "text</s>\nmore",
        "<s>[INST]What is 2+2?[/INST]4</s>[INST]And 3+3?[/INST]",
        "[AVAILABLE_TOOLS][{\"type\": \"function\"}][/AVAILABLE_TOOLS]",
        "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}]",
        "<SPECIAL_20><SPECIAL_999>", "HTTPServerError XMLHttpRequest camelCaseWord PascalCase",
        "ÉCOLE école Ölçüm ÇAĞRI İstanbul ǅemal ǈ ǋ", "l'été dernier, c'était l'ÉTÉ",
        "ΑΒΓ αβγ ΣΊΣΥΦΟΣ σίσυφος", "Привет МИР мир", "a/b/c\n/usr/bin/env python3\n//",
        "ﬁ ﬂ ℌ ℍ Ⅻ ⅻ", "x̃ ñ ñ e\u0301 E\u0301", "3.14159 1,000,000 ١٢٣ ๑๒๓",
        " ", "  Hello", "Hello  ", "\tHello", "\nHello", "Hello\n", "a b  c   d    e",
        "    def f():\n        return 1\n", "x" * 1500, "ab " * 600, "word" * 400,
        "\u4e2d" * 1200, "Hello world " * 200, " " * 1100, "\n" * 1100,
    ]
    return list(dict.fromkeys(cases))


def has_special(text, specials):
    return any(s in text for s in specials)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tekken", required=True)
    ap.add_argument("--dir", required=True, help="make_tekken_tokenizer.py's --out")
    ap.add_argument("--out", default=os.path.join(os.path.dirname(HERE), "tests/golden/tokenizer"))
    a = ap.parse_args()
    from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    from tokenizers import Tokenizer
    from transformers.integrations.mistral.tokenizer import MistralConverter
    from make_tekken_tokenizer import read_tekken

    _, specials, _ = read_tekken(a.tekken)
    hf = Tokenizer.from_file(os.path.join(a.dir, "tekken", "tokenizer.json"))
    conv = MistralConverter(a.tekken).converted()
    mc = Tekkenizer.from_file(a.tekken)
    cases = tekken_cases(os.path.join(os.path.dirname(a.tekken), "ggml-vocab-llama-spm.gguf.inp"))
    n_mc = 0
    with open(os.path.join(a.out, "tekken.jsonl"), "w", encoding="utf-8") as f:
        for t in cases:
            ids = hf.encode(t).ids
            plain = hf.encode(t, add_special_tokens=False).ids
            assert ids == [1] + plain, t
            assert plain == conv.encode(t, add_special_tokens=False).ids, t
            if not has_special(t, specials):
                assert ids == mc.encode(t, bos=True, eos=False), t
                n_mc += 1
            f.write(json.dumps({"text": t, "ids": ids, "ids_plain": plain,
                                "decoded": hf.decode(ids, skip_special_tokens=False),
                                "decoded_skip": hf.decode(ids, skip_special_tokens=True)},
                               ensure_ascii=False) + "\n")
    big = big_text(cases, 1 << 18)
    ids = hf.encode(big, add_special_tokens=False).ids
    assert ids == mc.encode(big, bos=False, eos=False) or has_special(big, specials)
    with open(os.path.join(a.out, "tekken_big.bin"), "wb") as f:
        f.write(struct.pack(f"<{len(ids)}I", *ids))
    raw = big.encode("utf-8")
    shas = {}
    for name in ("tekken/tokenizer.json", "tekken/tokenizer_config.json",
                 "ggml-vocab-tekken.gguf"):
        shas[name] = hashlib.sha256(open(os.path.join(a.dir, name), "rb").read()).hexdigest()
    with open(os.path.join(a.out, "tekken.json"), "w") as f:
        json.dump({"bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(),
                   "tekken_sha256": hashlib.sha256(open(a.tekken, "rb").read()).hexdigest(),
                   "sha256": shas}, f, indent=1)
        f.write("\n")
    lc = LlamaCppVocab(os.path.join(a.dir, "ggml-vocab-tekken.gguf"))
    differ = [t for t in cases if lc.tokenize(t, True) != hf.encode(t).ids]
    print(f"{len(cases)} cases ({n_mc} also equal to mistral_common's), big text {len(raw)} "
          f"bytes -> {len(ids)} ids; llama.cpp differs on {len(differ)} cases")
    for t in differ[:10]:
        print("  llama.cpp differs:", repr(t[:80]))


if __name__ == "__main__":
    main()
