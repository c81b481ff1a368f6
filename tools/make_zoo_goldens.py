#!/usr/bin/env python3
"""llama.cpp goldens for the zoo gate (tests/model/zoo_reference_test.cpp). Offline only:
needs llama-cpp-python (0.3.36) and the gguf package; CI uses the committed results.

  python3 tools/make_zoo_goldens.py mixes     # 1. llama.cpp quantizes SmolLM2 into each mix
  python3 tools/make_zoo_models.py --write-manifest   # 2. our files, sha256 recorded
  python3 tools/make_zoo_goldens.py goldens   # 3. llama.cpp greedy on every file

1. `mixes` requantizes the Q4_1 SmolLM2 (--allow-requantize, no imatrix) into every mix of
   make_zoo_models.MIXES with llama.cpp's own quantizer, keeps those files in
   <cache>/zoo-llamacpp/ and records the type llama.cpp chose for each tensor in
   tests/golden/zoo/smollm2_mixes.json (make_zoo_models.py reuses the mix, not the values).
3. `goldens` runs llama.cpp greedily (as tools/make_llamacpp_goldens.py does) on each file
   of tests/golden/zoo/manifest.json and writes tests/golden/zoo/<file>.json; with
   --llamacpp-files also on the llama.cpp-quantized files of step 1, into
   tests/golden/zoo/llamacpp/<file>.json (those files exist only where step 1 ran).
"""
import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import llama_cpp  # noqa: E402
import gguf  # noqa: E402
import make_llamacpp_goldens as mlg  # noqa: E402
import make_zoo_models as mzm  # noqa: E402

N_STEPS = 32
N_CTX = 512
SMOLLM2_PROMPTS = ("plain", "chat", "code", "long")


def llamacpp_dir():
    return os.path.join(os.path.dirname(mzm.default_out()), "zoo-llamacpp")


def cmd_mixes(args):
    out_dir = llamacpp_dir()
    os.makedirs(out_dir, exist_ok=True)
    mixes = {}
    for mix, (ftype, pure) in mzm.MIXES.items():
        path = os.path.join(out_dir, f"smollm2-{mix.lower()}.gguf")
        if args.force or not os.path.exists(path):
            params = llama_cpp.llama_model_quantize_default_params()
            params.ftype = ftype
            params.allow_requantize = True
            params.pure = pure
            params.nthread = 2
            rc = llama_cpp.llama_model_quantize(args.source.encode(), path.encode(), params)
            if rc != 0:
                print(f"{mix}: llama.cpp refused (rc {rc})")
                continue
        r = gguf.GGUFReader(path)
        types = {t.name: gguf.GGMLQuantizationType(t.tensor_type).name for t in r.tensors}
        counts = {}
        for v in types.values():
            counts[v] = counts.get(v, 0) + 1
        print(f"{mix}: {counts}")
        mixes[mix] = {"ftype": ftype, "pure": pure, "type_counts": dict(sorted(counts.items())),
                      "llamacpp_file_sha256": mlg.sha256_file(path), "types": types}
    doc = {"source": os.path.basename(args.source), "source_sha256": mlg.sha256_file(args.source),
           "reference": {"llama_cpp_python": llama_cpp.__version__, "imatrix": None,
                         "allow_requantize": True},
           "command": "python3 tools/make_zoo_goldens.py mixes", "mixes": mixes}
    os.makedirs(mzm.GOLDEN, exist_ok=True)
    with open(os.path.join(mzm.GOLDEN, "smollm2_mixes.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def tiny_prompts(vocab):
    """Three id prompts (1, 9 and 60 tokens) drawn from a seeded generator."""
    rng = np.random.default_rng(7)
    return [("one", [int(rng.integers(0, vocab - 3))]),
            ("short", [int(x) for x in rng.integers(0, vocab - 3, 9)]),
            ("long", [int(x) for x in rng.integers(0, vocab - 3, 60)])]


def golden_for(path, out_path, extra):
    llm = llama_cpp.Llama(model_path=path, n_ctx=N_CTX, n_batch=N_CTX, n_ubatch=N_CTX,
                          n_threads=2, n_threads_batch=2, seed=0, verbose=False)
    if os.path.basename(path).startswith("tiny-"):
        prompts = tiny_prompts(llm.n_vocab())
    else:
        texts = dict(mlg.PROMPTS)
        prompts = [(n, llm.tokenize(texts[n].encode("utf-8"), add_bos=True, special=True))
                   for n in SMOLLM2_PROMPTS]
    entries = []
    for name, ids in prompts:
        steps = mlg.greedy(llm, ids, N_STEPS)
        gaps = [s["top2_logits"][0] - s["top2_logits"][1] for s in steps]
        print(f"  {name}: {len(ids)} ids, min gap {min(gaps):.3f}, ids {[s['id'] for s in steps][:12]}")
        entries.append({"name": name, "prompt_ids": ids, "steps": steps})
    doc = {"model_file": os.path.basename(path), "model_sha256": mlg.sha256_file(path),
           "model_bytes": os.path.getsize(path),
           "reference": {"llama_cpp_python": llama_cpp.__version__, "n_threads": 2,
                         "n_ctx": N_CTX, "n_batch": N_CTX, "n_ubatch": N_CTX},
           "n_steps": N_STEPS, "ignore_eos": True, **extra,
           "command": "python3 tools/make_zoo_goldens.py goldens", "prompts": entries}
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, ensure_ascii=False)
        f.write("\n")
    del llm


def cmd_goldens(args):
    with open(os.path.join(mzm.GOLDEN, "manifest.json")) as f:
        files = json.load(f)["files"]
    only = [s for s in args.only.split(",") if s]
    for fname, info in files.items():
        if only and fname not in only:
            continue
        path = os.path.join(args.zoo_dir, fname)
        if mlg.sha256_file(path) != info["sha256"]:
            sys.exit(f"{path} is not the file of the manifest: run tools/make_zoo_models.py")
        print(fname)
        golden_for(path, os.path.join(mzm.GOLDEN, fname.replace(".gguf", ".json")),
                   {"quantized_by": "tools/zoo_quants.py"})
    if args.llamacpp_files:
        for fname in sorted(os.listdir(llamacpp_dir())):
            if only and fname not in only:
                continue
            print("llama.cpp-quantized", fname)
            golden_for(os.path.join(llamacpp_dir(), fname),
                       os.path.join(mzm.GOLDEN, "llamacpp", fname.replace(".gguf", ".json")),
                       {"quantized_by": "llama.cpp (tools/make_zoo_goldens.py mixes)"})


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("mixes")
    m.add_argument("--force", action="store_true",
                   help="quantize again even where <cache>/zoo-llamacpp has the file")
    m.add_argument("--source", default=os.path.expanduser(
        "~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf"))
    g = sub.add_parser("goldens")
    g.add_argument("--zoo-dir", default=mzm.default_out())
    g.add_argument("--only", default="")
    g.add_argument("--llamacpp-files", action="store_true")
    args = ap.parse_args()
    {"mixes": cmd_mixes, "goldens": cmd_goldens}[args.cmd](args)


if __name__ == "__main__":
    main()
