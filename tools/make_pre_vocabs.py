#!/usr/bin/env python3
"""Byte-level BPE vocabularies that differ only in tokenizer.ggml.pre, for the GGUF
pre-tokenizers of files whose own vocabularies are not at hand (DeepSeek LLM, DeepSeek Coder and
DeepSeek-V3 with Hunyuan dense's hunyuan-dense,
Falcon 3, Smaug, Granite's refact, Cohere's command-r, EXAONE 4.0's exaone4, Phi-2's phi-2, Pixtral, Megrez, Mi:dm 2.0, DBRX / OLMo 2's dbrx, gpt-4o:
OpenAI's o200k, Phi-4-mini's GGUFs, and glm4 / chatglm-bpe: GLM-4's): SmolLM2's tokens and
merges (from the GGUF the tests use) under each name, vocabulary-only GGUFs. The pre-tokenizer
decides where BPE may merge, so llama.cpp's ids on these files check our splits for each name.

  python3 tools/make_pre_vocabs.py --source SMOLLM2.gguf --out DIR [--goldens]

Writes DIR/ggml-vocab-smollm2-<pre>.gguf, and DIR/ggml-vocab-smollm2-<pre>-nobos.gguf for the
names of NOBOS_PRES: the same without tokenizer.ggml.add_bos_token, where llama.cpp's default
for the name decides whether BOS is added (the Llama 3 and Tekken names add it), and
DIR/ggml-vocab-smollm2-<pre>-bos.gguf for the names of BOS_PRES: the same with
tokenizer.ggml.add_bos_token true (llama.cpp's null BOS default for the GLM-4 names gives way to
tokenizer.ggml.bos_token_id, which SmolLM2's file has). Also writes
the Hugging Face form of the o200k pre-tokenizer on the same vocabulary:
DIR/smollm2-o200k/tokenizer.json (SmolLM2's tokens, merges and control tokens; pre_tokenizer
Sequence[Split(Regex O200K_PATTERN, Isolated), ByteLevel(use_regex=false)], as o200k
tokenizer.json files such as Phi-4-mini's have it) and its tokenizer_config.json. Without
--goldens, checks each file against the sha256 in tests/golden/tokenizer/pre_vocabs.json and
stops if one differs. --goldens (llama-cpp-python 0.3.36 and tokenizers 0.23.3, never in CI)
writes to tests/golden/tokenizer/
  pre_vocabs.jsonl      one line per (pre, text) of the tokenizer corpus (and, for gpt-4o, of
                        O200K_TEXTS too): {"pre", "text", "ids" (special tokens parsed, no BOS:
                        SmolLM2 adds none), "decoded"}: llama.cpp's ids, except for gpt-4o
                        where they differ from Hugging Face's on the tokenizer.json form: there
                        the ids are Hugging Face's (what vLLM runs), llama.cpp's are kept in
                        "llama_cpp_ids", and the text must hold a combining mark or a non-ASCII
                        cased letter (what llama.cpp's rewrite of the pattern changes)
  pre_vocabs_bos.jsonl  {"pre", "text", "ids"} of llama.cpp with add_special on the -nobos files,
                        then {"pre", "add_bos_token": true, "text", "ids"} on the -bos files
  hf_smollm2_o200k.jsonl  Hugging Face `tokenizers` on smollm2-o200k/tokenizer.json, the gpt-4o
                        texts: {"text", "ids" (add_special_tokens=True), "pieces" (its Split of
                        the text, before the byte-level mapping), "decoded", "decoded_skip"}
  pre_vocabs.json       the files' sha256
Needs `gguf`.
"""
import argparse
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN_DIR = os.path.join(os.path.dirname(HERE), "tests", "golden", "tokenizer")
PRES = ["deepseek-llm", "deepseek-coder", "falcon3", "smaug-bpe", "refact", "pixtral", "megrez",
        "midm-2.0", "dbrx", "gpt-4o", "glm4", "chatglm-bpe", "command-r", "exaone4",
        "deepseek-v3", "hunyuan-dense", "phi-2"]
