#!/usr/bin/env python3
"""Writes Hugging Face tokenizer.json files of the SentencePiece-style kind (BPE with
byte_fallback) for a GGUF "llama" vocabulary, as Hugging Face's LlamaConverter lays them out:

  <out>/llama-legacy/     Llama 2's form: normalizer Sequence[Prepend("▁"), Replace(" ", "▁")],
                          no pre-tokenizer, decoder Replace/ByteFallback/Fuse/Strip
  <out>/llama-metaspace/  the newer form (Mistral v0.3, transformers >= 4.40 with legacy=False):
                          no normalizer, Metaspace(prepend_scheme="first", split=False), the
                          same decoder
  <out>/llama-gemma/      Gemma's form (GemmaConverter): normalizer Replace(" ", "▁") alone, no
                          space put first, pre-tokenizer Split(" ", merged_with_previous),
                          decoder Replace/ByteFallback/Fuse (no Strip)

each with a tokenizer_config.json naming <s> / </s>, and
  <out>/ggml-vocab-llama-spm-noprefix.gguf  the GGUF vocabulary with
                          tokenizer.ggml.add_space_prefix = false (Gemma's GGUF rule) The merges are every split of a piece into
two pieces, ordered by the merged piece's score (higher first), then by the two parts' ids, as
Hugging Face's SentencePieceExtractor orders them. Deterministic; needs only `gguf`.

  python3 tools/make_spm_tokenizer_json.py --vocab "$(scripts/fetch_vocabs.sh)" --out DIR
"""
import argparse
import hashlib
import json
import os

SPACE = "\u2581"


def gguf_array(r, key):
    """The elements (raw parts) of array field `key` of a gguf.GGUFReader."""
    f = r.fields[key]
    return [f.parts[i] for i in f.data]


def read_vocab(path):
    from gguf import GGUFReader
    r = GGUFReader(path)

    def arr(key):
        return gguf_array(r, key)

    tokens = [bytes(p).decode("utf-8") for p in arr("tokenizer.ggml.tokens")]
    scores = [float(p[0]) for p in arr("tokenizer.ggml.scores")]
    types = [int(p[0]) for p in arr("tokenizer.ggml.token_type")]
    return tokens, scores, types


def merges_of(tokens, scores):
    ids = {t: i for i, t in enumerate(tokens)}
    out = []
    for piece, i in ids.items():
        for k in range(1, len(piece)):
            left, right = piece[:k], piece[k:]
            if left in ids and right in ids:
                out.append((-scores[i], ids[left], ids[right], left, right))
    out.sort()
    return [[m[3], m[4]] for m in out]


def tokenizer_json(tokens, scores, types, form):
    specials = [i for i, t in enumerate(types) if t in (2, 3)]  # unknown, control
    added = [{"id": i, "content": tokens[i], "single_word": False, "lstrip": False,
              "rstrip": False, "normalized": False, "special": True} for i in specials]
    model = {"type": "BPE", "dropout": None, "unk_token": "<unk>",
             "continuing_subword_prefix": None, "end_of_word_suffix": None, "fuse_unk": True,
             "byte_fallback": True, "ignore_merges": False,
             "vocab": {t: i for i, t in enumerate(tokens)}, "merges": merges_of(tokens, scores)}
    post = {"type": "TemplateProcessing",
            "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                       {"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"SpecialToken": {"id": "<s>", "type_id": 0}},
                     {"Sequence": {"id": "A", "type_id": 0}},
                     {"SpecialToken": {"id": "<s>", "type_id": 1}},
                     {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {"<s>": {"id": "<s>", "ids": [tokens.index("<s>")],
                                       "tokens": ["<s>"]}}}
    decoder = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
        {"type": "ByteFallback"}, {"type": "Fuse"},
        {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    if form == "gemma":
        normalizer = {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}
        pre = {"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
               "invert": False}
        decoder = dict(decoder, decoders=decoder["decoders"][:3])
    elif form == "legacy":
        normalizer = {"type": "Sequence", "normalizers": [
            {"type": "Prepend", "prepend": SPACE},
            {"type": "Replace", "pattern": {"String": " "}, "content": SPACE}]}
        pre = None
    else:
        normalizer = None
        pre = {"type": "Metaspace", "replacement": SPACE, "prepend_scheme": "first",
               "split": False}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": post,
            "decoder": decoder, "model": model}


def copy_gguf_keys(source, out, arch, keep, extra):
    """A tensor-less GGUF: the keys of `source` that keep(key) accepts, in order, then
    extra(writer) adds more."""
    from gguf import GGUFReader, GGUFValueType, GGUFWriter
    r = GGUFReader(source)
    w = GGUFWriter(out, arch or r.fields["general.architecture"].contents())
    for k, f in r.fields.items():
        if k.startswith("GGUF.") or k == "general.architecture" or not keep(k):
            continue
        sub = f.types[1] if f.types[0] == GGUFValueType.ARRAY else None
        w.add_key_value(k, f.contents(), f.types[0], sub)
    extra(w)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def write_noprefix(vocab, out):
    """The GGUF vocabulary again, every key copied, with tokenizer.ggml.add_space_prefix false."""
    copy_gguf_keys(vocab, out, None, lambda k: True,
                   lambda w: w.add_bool("tokenizer.ggml.add_space_prefix", False))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vocab", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-check", action="store_true",
                    help="do not compare with the sha256 the goldens were made from")
    a = ap.parse_args()
    tokens, scores, types = read_vocab(a.vocab)
    for form in ("legacy", "metaspace", "gemma"):
        d = os.path.join(a.out, "llama-" + form)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "tokenizer.json"), "w", encoding="utf-8") as f:
            json.dump(tokenizer_json(tokens, scores, types, form), f, ensure_ascii=False)
        with open(os.path.join(d, "tokenizer_config.json"), "w", encoding="utf-8") as f:
            json.dump({"add_bos_token": True, "add_eos_token": False, "bos_token": "<s>",
                       "eos_token": "</s>", "unk_token": "<unk>",
                       "tokenizer_class": "LlamaTokenizer"}, f)
    write_noprefix(a.vocab, os.path.join(a.out, "ggml-vocab-llama-spm-noprefix.gguf"))
    # The files the committed goldens were made from (tools/make_spm_goldens.py) must come out
    # byte for byte.
    meta = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "tests/golden/tokenizer/hf_llama_spm.json")
    if os.path.exists(meta) and not a.no_check:
        want = json.load(open(meta))["tokenizer_json_sha256"]
        for form, sha in want.items():
            path = os.path.join(a.out, "llama-" + form, "tokenizer.json")
            got = hashlib.sha256(open(path, "rb").read()).hexdigest()
            if got != sha:
                raise SystemExit(f"{path}: sha256 {got}, the goldens were made from {sha}")
        path = os.path.join(a.out, "ggml-vocab-llama-spm-noprefix.gguf")
        got = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if got != json.load(open(meta))["noprefix_gguf_sha256"]:
            raise SystemExit(f"{path}: sha256 {got} is not the one the goldens were made from")
    print(a.out)


if __name__ == "__main__":
    main()
