#!/usr/bin/env python3
"""llama.cpp peer for concurrent requests: N sequences in parallel slots, like llama.cpp's
server with --parallel N (continuous batching of all slots in one llama_decode per step).
As `llama-server -np N` does when N is given, the KV cache is split into one stream per
sequence (each attends only to its own cells); --kv-unified shares one buffer instead, the
server's default only when -np is left on auto.

Each sequence gets its own random input_len-token prompt and generates output_len greedy
tokens (EOS ignored). Prompts are processed in batches of up to n_batch tokens across
sequences, then every step decodes one token for each sequence in a single batch.
Prints the fields of `vllm bench throughput --json` (requests/s, output and total tokens/s).

  python3 tools/bench_llamacpp_parallel.py --model FILE --num-seqs 32 --input-len 256 --output-len 128
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy as np
import llama_cpp

_QUIET = llama_cpp.llama_log_callback(lambda level, text, user: None)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--num-seqs", type=int, default=32)
    ap.add_argument("--input-len", type=int, default=256)
    ap.add_argument("--output-len", type=int, default=128)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--kv-unified", action="store_true")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    llama_cpp.llama_backend_init()
    llama_cpp.llama_log_set(_QUIET, ctypes.c_void_p(0))
    model = llama_cpp.llama_model_load_from_file(os.path.expanduser(a.model).encode(),
                                                 llama_cpp.llama_model_default_params())
    vocab = llama_cpp.llama_model_get_vocab(model)
    n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
    N = a.num_seqs
    cp = llama_cpp.llama_context_default_params()
    cp.n_ctx = N * (a.input_len + a.output_len + 8)
    cp.n_batch = cp.n_ubatch = 512
    cp.n_seq_max = N
    cp.n_threads = cp.n_threads_batch = a.threads
    cp.kv_unified = a.kv_unified
    ctx = llama_cpp.llama_init_from_model(model, cp)
    rng = np.random.default_rng(7)
    prompts = [rng.integers(0, min(n_vocab, 10000), a.input_len).tolist() for _ in range(N)]
    batch = llama_cpp.llama_batch_init(max(512, N), 0, N)

    def run(tokens):  # tokens: list of (token, pos, seq, want_logits)
        for i, (t, p, s, l) in enumerate(tokens):
            batch.token[i] = t
            batch.pos[i] = p
            batch.n_seq_id[i] = 1
            batch.seq_id[i][0] = s
            batch.logits[i] = 1 if l else 0
        batch.n_tokens = len(tokens)
        if llama_cpp.llama_decode(ctx, batch) != 0:
            raise RuntimeError("llama_decode failed")

    t0 = time.perf_counter()
    # Prompt processing, n_batch tokens at a time across sequences.
    flat = [(tok, p, s, p == a.input_len - 1) for s in range(N) for p, tok in enumerate(prompts[s])]
    last = {}
    for off in range(0, len(flat), 512):
        chunk = flat[off:off + 512]
        run(chunk)
        for i, (t, p, s, l) in enumerate(chunk):
            if l:
                ptr = llama_cpp.llama_get_logits_ith(ctx, i)
                last[s] = int(np.argmax(np.ctypeslib.as_array(ptr, shape=(n_vocab,))))
    # Decode: one token per sequence per step.
    for step in range(a.output_len - 1):
        run([(last[s], a.input_len + step, s, True) for s in range(N)])
        for s in range(N):
            ptr = llama_cpp.llama_get_logits_ith(ctx, s)
            last[s] = int(np.argmax(np.ctypeslib.as_array(ptr, shape=(n_vocab,))))
    el = time.perf_counter() - t0
    out_tokens = N * a.output_len
    res = {"num_requests": N, "input_len": a.input_len, "output_len": a.output_len,
           "elapsed_time": el, "requests_per_second": N / el,
           "output_tokens_per_second": out_tokens / el,
           "tokens_per_second": (out_tokens + N * a.input_len) / el,
           "kv_unified": bool(a.kv_unified)}
    print(json.dumps(res) if a.json else json.dumps(res, indent=1))
    llama_cpp.llama_batch_free(batch)
    llama_cpp.llama_free(ctx)
    llama_cpp.llama_model_free(model)


if __name__ == "__main__":
    main()