NOBOS_PRES = ["llama-bpe", "tekken", "falcon3", "smaug-bpe", "deepseek-llm", "qwen2", "default",
              "pixtral", "refact", "gpt-4o", "glm4", "chatglm-bpe"]
# With tokenizer.ggml.add_bos_token true: llama.cpp sets the GLM-4 names' BOS id to null, but
# only as the default that tokenizer.ggml.bos_token_id replaces.
BOS_PRES = ["glm4", "chatglm-bpe"]
BOS_TEXTS = ["Hello world", "<|im_start|>user\nHi<|im_end|>", ""]
# o200k's split (tokenizer.json of Phi-4-mini and the other o200k files; llama.cpp keeps it as a
# comment for "gpt-4o" and runs a rewrite of it).
O200K_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)?|"
    r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
# More texts for gpt-4o: case changes inside words, contractions in every case, digits in runs,
# '/' after punctuation, non-ASCII case, and combining marks (decomposed accents) before a
# contraction, where llama.cpp's rewritten pattern splits otherwise.
O200K_TEXTS = [
    "HTTPServerError XMLHttpRequest camelCaseWord PascalCase getHTTPResponse",
    "DON'T Don't don'T I'M i'm YOU'LL You'Ll WE'RE we'Ve SHE'D it'S",
    "DON'TSTOP IT'SOK WE'LLGO HE'Snice", "you'dbetter she'dgo I'dlike it'sfine don'tknow",
    "snake_case_name CONSTANT_VALUE __init__ mixedCASEWord iPhone eBay",
    "ÉCOLE école Ölçüm ÇAĞRI İstanbul ǅemal ǈ ǋ Ǆemal ǆemal aǅ",
    "l'été dernier, c'était l'ÉTÉ", "aÉcole theÉlite sÄnger dasÜber coÖperation",
    "ÉcoleNormale ÜberMensch überMENSCH", "ΑΒΓ αβγ ΣΊΣΥΦΟΣ σίσυφος ΑβΓδ αΒγΔ",
    "Привет МИР мир ПриветМир привеТмир",
    "a/b/c\n/usr/bin/env python3\n//", "https://x.org/a/b/ ./run.sh --flag=1/2 ?/\n!!///",
    "1 12 123 1234 12345 123456 1234567 3.14159 1,000,000", "١٢٣٤ ๑๒๓๔ ５６７８ abc1234def",
    "x\u0303 n\u0303 e\u0301 E\u0301 A\u030aB",
    "The cafe\u0301's menu, the nai\u0308ve's view",
    "don\u0301't it\u0300'll we\u0303're they\u0308've",
    "CAFE\u0301'S HELLO\u0308'LL NAI\u0301'D",
    "re\u0301sume\u0301'd Zu\u0308rich's",
    "नमस्ते दुनिया हिन्दी", "สวัสดีชาวโลก", "வணக்கம் உலகம்",
    "line one\r\nline two\n\n  indented/path/\n",
]


def write_vocab(source, out, pre, bos_key=True, add_bos=None):
    """bos_key=False drops tokenizer.ggml.add_bos_token; add_bos (a bool) sets it instead."""
    sys.path.insert(0, HERE)
    from make_spm_tokenizer_json import copy_gguf_keys
    drop = {"tokenizer.ggml.pre"} | (
        set() if bos_key and add_bos is None else {"tokenizer.ggml.add_bos_token"})

    def extra(w):
        w.add_string("tokenizer.ggml.pre", pre)
        if add_bos is not None:
            w.add_bool("tokenizer.ggml.add_bos_token", add_bos)
    copy_gguf_keys(source, out, "llama",
                   lambda k: k.startswith("tokenizer.ggml.") and k not in drop, extra)


