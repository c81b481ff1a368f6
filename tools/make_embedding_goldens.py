#!/usr/bin/env python3
"""Sentence Transformers goldens for the tiny embedding models of make_tiny_embedding.py.

Owns tests/golden/embed/<variant>.json: per prompt, the token ids the Sentence Transformers
tokenizer produced (special tokens included) and the float32 embedding that
`SentenceTransformer(folder, device="cpu").encode([text], batch_size=1)` returns (fp32, eager
attention; batch 1, so no padding); for qwen3_last also vLLM's Matryoshka truncation
(`dimensions` d: the first d values of the pooled, un-normalized vector, then L2-normalized) at
d = hidden_size / 2 and 8. Needs torch, transformers and sentence-transformers (never present in
CI: the C++ tests read only the committed files).

  python3 tools/make_tiny_models.py --out DIR
  python3 tools/make_tiny_embedding.py --models DIR --out DIR/embed
  python3 tools/make_embedding_goldens.py --models DIR --embed DIR/embed

Checks before anything is written (the script fails loudly otherwise):
  - Sentence Transformers loads each folder as Transformer -> Pooling [-> Normalize] with the
    variant's pooling mode, the model in float32 with eager attention, max_seq_length 512;
  - the ids of every prompt are the same from SentenceTransformer.preprocess, from
    transformers.AutoTokenizer on the folder and from tokenizers.Tokenizer on its tokenizer.json
    (the library the C++ tokenizer mirrors); for qwen3_last they end with one <|endoftext|>
    (151643) and the ids before it are the base model's tokenizer's ids;
  - every embedding equals an independent computation: transformers.AutoModel (the base model's
    folder, no lm head, fp32, eager, every weight loaded) last_hidden_state pooled by hand (last /
    first / mean over the tokens, in float64) and L2-normalized when the variant normalizes, to
    within 1e-5 relative (max |diff| <= 1e-5 * max |reference|);
  - with Normalize every embedding has unit norm (1e-5); without it (qwen2_mean) none has;
  - the three poolings differ (max |diff| > 1e-3 relative) for every prompt of more than one
    token, on the variant's own weights and ids (proof that the variant's pooling matters), and
    no two prompts of a variant have the same embedding;
  - the truncated embeddings have unit norm and equal the re-normalized first d values of the
    Sentence Transformers embedding (to 1e-5), while Sentence Transformers' own truncate_dim
    (truncation after its Normalize) gives a vector of norm below 0.999: the two semantics differ.

The format is described in tests/golden/embed/README.md.
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch
import transformers
from tokenizers import Tokenizer
from transformers import AutoModel, AutoTokenizer

import sentence_transformers
from sentence_transformers import SentenceTransformer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_embedding as te  # noqa: E402
from make_hf_goldens import sha256_file  # noqa: E402

REL_TOL = 1e-5
NORM_TOL = 1e-5
MIN_POOLING_EFFECT = 1e-3
EOS_ID = 151643
ST_MODE = {"LAST": "lasttoken", "CLS": "cls", "MEAN": "mean"}

LONG = ("At dawn, before the city wakes, the river carries a thin mist past the old stone bridges. "
        "Fishermen prepare their nets while bakers pull the first loaves from wood-fired ovens, and "
        "the smell of fresh bread drifts along the narrow streets. By seven o'clock, trams begin to "
        "rattle across the squares, cyclists weave between delivery vans, and students hurry toward "
        "the university with coffee in hand. Historians say the town was founded in 1241 as a "
        "trading post, where merchants exchanged salt, amber, and wool for silver coins minted in "
        "distant kingdoms. Today, visitors come for the museums, the quiet courtyards, and the long "
        "evenings when lanterns are lit along the embankment and musicians play until midnight.")

# Distinct first tokens (first-token pooling on a causal model sees only the first token).
PROMPTS = [
    "The quick brown fox jumps over the lazy dog.",
    LONG,
    "Grüße aus Köln! 東京の天気は晴れです。Привет, мир — naïve café 🚀✨",
    "hello",  # a single token: the three poolings coincide without the appended EOS
    "Instruct: Given a web search query, retrieve relevant passages that answer the query\n"
    "Query: what is the capital of France?\n",
    "def mean(xs):\n\treturn sum(xs) / len(xs)\n",
]

# variant -> [(prompt index, dimensions)]; hidden_size / 2 is filled in from the config.
TRUNCATED = {"qwen3_last": [(0, "half"), (1, 8)]}


def fail(msg):
    sys.exit(f"make_embedding_goldens.py: FAILED: {msg}")



def rel_diff(a, ref):
    a = np.asarray(a, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    return float(np.max(np.abs(a - ref)) / np.max(np.abs(ref)))


def pool(h, mode):
    """h: [tokens, hidden] float64. The pooled vector of one sequence."""
    if mode == "LAST":
        return h[-1]
    if mode == "CLS":
        return h[0]
    if mode == "MEAN":
        return h.mean(axis=0)
    raise ValueError(mode)


def l2(v):
    return v / np.linalg.norm(v)


def floats(v):
    """float32 values as Python floats (exact: repr round-trips to the same float32)."""
    return [float(x) for x in np.asarray(v, dtype=np.float32)]


def dump(obj, level=0):
    """indent 1 like the other goldens, but lists of numbers on one line."""
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(obj, dict):
        if not obj:
            return "{}"
        items = [f"{inner}{json.dumps(k, ensure_ascii=False)}: {dump(v, level + 1)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(obj, list):
        if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in obj):
            return "[" + ", ".join(json.dumps(x) for x in obj) + "]"
        return "[\n" + ",\n".join(inner + dump(x, level + 1) for x in obj) + "\n" + pad + "]"
    return json.dumps(obj, ensure_ascii=False)


def load_st(folder, pooling, normalize):
    st = SentenceTransformer(folder, device="cpu",
                             model_kwargs={"dtype": torch.float32, "attn_implementation": "eager"})
    names = [type(m).__name__ for m in st]
    want = ["Transformer", "Pooling"] + (["Normalize"] if normalize else [])
    if names != want:
        fail(f"{folder}: modules {names}, expected {want}")
    if st[1].pooling_mode != ST_MODE[pooling]:
        fail(f"{folder}: Sentence Transformers' pooling mode {st[1].pooling_mode!r}, "
             f"expected {ST_MODE[pooling]!r}")
    model = st[0].auto_model
    if any(p.dtype != torch.float32 for p in model.parameters()):
        fail(f"{folder}: Sentence Transformers' model is not float32")
    if model.config._attn_implementation != "eager":
        fail(f"{folder}: attention {model.config._attn_implementation!r}, not eager")
    if st.max_seq_length != te.MAX_SEQ_LENGTH:
        fail(f"{folder}: max_seq_length {st.max_seq_length}, expected {te.MAX_SEQ_LENGTH}")
    return st


def load_reference(base_dir):
    model, info = AutoModel.from_pretrained(base_dir, dtype=torch.float32, attn_implementation="eager",
                                            output_loading_info=True)
    if info["missing_keys"] or info.get("mismatched_keys"):
        fail(f"{base_dir}: AutoModel missing {info['missing_keys']} mismatched {info.get('mismatched_keys')}")
    if any(p.dtype != torch.float32 for p in model.parameters()):
        fail(f"{base_dir}: AutoModel is not float32")
    return model.eval()


def hidden_states(model, ids):
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids], dtype=torch.long), use_cache=False)
    return out.last_hidden_state[0].to(torch.float64).numpy()


def golden(name, models, embed):
    base_name, pooling, normalize, append_eos, _bare = te.VARIANTS[name]
    folder = os.path.join(embed, name)
    base_dir = os.path.join(models, base_name)
    with open(os.path.join(folder, "config.json"), encoding="utf-8") as f:
        hidden = json.load(f)["hidden_size"]
    st = load_st(folder, pooling, normalize)
    auto_tok = AutoTokenizer.from_pretrained(folder)
    raw_tok = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
    base_tok = Tokenizer.from_file(os.path.join(base_dir, "tokenizer.json"))
    ref_model = load_reference(base_dir)

    st_emb = st.encode(PROMPTS, convert_to_numpy=True, batch_size=1)
    if st_emb.dtype != np.float32 or st_emb.shape != (len(PROMPTS), hidden):
        fail(f"{name}: encode gave {st_emb.dtype} {st_emb.shape}")

    prompts, pooled = [], []
    for k, text in enumerate(PROMPTS):
        ids = st.preprocess([text])["input_ids"][0].tolist()
        if ids != auto_tok(text)["input_ids"] or ids != raw_tok.encode(text).ids:
            fail(f"{name} prompt {k}: Sentence Transformers / AutoTokenizer / tokenizers ids differ")
        if append_eos:
            if ids[-1] != EOS_ID or ids[-2] == EOS_ID:
                fail(f"{name} prompt {k}: ids do not end with one <|endoftext|>: {ids[-4:]}")
            if ids[:-1] != base_tok.encode(text).ids:
                fail(f"{name} prompt {k}: the ids before <|endoftext|> are not the base tokenizer's")
        if len(ids) > te.MAX_SEQ_LENGTH:
            fail(f"{name} prompt {k}: {len(ids)} tokens, over max_seq_length")

        h = hidden_states(ref_model, ids)
        by_mode = {m: pool(h, m) for m in ("LAST", "CLS", "MEAN")}
        if normalize:
            by_mode = {m: l2(v) for m, v in by_mode.items()}
        ref = by_mode[pooling]
        d = rel_diff(st_emb[k], ref)
        if d > REL_TOL:
            fail(f"{name} prompt {k}: Sentence Transformers vs AutoModel pooled by hand: {d:.3g} relative")
        norm = float(np.linalg.norm(st_emb[k].astype(np.float64)))
        if normalize and abs(norm - 1.0) > NORM_TOL:
            fail(f"{name} prompt {k}: norm {norm}, expected 1")
        if not normalize and abs(norm - 1.0) < 1e-2:
            fail(f"{name} prompt {k}: norm {norm} is about 1 without a Normalize module")
        if len(ids) > 1:
            modes = list(by_mode)
            for i in range(len(modes)):
                for j in range(i + 1, len(modes)):
                    e = rel_diff(by_mode[modes[i]], by_mode[modes[j]])
                    if e <= MIN_POOLING_EFFECT:
                        fail(f"{name} prompt {k}: {modes[i]} and {modes[j]} pooling agree ({e:.3g})")
        pooled.append(pool(h, pooling))
        prompts.append({"text": text, "ids": ids, "embedding": floats(st_emb[k]), "_diff": d, "_norm": norm})
    for i in range(len(PROMPTS)):
        for j in range(i + 1, len(PROMPTS)):
            if np.array_equal(st_emb[i], st_emb[j]):
                fail(f"{name}: prompts {i} and {j} have the same embedding")

    truncated = []
    for k, dims in TRUNCATED.get(name, []):
        dims = hidden // 2 if dims == "half" else dims
        if not 0 < dims < hidden:
            fail(f"{name}: dimensions {dims} out of range")
        vec = l2(pooled[k][:dims]).astype(np.float32)  # vLLM: truncate the pooled vector, then normalize
        if abs(float(np.linalg.norm(vec.astype(np.float64))) - 1.0) > NORM_TOL:
            fail(f"{name} truncated {dims}: not unit norm")
        e = rel_diff(vec, l2(st_emb[k].astype(np.float64)[:dims]))
        if e > REL_TOL:
            fail(f"{name} truncated {dims}: differs from the re-normalized ST prefix ({e:.3g})")
        st_trunc = st.encode([PROMPTS[k]], convert_to_numpy=True, batch_size=1, truncate_dim=dims)[0]
        st_norm = float(np.linalg.norm(st_trunc.astype(np.float64)))
        if st_trunc.shape != (dims,) or not st_norm < 0.999:
            fail(f"{name} truncated {dims}: ST's truncate_dim gave shape {st_trunc.shape} norm {st_norm}")
        truncated.append({"prompt": k, "dimensions": dims, "embedding": floats(vec),
                          "_st_truncate_dim_norm": st_norm})

    weights = sorted(f for f in os.listdir(folder) if f.endswith(".safetensors"))
    sha = {f: sha256_file(os.path.join(folder, f)) for f in weights + ["tokenizer.json"]}
    return {
        "variant": name,
        "base_model": base_name,
        "pooling": pooling,
        "normalize": normalize,
        "hidden_size": hidden,
        "sha256": sha,
        "prompts": prompts,
        "truncated": truncated,
    }


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by make_tiny_models.py --out")
    ap.add_argument("--embed", required=True, help="folder written by make_tiny_embedding.py --out")
    ap.add_argument("--out", default=os.path.join(repo, "tests", "golden", "embed"))
    ap.add_argument("--variants", default=",".join(te.VARIANTS), help="comma-separated subset")
    args = ap.parse_args()
    transformers.logging.set_verbosity_error()  # the lm_head.weight "UNEXPECTED" load report:
    transformers.logging.disable_progress_bar()  # load_reference checks missing keys itself
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"sentence-transformers {sentence_transformers.__version__}")
    results = {}
    for name in args.variants.split(","):
        if name not in te.VARIANTS:
            fail(f"unknown variant {name!r}")
        results[name] = golden(name, args.models, args.embed)
    # Every check passed for every variant: only now write.
    os.makedirs(args.out, exist_ok=True)
    for name, g in results.items():
        for k, p in enumerate(g["prompts"]):
            d, norm = p.pop("_diff"), p.pop("_norm")
            print(f"{name} prompt {k}: {len(p['ids'])} ids, norm {norm:.7f}, "
                  f"ST vs AutoModel {d:.2e}")
        for t in g["truncated"]:
            print(f"{name} truncated prompt {t['prompt']} d={t['dimensions']}: "
                  f"ST truncate_dim norm {t.pop('_st_truncate_dim_norm'):.4f} (vLLM's: 1)")
        path = os.path.join(args.out, f"{name}.json")
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(dump(g) + "\n")
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
