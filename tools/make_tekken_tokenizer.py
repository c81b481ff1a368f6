#!/usr/bin/env python3
"""Writes Mistral's Tekken vocabulary (tekken.json, as mistral_common ships it: Mistral Nemo,
Mistral Small 3, Ministral, Devstral) in the two forms users download:

  <out>/tekken/tokenizer.json      Hugging Face's form, laid out as transformers'
  <out>/tekken/tokenizer_config.json   MistralConverter writes it: a byte-level BPE with
                                   ignore_merges, Split(<tekken pattern>, isolated) then
                                   ByteLevel(use_regex=false), the 1000 control tokens as
                                   special added tokens, <s> put first by the post-processor
  <out>/ggml-vocab-tekken.gguf     llama.cpp's form (vocabulary only): tokenizer.ggml.model
                                   "gpt2", pre "tekken", tokens, token types (control for the
                                   1000 specials), merges, BOS/EOS/UNK and add_bos_token

Ids: the 1000 special tokens first (<unk> <s> </s> [INST] ... then <SPECIAL_n>), then the BPE
pieces by rank, cut at default_vocab_size as mistral_common cuts them. The merges are every
split of a piece into two pieces, ordered by the merged piece's rank, then by the two parts'
ranks (a BPE that merges the lowest-ranked pair first is tiktoken's algorithm). Deterministic;
needs only `gguf`.

  python3 tools/make_tekken_tokenizer.py --tekken "$CACHE/vocab/tekken_240718.json" --out DIR
"""
import argparse
import base64
import hashlib
import json
import os

# mistral_common's names for the first special tokens of a tekken.json without a
# "special_tokens" list (the 2024 files); the rest are <SPECIAL_n>.
FIRST_SPECIALS = ["<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]",
                  "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]",
                  "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
                  "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]"]


def byte_chars():
    """GPT-2's printable stand-in for each byte (the byte-level alphabet)."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1)) + \
        list(range(0xAE, 0xFF + 1))
    out, extra = {}, 0
    for b in range(256):
        if b in keep:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def read_tekken(path):
    d = json.load(open(path, encoding="utf-8"))
    cfg = d["config"]
    if "special_tokens" in d:
        specials = [s["token_str"] for s in sorted(d["special_tokens"], key=lambda s: s["rank"])]
    else:
        n = cfg["default_num_special_tokens"]
        specials = FIRST_SPECIALS + [f"<SPECIAL_{i}>" for i in range(len(FIRST_SPECIALS), n)]
    n_inner = cfg["default_vocab_size"] - len(specials)
    pieces = [base64.b64decode(v["token_bytes"]) for v in d["vocab"][:n_inner]]
    return cfg["pattern"], specials, pieces


def vocab_and_merges(pieces):
    bc = byte_chars()
    text = ["".join(bc[b] for b in p) for p in pieces]
    rank = {p: r for r, p in enumerate(pieces)}
    merges = []
    for r, p in enumerate(pieces):
        for k in range(1, len(p)):
            left, right = rank.get(p[:k]), rank.get(p[k:])
            if left is not None and right is not None:
                merges.append((r, left, right))
    merges.sort()
    return text, [[text[m[1]], text[m[2]]] for m in merges]


def tokenizer_json(pattern, specials, text, merges):
    n = len(specials)
    vocab = {t: i for i, t in enumerate(specials)}
    vocab.update({t: n + r for r, t in enumerate(text)})
    added = [{"id": i, "content": s, "single_word": False, "lstrip": False, "rstrip": False,
              "normalized": False, "special": True} for i, s in enumerate(specials)]
    post = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [1], "tokens": ["<s>"]}}}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated",
                 "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
                 "use_regex": False}]},
            "post_processor": post,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                        "use_regex": True},
            "model": {"type": "BPE", "dropout": None, "unk_token": None,
                      "continuing_subword_prefix": None, "end_of_word_suffix": None,
                      "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
                      "vocab": vocab, "merges": merges}}


def write_gguf(path, specials, text, merges):
    import gguf
    w = gguf.GGUFWriter(path, "llama")
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("tekken")
    w.add_token_list(specials + text)
    w.add_token_types([gguf.TokenType.CONTROL] * len(specials) +
                      [gguf.TokenType.NORMAL] * len(text))
    w.add_token_merges([f"{a} {b}" for a, b in merges])
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tekken", required=True, help="tekken.json (mistral_common's data)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-check", action="store_true",
                    help="do not compare with the sha256 the goldens were made from")
    a = ap.parse_args()
    pattern, specials, pieces = read_tekken(a.tekken)
    text, merges = vocab_and_merges(pieces)
    d = os.path.join(a.out, "tekken")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer_json(pattern, specials, text, merges), f, ensure_ascii=False)
    with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
                   "eos_token": "</s>", "unk_token": "<unk>",
                   "tokenizer_class": "PreTrainedTokenizerFast"}, f)
    gguf_path = os.path.join(a.out, "ggml-vocab-tekken.gguf")
    write_gguf(gguf_path, specials, text, merges)
    # The files the committed goldens were made from (tools/make_tekken_goldens.py) must come
    # out byte for byte.
    meta = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "tests/golden/tokenizer/tekken.json")
    if os.path.exists(meta) and not a.no_check:
        want = json.load(open(meta))["sha256"]
        for name, sha in want.items():
            path = os.path.join(a.out, name)
            got = hashlib.sha256(open(path, "rb").read()).hexdigest()
            if got != sha:
                raise SystemExit(f"{path}: sha256 {got}, the goldens were made from {sha}")
    print(a.out)


if __name__ == "__main__":
    main()
