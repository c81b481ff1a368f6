#!/usr/bin/env python3
"""Is our numeric error inside the quantization noise? KL divergence vs llama.cpp, per type.

SmolLM2-135M-Instruct (the Q4_1 file of scripts/fetch_models.sh) is requantized by llama.cpp's
own quantizer (llama-cpp-python, --allow-requantize, no imatrix) into an F16 "source" and from
that into each type (default Q4_K_M, Q5_K_M, Q6_K, Q8_0). Over a fixed English text (the
first --tokens tokens of Debian's /usr/share/common-licenses/Apache-2.0), every position's
next-token distribution is taken from
  - llama.cpp on the quantized file (the reference),
  - this engine on the same file (bench/dump_prompt_logprobs: vLLM's prompt_logprobs over the
    whole vocabulary, engine defaults: fp16 KV cache, chunked prefill),
  - llama.cpp on the F16 source.
It reports, per type, the mean KL(llama.cpp file || ours) and llama.cpp's own quantization KL,
KL(llama.cpp F16 || llama.cpp file) (what `llama-perplexity --kl-divergence` measures), plus
top-1 agreement. Exit status 1 when our KL is not smaller than the quantization KL.

  python3 tools/kl_divergence.py [--types Q4_K_M,Q5_K_M,Q6_K,Q8_0] [--json OUT]

Needs llama-cpp-python (PyPI) and a built ./build/dump_prompt_logprobs. Files are cached in
~/.cache/vllm-cpp/kl/.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

import llama_cpp

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(os.environ.get("VLLM_CPP_CACHE", os.path.expanduser("~/.cache/vllm-cpp")))
FTYPES = {"F16": 1, "Q8_0": 7, "Q4_K_M": 15, "Q5_K_M": 17, "Q6_K": 18, "Q4_0": 2, "Q5_0": 8,
          "Q3_K_M": 12, "Q2_K": 10, "Q4_K_S": 14, "Q5_K_S": 16}


def quantize(src, dst, ftype):
    if os.path.exists(dst):
        return
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = FTYPES[ftype]
    params.allow_requantize = True
    params.nthread = 2
    tmp = dst + ".part"
    if llama_cpp.llama_model_quantize(src.encode(), tmp.encode(), params) != 0:
        sys.exit(f"llama.cpp could not quantize {src} to {ftype}")
    os.replace(tmp, dst)


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def llamacpp_logprobs(path, ids):
    """llama.cpp's log-probabilities for tokens 1..n-1 given their prefixes, (n-1) x vocab."""
    llm = llama_cpp.Llama(model_path=path, n_ctx=len(ids) + 16, n_batch=512, n_ubatch=512,
                          n_threads=2, n_threads_batch=2, logits_all=True, verbose=False)
    llm.eval(ids)
    scores = np.array(llm.scores[:len(ids) - 1], dtype=np.float32)
    del llm
    return log_softmax(scores)


def our_logprobs(binary, path, ids):
    with tempfile.TemporaryDirectory() as d:
        ids_path, out_path = os.path.join(d, "ids.i32"), os.path.join(d, "out.f32")
        np.asarray(ids, dtype="<i4").tofile(ids_path)
        subprocess.run([binary, path, ids_path, out_path], check=True)
        rows = np.fromfile(out_path, dtype="<f4")
    return rows.reshape(len(ids) - 1, -1).astype(np.float64)


def mean_kl(ref, other):
    """Mean over positions of KL(ref || other), both log-probabilities."""
    p = np.exp(ref)
    return float(np.mean(np.sum(p * (ref - other), axis=1)))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", default=os.path.join(CACHE, "SmolLM2-135M-Instruct.Q4_1.gguf"))
    ap.add_argument("--types", default="Q4_K_M,Q5_K_M,Q6_K,Q8_0")
    ap.add_argument("--tokens", type=int, default=2000)
    ap.add_argument("--text", default="/usr/share/common-licenses/Apache-2.0")
    ap.add_argument("--bin", default=os.path.join(REPO, "build", "dump_prompt_logprobs"))
    ap.add_argument("--json", help="write the report here too")
    args = ap.parse_args()

    out_dir = os.path.join(CACHE, "kl")
    os.makedirs(out_dir, exist_ok=True)
    f16 = os.path.join(out_dir, "smollm2-f16.gguf")
    quantize(args.source, f16, "F16")

    vocab_llm = llama_cpp.Llama(model_path=f16, vocab_only=True, verbose=False)
    with open(args.text, encoding="utf-8") as f:
        text = " ".join(f.read().split())  # the license's layout whitespace folded
    ids = vocab_llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)[:args.tokens]
    del vocab_llm
    if len(ids) < args.tokens:
        sys.exit(f"the text has only {len(ids)} tokens")

    ref_f16 = llamacpp_logprobs(f16, ids)
    report = {"source": os.path.basename(args.source), "text": args.text, "tokens": len(ids),
              "llama_cpp_python": llama_cpp.__version__, "types": {}}
    ok = True
    print(f"{len(ids)} tokens of {args.text}")
    print(f"{'type':8} {'KL(llama.cpp || ours)':>22} {'KL(f16 || llama.cpp)':>22} "
          f"{'top-1 ours=llama':>17} {'top-1 f16=llama':>16}")
    for t in args.types.split(","):
        path = os.path.join(out_dir, f"smollm2-{t.lower()}.gguf")
        quantize(f16, path, t)
        ref = llamacpp_logprobs(path, ids)
        ours = our_logprobs(args.bin, path, ids)
        kl_ours, kl_quant = mean_kl(ref, ours), mean_kl(ref_f16, ref)
        top_ours = float(np.mean(ref.argmax(1) == ours.argmax(1)))
        top_quant = float(np.mean(ref_f16.argmax(1) == ref.argmax(1)))
        report["types"][t] = {"kl_ours_vs_llamacpp": kl_ours, "kl_llamacpp_f16_vs_type": kl_quant,
                              "ratio": kl_ours / kl_quant if kl_quant > 0 else None,
                              "top1_agree_ours_llamacpp": top_ours,
                              "top1_agree_f16_llamacpp": top_quant}
        ok &= kl_ours < kl_quant
        print(f"{t:8} {kl_ours:22.6f} {kl_quant:22.6f} {top_ours:17.4f} {top_quant:16.4f}")
    print("our error is inside the quantization noise for every type" if ok
          else "FAIL: our KL is not below the quantization KL for some type")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
