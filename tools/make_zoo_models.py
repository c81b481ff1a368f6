#!/usr/bin/env python3
"""GGUF files of every quantization mix and architecture the zoo gate runs.

Owns the test files of tests/model/zoo_reference_test.cpp, written into --out (default
$VLLM_CPP_CACHE/zoo or ~/.cache/vllm-cpp/zoo):

  smollm2-<mix>.gguf   SmolLM2-135M-Instruct requantized from the Q4_1 file of
                       scripts/fetch_models.sh into llama.cpp's mix <mix>: each tensor gets
                       the type llama.cpp's quantizer chose for it (recorded, with llama.cpp,
                       in tests/golden/zoo/smollm2_mixes.json by tools/make_zoo_goldens.py).
  tiny-<arch>.gguf     tiny random Qwen3 / Qwen3-MoE / Qwen2 models (hidden 256, so every
                       K-quant fits) whose tensors rotate through the zoo's block types.

The values come from the deterministic numpy quantizers of tools/zoo_quants.py, not from
llama.cpp (CI cannot build it), so CI writes the very bytes the offline llama.cpp goldens
were made from; the script checks every file against the sha256 in
tests/golden/zoo/manifest.json and fails when they differ (--write-manifest records new
ones, after which the goldens must be remade).

  python3 tools/make_zoo_models.py [--out DIR] [--source SmolLM2-135M-Instruct.Q4_1.gguf]
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zoo_quants  # noqa: E402
from make_tiny_models import normalish  # noqa: E402

import gguf  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(REPO, "tests", "golden", "zoo")

# The mixes: llama.cpp's llama_ftype id and its --pure flag (every tensor in the mix's base
# type where the row length allows; SmolLM2's 576-wide rows fall back to a 32-element type,
# so only the 1536-wide ffn_down keeps a K-type). The pure mixes reach Q2_K and IQ4_XS in a
# real model without the Q5_K tensors llama.cpp's own mixes add. MXFP4_PURE (llama.cpp's
# MXFP4_MOE ftype, --pure) puts every matrix, the embeddings included, in MXFP4: GPT-OSS's
# expert type in a real model.
MIXES = {"Q5_0": (8, False), "Q5_1": (9, False), "Q2_K": (10, False), "Q3_K_S": (11, False),
         "Q3_K_M": (12, False), "Q3_K_L": (13, False), "Q5_K_S": (16, False),
         "Q5_K_M": (17, False), "IQ4_NL": (25, False), "IQ4_XS": (30, False),
         "Q4_K_M": (15, False), "Q6_K": (18, False), "Q8_0": (7, False),
         "Q2_K_PURE": (10, True), "IQ4_NL_PURE": (25, True), "IQ4_XS_PURE": (30, True),
         "MXFP4_PURE": (38, True)}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def add_tensor(w, name, values, type_name):
    """values: float32 in numpy order (rows last-contiguous), stored as type_name."""
    if type_name == "F32":
        w.add_tensor(name, np.ascontiguousarray(values, np.float32))
        return
    q = zoo_quants.quantize(values, type_name)
    w.add_tensor(name, q, raw_dtype=gguf.GGMLQuantizationType(zoo_quants.TYPES[type_name][0]))


def finish(w):
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


# ---------------------------------------------------------------- SmolLM2 mixes


def copy_metadata(r, w, ftype):
    for key, field in r.fields.items():
        if key.startswith("GGUF.") or key in ("general.architecture", "general.file_type"):
            continue
        vtype = field.types[0]
        sub = field.types[1] if vtype == gguf.GGUFValueType.ARRAY else None
        w.add_key_value(key, field.contents(), vtype, sub_type=sub)
    w.add_uint32("general.file_type", ftype)


def write_smollm2_mix(source, mix, types, out):
    r = gguf.GGUFReader(source)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(out, arch)
    copy_metadata(r, w, MIXES[mix][0])
    for t in r.tensors:
        want = types[t.name]
        src_type = gguf.GGMLQuantizationType(t.tensor_type).name
        if want == src_type == "F32":
            values = np.array(t.data, np.float32)
        else:
            values = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        values = values.reshape([int(d) for d in reversed(t.shape)])
        add_tensor(w, t.name, values, want)
    finish(w)


# ---------------------------------------------------------------- tiny models

ZOO_TYPES = ["Q2_K", "Q3_K", "IQ4_XS", "Q5_0", "Q5_1", "IQ4_NL"]

TINY = {
    "qwen3": dict(arch="qwen3", layers=2, tied=True, embd="IQ4_NL", out=None),
    "qwen3moe": dict(arch="qwen3moe", layers=2, tied=False, embd="Q5_0", out="Q2_K",
                     experts=8, used=2, expert_ff=256),
    "qwen2": dict(arch="qwen2", layers=2, tied=False, embd="Q5_1", out="Q3_K"),
}
HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FF = 256, 4, 2, 64, 512
STD_PROJ, STD_OUT, STD_EMBED, STD_NORM, STD_BIAS, STD_ROUTER = 0.12, 0.25, 0.4, 0.1, 0.1, 0.3


def tiny_vocab():
    """256 byte tokens (GPT-2 byte-to-unicode), 676 two-letter merges, 3 control tokens."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    byte_tok = {b: chr(c) for b, c in zip(bs, cs)}
    tokens = [byte_tok[b] for b in range(256)]
    letters = "abcdefghijklmnopqrstuvwxyz"
    merges = [f"{a} {b}" for a in letters for b in letters]
    tokens += [a + b for a in letters for b in letters]
    types = [1] * len(tokens)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens += specials
    types += [3] * len(specials)
    return tokens, types, merges


