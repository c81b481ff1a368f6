#!/usr/bin/env python3
"""llama.cpp peer numbers at batch 1, in the shape of `vllm bench latency --json`.

Owns the peer side of our speed comparisons: prefill tokens/s for one input_len prompt
and decode tokens/s over output_len greedy tokens, through llama-cpp-python's low-level
API (llama_decode on a single-sequence batch, argmax in numpy), so Python adds only
microseconds per step. One warm-up run, then the median of --runs.

  python3 tools/bench_llamacpp.py --model ~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf \
      --input-len 128 --output-len 128 --json

Definitions (ours must use the same): prefill = one llama_decode of all input_len prompt
tokens into an empty KV cache; decode = output_len single-token decode steps after it,
each feeding the argmax of the previous logits (EOS ignored).
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import numpy as np
import llama_cpp

FILLER = (
    "The history of computing is a story of abstraction layered on abstraction. Early machines "
    "were programmed by rewiring panels, then by loading numbers into memory; compilers, "
    "operating systems and libraries each hid the layer below. "
)


# Module-level so ctypes keeps the callback alive for as long as llama.cpp may call it.
_QUIET = llama_cpp.llama_log_callback(lambda level, text, user_data: None)


def prompt_ids(model, vocab, n):
    text = FILLER * (1 + n // 16)
    buf = (llama_cpp.llama_token * (len(text) + 16))()
    raw = text.encode()
    k = llama_cpp.llama_tokenize(vocab, raw, len(raw), buf, len(buf), False, False)
    if k < n:
        sys.exit("filler text too short")
    return list(buf[:n])


def decode(ctx, ids):
    arr = (llama_cpp.llama_token * len(ids))(*ids)
    rc = llama_cpp.llama_decode(ctx, llama_cpp.llama_batch_get_one(arr, len(ids)))
    if rc != 0:
        raise RuntimeError(f"llama_decode returned {rc}")


def argmax_last(ctx, n_vocab):
    ptr = llama_cpp.llama_get_logits_ith(ctx, -1)
    return int(np.argmax(np.ctypeslib.as_array(ptr, shape=(n_vocab,))))


def one_run(ctx, n_vocab, ids, output_len):
    llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(ctx), True)
    t0 = time.perf_counter()
    decode(ctx, ids)
    t1 = time.perf_counter()
    tok = argmax_last(ctx, n_vocab)
    for _ in range(output_len):
        decode(ctx, [tok])
        tok = argmax_last(ctx, n_vocab)
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", action="store_true", help="print one JSON object only")
    args = ap.parse_args()

    load = os.getloadavg()[0]
    if load > 0.5 * os.cpu_count():
        # llama.cpp's OpenMP threads spin at barriers; with other work on the cores a
        # 2-thread run can be 10-50x slower than on an idle machine.
        print(f"warning: load average {load:.1f} on {os.cpu_count()} CPUs; numbers will be low",
              file=sys.stderr)
    t_load = time.perf_counter()
    llama_cpp.llama_backend_init()
    llama_cpp.llama_log_set(_QUIET, ctypes.c_void_p(0))
    mp = llama_cpp.llama_model_default_params()
    model = llama_cpp.llama_model_load_from_file(os.path.expanduser(args.model).encode(), mp)
    if not model:
        sys.exit(f"cannot load {args.model}")
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx = args.input_len + args.output_len + 16
    cp.n_batch = cp.n_ubatch = max(args.input_len, 512)
    cp.n_threads = cp.n_threads_batch = args.threads
    ctx = llama_cpp.llama_init_from_model(model, cp)
    # What llama-server does before it answers /health (less its one-token warm-up), without
    # the Python interpreter's start.
    load_s = time.perf_counter() - t_load
    ids = prompt_ids(model, vocab, args.input_len)

    one_run(ctx, n_vocab, ids, args.output_len)  # warm-up: page in weights, size buffers
    runs = [one_run(ctx, n_vocab, ids, args.output_len) for _ in range(args.runs)]
    pre = statistics.median(r[0] for r in runs)
    dec = statistics.median(r[1] for r in runs)
    out = {
        "prefill_tokens_per_s": round(args.input_len / pre, 2),
        "decode_tokens_per_s": round(args.output_len / dec, 2),
        "input_len": args.input_len,
        "output_len": args.output_len,
        "batch_size": 1,
        "load_s": round(load_s, 3),
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"llama.cpp (llama-cpp-python {llama_cpp.__version__}), {args.threads} threads, "
              f"{os.path.basename(args.model)}")
        for k, (p, d) in enumerate(runs):
            print(f"  run {k}: prefill {p * 1e3:.1f} ms, decode {d * 1e3:.1f} ms")
        print(json.dumps(out, indent=1))
    llama_cpp.llama_free(ctx)
    llama_cpp.llama_model_free(model)


if __name__ == "__main__":
    main()