def o200k_tokenizer_json(source):
    """SmolLM2's vocabulary as a Hugging Face tokenizer.json with o200k's pre-tokenizer."""
    from gguf import GGUFReader
    sys.path.insert(0, HERE)
    from make_spm_tokenizer_json import gguf_array
    r = GGUFReader(source)

    def arr(key):
        return gguf_array(r, key)

    tokens = [bytes(p).decode("utf-8") for p in arr("tokenizer.ggml.tokens")]
    types = [int(p[0]) for p in arr("tokenizer.ggml.token_type")]
    merges = [bytes(p).decode("utf-8").split(" ", 1) for p in arr("tokenizer.ggml.merges")]
    unk = int(r.fields["tokenizer.ggml.unknown_token_id"].contents())
    added = [{"id": i, "content": tokens[i], "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True}
             for i, ty in enumerate(types) if ty == 3]  # control
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": O200K_PATTERN}, "behavior": "Isolated",
                 "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                 "use_regex": False}]},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": False,
                               "trim_offsets": True, "use_regex": False},
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": tokens[unk],
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges}}


def write_o200k_form(source, out):
    """DIR/smollm2-o200k/{tokenizer.json, tokenizer_config.json}; returns their paths by name."""
    d = os.path.join(out, "smollm2-o200k")
    os.makedirs(d, exist_ok=True)
    files = {n: os.path.join(d, n) for n in ("tokenizer.json", "tokenizer_config.json")}
    with open(files["tokenizer.json"], "w", encoding="utf-8") as f:
        json.dump(o200k_tokenizer_json(source), f, ensure_ascii=False)
    with open(files["tokenizer_config.json"], "w", encoding="utf-8") as f:
        json.dump({"add_bos_token": False, "add_eos_token": False, "bos_token": "<|im_start|>",
                   "eos_token": "<|im_end|>", "unk_token": "<|endoftext|>",
                   "tokenizer_class": "GPT2Tokenizer"}, f)
    return {"smollm2-o200k/" + n: p for n, p in files.items()}


