#!/usr/bin/env python3
"""/v1/embeddings throughput of `vllm serve --runner pooling` next to llama.cpp on the same GGUF.

Ours: `vllm serve MODEL --runner pooling` (last-token pooling, normalized: vLLM's defaults for a
decoder), then --num-prompts texts sent as requests of --batch inputs each, --concurrency at a
time, with the official openai client (its default base64 encoding), after one warm-up request.
The peer: llama-cpp-python's Llama(embedding=True, pooling_type LAST) on the same file with the
same thread count, `embed` over the same texts, --peer-batch at a time (llama.cpp decodes a
list's sequences together, up to n_batch tokens per step). Both read the texts with the GGUF's own
tokenizer, so both embed the same token ids; the report checks that the vectors agree
(cosine similarity of each pair) and gives prompt tokens per second for each engine and their
ratio. Tooling only (llama-cpp-python is never installed in CI); run on a quiet machine.

  python3 tools/bench_embeddings.py --model ~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf
"""
import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

WORDS = ("the of and to in is was for on that with as by at from his her an which were are "
         "this be had not but they their have one has all been who more also first two can "
         "after new other into time some when would out up what only over its most city "
         "river music season film team year school war game world state history number").split()


def texts(n, words, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "." for _ in range(n)]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ours(args, prompts):
    import openai
    port = free_port()
    log = open("/tmp/bench_embeddings_serve.log", "w")
    p = subprocess.Popen([args.vllm, "serve", args.model, "--runner", "pooling", "--port",
                          str(port), "--max-model-len", str(args.max_model_len),
                          "--max-num-seqs", str(args.max_num_seqs)],
                         stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 300
        while True:
            if p.poll() is not None:
                sys.exit(f"vllm serve exited: see /tmp/bench_embeddings_serve.log")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2):
                    break
            except OSError:
                if time.time() > deadline:
                    sys.exit("vllm serve did not become healthy")
                time.sleep(0.2)
        c = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="x", timeout=600)
        model = c.models.list().data[0].id
        c.embeddings.create(model=model, input=prompts[: args.batch])  # warm-up
        chunks = [prompts[i:i + args.batch] for i in range(0, len(prompts), args.batch)]

        def one(chunk):
            r = c.embeddings.create(model=model, input=chunk)
            return [d.embedding for d in r.data], r.usage.prompt_tokens

        t0 = time.perf_counter()
        with ThreadPoolExecutor(args.concurrency) as ex:
            results = list(ex.map(one, chunks))
        dt = time.perf_counter() - t0
        vecs = [v for r in results for v in r[0]]
        tokens = sum(r[1] for r in results)
        return np.asarray(vecs, np.float64), tokens, dt
    finally:
        p.terminate()
        p.wait(timeout=60)


def peer(args, prompts):
    import llama_cpp
    pb = args.peer_batch
    llm = llama_cpp.Llama(model_path=args.model, embedding=True, n_ctx=512 * pb, n_batch=512,
                          n_ubatch=512, n_seq_max=pb, n_threads=args.threads,
                          n_threads_batch=args.threads,
                          pooling_type=llama_cpp.LLAMA_POOLING_TYPE_LAST, verbose=False)
    llm.embed(prompts[:pb])  # warm-up
    t0 = time.perf_counter()
    vecs, tokens = [], 0
    for i in range(0, len(prompts), pb):
        out, n = llm.embed(prompts[i:i + pb], normalize=True, return_count=True)
        vecs += out
        tokens += n
    dt = time.perf_counter() - t0
    return np.asarray(vecs, np.float64), tokens, dt


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="a GGUF both engines read")
    ap.add_argument("--vllm", default=os.path.join(ROOT, "build", "vllm"))
    ap.add_argument("--num-prompts", type=int, default=256)
    ap.add_argument("--words", type=int, default=96, help="words per text (~1.2 tokens each)")
    ap.add_argument("--batch", type=int, default=16, help="inputs per request / per embed call")
    ap.add_argument("--concurrency", type=int, default=4, help="requests in flight (ours)")
    ap.add_argument("--max-model-len", type=int, default=1024)
    ap.add_argument("--max-num-seqs", type=int, default=64)
    ap.add_argument("--peer-batch", type=int, default=1,
                    help="texts per llama.cpp embed call (its n_seq_max; n_ctx 512 each, "
                         "n_batch 512). 1 is its fastest on a 2-core AVX2 VM: 107 tok/s on the "
                         "0.6B Q4_K_M against 81 with 16 sequences in a 4096-token batch")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    prompts = texts(args.num_prompts, args.words, args.seed)
    ov, ot, odt = ours(args, prompts)
    rep = {"model": os.path.basename(args.model), "num_prompts": len(prompts),
           "prompt_tokens": ot, "ours_s": round(odt, 3),
           "ours_prompt_tokens_per_s": round(ot / odt, 1),
           "ours_embeddings_per_s": round(len(prompts) / odt, 2)}
    if not args.no_peer:
        pv, pt, pdt = peer(args, prompts)
        cos = np.sum(ov * pv, axis=1) / (np.linalg.norm(ov, axis=1) * np.linalg.norm(pv, axis=1))
        rep.update({"peer_prompt_tokens": pt, "peer_s": round(pdt, 3),
                    "peer_prompt_tokens_per_s": round(pt / pdt, 1),
                    "ours_over_peer": round((ot / odt) / (pt / pdt), 3),
                    "cosine_min": round(float(cos.min()), 5),
                    "cosine_mean": round(float(cos.mean()), 5)})
    print(json.dumps(rep))


if __name__ == "__main__":
    main()