def write_tiny(name, spec, out):
    arch = spec["arch"]
    tokens, token_types, merges = tiny_vocab()
    V = len(tokens)
    w = gguf.GGUFWriter(out, arch)
    w.add_name(f"tiny-{name}")
    p = arch + "."
    w.add_uint32(p + "context_length", 4096)
    w.add_uint32(p + "embedding_length", HIDDEN)
    w.add_uint32(p + "block_count", spec["layers"])
    w.add_uint32(p + "feed_forward_length", FF)
    w.add_uint32(p + "attention.head_count", HEADS)
    w.add_uint32(p + "attention.head_count_kv", KV_HEADS)
    w.add_uint32(p + "attention.key_length", HEAD_DIM)
    w.add_uint32(p + "attention.value_length", HEAD_DIM)
    w.add_float32(p + "rope.freq_base", 1000000.0)
    w.add_float32(p + "attention.layer_norm_rms_epsilon", 1e-6)
    if "experts" in spec:
        w.add_uint32(p + "expert_count", spec["experts"])
        w.add_uint32(p + "expert_used_count", spec["used"])
        w.add_uint32(p + "expert_feed_forward_length", spec["expert_ff"])
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("qwen2")
    w.add_token_list(tokens)
    w.add_token_types(token_types)
    w.add_token_merges(merges)
    w.add_bos_token_id(V - 3)
    w.add_eos_token_id(V - 1)
    w.add_add_bos_token(False)

    model = f"zoo-{name}"
    rot = iter(range(10**6))

    def zoo_type():
        return ZOO_TYPES[next(rot) % len(ZOO_TYPES)]

    def mat(tname, shape, std, type_name):
        add_tensor(w, tname, normalish(model, tname, shape, std), type_name)

    def vec(tname, n, std, base=0.0):
        w.add_tensor(tname, (base + normalish(model, tname, (n,), std)).astype(np.float32))

    mat("token_embd.weight", (V, HIDDEN), STD_EMBED, spec["embd"])
    for i in range(spec["layers"]):
        b = f"blk.{i}."
        vec(b + "attn_norm.weight", HIDDEN, STD_NORM, 1.0)
        vec(b + "ffn_norm.weight", HIDDEN, STD_NORM, 1.0)
        for proj, rows in (("attn_q", HEADS * HEAD_DIM), ("attn_k", KV_HEADS * HEAD_DIM),
                           ("attn_v", KV_HEADS * HEAD_DIM)):
            mat(b + proj + ".weight", (rows, HIDDEN), STD_PROJ, zoo_type())
            if arch == "qwen2":
                vec(b + proj + ".bias", rows, STD_BIAS)
        mat(b + "attn_output.weight", (HIDDEN, HEADS * HEAD_DIM), STD_OUT, zoo_type())
        if arch in ("qwen3", "qwen3moe"):
            vec(b + "attn_q_norm.weight", HEAD_DIM, STD_NORM, 1.0)
            vec(b + "attn_k_norm.weight", HEAD_DIM, STD_NORM, 1.0)
        if "experts" in spec:
            E, F = spec["experts"], spec["expert_ff"]
            mat(b + "ffn_gate_inp.weight", (E, HIDDEN), STD_ROUTER, "F32")
            mat(b + "ffn_gate_exps.weight", (E, F, HIDDEN), STD_PROJ, zoo_type())
            mat(b + "ffn_up_exps.weight", (E, F, HIDDEN), STD_PROJ, zoo_type())
            mat(b + "ffn_down_exps.weight", (E, HIDDEN, F), STD_OUT, zoo_type())
        else:
            mat(b + "ffn_gate.weight", (FF, HIDDEN), STD_PROJ, zoo_type())
            mat(b + "ffn_up.weight", (FF, HIDDEN), STD_PROJ, zoo_type())
            mat(b + "ffn_down.weight", (HIDDEN, FF), STD_OUT, zoo_type())
    vec("output_norm.weight", HIDDEN, STD_NORM, 1.0)
    if not spec["tied"]:
        mat("output.weight", (V, HIDDEN), STD_EMBED, spec["out"])
    finish(w)


