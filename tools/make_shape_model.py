#!/usr/bin/env python3
"""Make a quantized shape-only GGUF (real model shapes, random weights) for speed runs.

Owns the step from the shared f16 generator (../shared/tools/make_shape_gguf.py) to a
quantized file: it runs that script into a temporary f16 GGUF beside the output, then
quantizes with llama.cpp's own quantizer (llama_cpp.llama_model_quantize), so the result
is exactly what llama-quantize would write and loads in llama.cpp for peer benchmarks.

  python3 tools/make_shape_model.py --shape qwen3-0.6b --type q8_0 \
      --out ~/.cache/vllm-cpp/qwen3-0.6b-shape.Q8_0.gguf

Needs gguf + numpy (for the f16 file) and llama-cpp-python (for quantizing; not in CI).
"""
import argparse
import os
import subprocess
import sys
import time

# llama_ftype values from llama.h (stable ABI numbers; checked against llama_cpp's
# LLAMA_FTYPE_MOSTLY_* constants before quantizing).
FTYPES = {
    "f16": 1, "q4_0": 2, "q4_1": 3, "q8_0": 7, "q5_0": 8, "q5_1": 9, "q2_k": 10,
    "q3_k_s": 11, "q3_k_m": 12, "q3_k_l": 13, "q4_k_s": 14, "q4_k_m": 15, "q5_k_s": 16,
    "q5_k_m": 17, "q6_k": 18, "iq4_nl": 25, "iq4_xs": 30, "bf16": 32,
}


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shape", required=True, help="qwen3-0.6b, qwen3-1.7b or qwen3-4b")
    ap.add_argument("--out", required=True, help="output .gguf")
    ap.add_argument("--type", default="q8_0", choices=sorted(FTYPES))
    ap.add_argument("--shape-script", default=os.path.join(repo, "..", "shared", "tools", "make_shape_gguf.py"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--keep-f16", action="store_true", help="keep the intermediate f16 file")
    args = ap.parse_args()

    out = os.path.abspath(os.path.expanduser(args.out))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    f16 = out + ".f16.tmp" if args.type != "f16" else out
    t0 = time.time()
    subprocess.run([sys.executable, args.shape_script, args.shape, f16], check=True)
    print(f"f16 written in {time.time() - t0:.0f} s ({os.path.getsize(f16) / 2**20:.0f} MiB)")
    if args.type == "f16":
        return
    import llama_cpp

    known = getattr(llama_cpp, "LLAMA_FTYPE_MOSTLY_" + args.type.upper(), None)
    if known is not None and known != FTYPES[args.type]:
        sys.exit(f"llama_cpp says {args.type} is ftype {known}, the table says {FTYPES[args.type]}")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = FTYPES[args.type]
    params.nthread = args.threads
    t0 = time.time()
    tmp = out + ".tmp"
    rc = llama_cpp.llama_model_quantize(f16.encode(), tmp.encode(), params)
    if rc != 0:
        sys.exit(f"llama_model_quantize failed with {rc}")
    os.replace(tmp, out)  # never leave a half-written file under the final name
    if not args.keep_f16:
        os.remove(f16)
    print(f"{args.type} written in {time.time() - t0:.0f} s: {out} ({os.path.getsize(out) / 2**20:.0f} MiB)")


if __name__ == "__main__":
    main()