def rewrite_may_differ(text):
    """Whether llama.cpp's rewrite of O200K_PATTERN may split text otherwise: its letter runs
    leave combining marks out, and it tells case by ASCII [^a-z] / [^A-Z]."""
    import unicodedata
    return any(unicodedata.category(c).startswith("M") or
               (ord(c) > 127 and unicodedata.category(c) in ("Lu", "Ll", "Lt")) for c in text)


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True, help="the SmolLM2 GGUF (scripts/fetch_models.sh)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--goldens", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    paths = {p: os.path.join(a.out, f"ggml-vocab-smollm2-{p}.gguf") for p in PRES}
    for p, path in paths.items():
        write_vocab(a.source, path, p)
    nobos = {p: os.path.join(a.out, f"ggml-vocab-smollm2-{p}-nobos.gguf") for p in NOBOS_PRES}
    for p, path in nobos.items():
        write_vocab(a.source, path, p, bos_key=False)
    withbos = {p: os.path.join(a.out, f"ggml-vocab-smollm2-{p}-bos.gguf") for p in BOS_PRES}
    for p, path in withbos.items():
        write_vocab(a.source, path, p, add_bos=True)
    hf_files = write_o200k_form(a.source, a.out)
    meta = os.path.join(GOLDEN_DIR, "pre_vocabs.json")
    if a.goldens:
        sys.path.insert(0, HERE)
        from make_spm_goldens import LlamaCppVocab
        from make_tokenizer_goldens import corpus
        texts = list(dict.fromkeys(corpus() + [
            "DeepSeek-Coder: def f(x):\n\treturn x**2  # 平方\n", "한국어 텍스트와 中文 mixed",
            "Ελληνικά και Ꙁ ѳ ℌ ﬁ", "full-width ＡＢＣ！？　。", "trailing spaces   ",
            "  leading and \r\n\r\n newlines", "12345 + 678 = 13023"]))
        # Control characters SmolLM2 has no byte token for: llama.cpp drops them, Hugging Face
        # (and this engine) give the unknown token. Not a pre-tokenizer question: left out.
        texts = [t for t in texts if not any(ord(c) < 32 and c not in "\t\n\r" for c in t)]
        o200k_texts = list(dict.fromkeys(texts + O200K_TEXTS))
        from tokenizers import Regex, Tokenizer, pre_tokenizers
        hf = Tokenizer.from_file(hf_files["smollm2-o200k/tokenizer.json"])
        split = pre_tokenizers.Split(Regex(O200K_PATTERN), "isolated", invert=False)
        with open(os.path.join(GOLDEN_DIR, "hf_smollm2_o200k.jsonl"), "w",
                  encoding="utf-8") as f:
            for t in o200k_texts:
                ids = hf.encode(t, add_special_tokens=True).ids
                pieces = [p for p, _ in split.pre_tokenize_str(t)]
                # ByteLevel(use_regex=false) after the Split cuts nothing more.
                assert len(hf.pre_tokenizer.pre_tokenize_str(t)) == len(pieces), t
                f.write(json.dumps({"text": t, "ids": ids, "pieces": pieces,
                                    "decoded": hf.decode(ids, skip_special_tokens=False),
                                    "decoded_skip": hf.decode(ids, skip_special_tokens=True)},
                                   ensure_ascii=False) + "\n")
        with open(os.path.join(GOLDEN_DIR, "pre_vocabs.jsonl"), "w", encoding="utf-8") as f:
            for p, path in paths.items():
                tok = LlamaCppVocab(path)
                differ = []
                for t in (o200k_texts if p == "gpt-4o" else texts):
                    ids = tok.tokenize(t, True)
                    rec = {"pre": p, "text": t, "ids": ids}
                    if p == "gpt-4o":
                        # llama.cpp runs a rewrite of the pattern; where its ids differ from
                        # Hugging Face's (the pattern as written), Hugging Face's are the golden.
                        want = hf.encode(t, add_special_tokens=True).ids
                        if want != ids:
                            assert rewrite_may_differ(t), t
                            differ.append(t)
                            rec = {"pre": p, "text": t, "ids": want, "llama_cpp_ids": ids}
                    rec["decoded"] = tok.detokenize(rec["ids"])
                    f.write(json.dumps(rec, ensure_ascii=False) + "\n")
                if p == "gpt-4o":
                    print(f"gpt-4o: {len(o200k_texts)} texts, llama.cpp differs from Hugging "
                          f"Face on {len(differ)}: {differ}")
        with open(os.path.join(GOLDEN_DIR, "pre_vocabs_bos.jsonl"), "w", encoding="utf-8") as f:
            for p, path in nobos.items():
                tok = LlamaCppVocab(path)
                for t in BOS_TEXTS:
                    f.write(json.dumps({"pre": p, "text": t, "ids": tok.tokenize(t, True)},
                                       ensure_ascii=False) + "\n")
            for p, path in withbos.items():
                tok = LlamaCppVocab(path)
                for t in BOS_TEXTS:
                    f.write(json.dumps({"pre": p, "add_bos_token": True, "text": t,
                                        "ids": tok.tokenize(t, True)}, ensure_ascii=False) + "\n")
        with open(meta, "w") as f:
            json.dump({"sha256": {p: sha256(path) for p, path in paths.items()},
                       "sha256_nobos": {p: sha256(path) for p, path in nobos.items()},
                       "sha256_bos": {p: sha256(path) for p, path in withbos.items()},
                       "source_sha256": sha256(a.source),
                       "sha256_hf": {n: sha256(path) for n, path in hf_files.items()}},
                      f, indent=1)
            f.write("\n")
    elif os.path.exists(meta):
        m = json.load(open(meta))
        for want, files in ((m["sha256"], paths), (m.get("sha256_nobos", {}), nobos),
                            (m.get("sha256_bos", {}), withbos),
                            (m.get("sha256_hf", {}), hf_files)):
            for p, path in files.items():
                if sha256(path) != want.get(p):
                    sys.exit(f"{path}: sha256 {sha256(path)}, the goldens were made from "
                             f"{want.get(p)}")
    print(a.out)


if __name__ == "__main__":
    main()