# ---------------------------------------------------------------- main


def default_out():
    cache = os.environ.get("VLLM_CPP_CACHE", os.path.expanduser("~/.cache/vllm-cpp"))
    return os.path.join(cache, "zoo")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=default_out())
    ap.add_argument("--source", default=os.environ.get(
        "VLLM_TEST_GGUF", os.path.expanduser("~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf")))
    ap.add_argument("--only", default="", help="comma-separated file names to write")
    ap.add_argument("--write-manifest", action="store_true",
                    help="record the sha256 of the files written instead of checking them")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(GOLDEN, "smollm2_mixes.json")) as f:
        mixes = json.load(f)["mixes"]
    jobs = {}
    for mix, info in mixes.items():
        jobs[f"smollm2-{mix.lower()}.gguf"] = (
            lambda path, mix=mix, info=info: write_smollm2_mix(args.source, mix, info["types"], path))
    for name, spec in TINY.items():
        jobs[f"tiny-{name}.gguf"] = lambda path, name=name, spec=spec: write_tiny(name, spec, path)
    only = [s for s in args.only.split(",") if s]
    manifest_path = os.path.join(GOLDEN, "manifest.json")
    manifest = {}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)["files"]
    bad = []
    for fname, job in jobs.items():
        if only and fname not in only:
            continue
        path = os.path.join(args.out, fname)
        want = manifest.get(fname, {}).get("sha256")
        if not args.write_manifest and want and os.path.exists(path) and sha256_file(path) == want:
            print(f"{fname}: up to date")
            continue
        tmp = path + ".tmp"
        job(tmp)
        os.replace(tmp, path)
        got = sha256_file(path)
        print(f"{fname}: {os.path.getsize(path)} bytes sha256={got}")
        if args.write_manifest:
            manifest[fname] = {"sha256": got, "bytes": os.path.getsize(path)}
        elif got != want:
            bad.append(fname)
    if args.write_manifest:
        with open(manifest_path, "w") as f:
            json.dump({"command": "python3 tools/make_zoo_models.py --write-manifest",
                       "files": dict(sorted(manifest.items()))}, f, indent=1)
            f.write("\n")
    if bad:
        sys.exit("these files differ from tests/golden/zoo/manifest.json, so the llama.cpp "
                 "goldens do not belong to them: " + ", ".join(bad))


if __name__ == "__main__":
    main()
