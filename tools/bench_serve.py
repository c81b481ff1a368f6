#!/usr/bin/env python3
"""A `vllm bench serve`-like client for any OpenAI-compatible server.

Sends streaming /v1/completions requests at fixed concurrency levels and reports what Python
vLLM's benchmark reports: request throughput, output tokens/s, TTFT and TPOT (p50/p99).

  python3 tools/bench_serve.py --base-url http://127.0.0.1:8000 --model smollm2 \
      --concurrency 1 8 32 --num-prompts 64 --max-tokens 64

TTFT is measured to the first streamed text; TPOT = (latency - TTFT) / (output tokens - 1),
with output tokens from the final usage chunk (stream_options.include_usage), as vLLM does.
"""
import argparse
import json
import statistics
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor

WORDS = ("time person year way day thing man world life hand part child eye woman place work "
         "week case point government company number group problem fact").split()


def make_prompts(n, prompt_words, seed=0):
    out = []
    for i in range(n):
        words = [WORDS[(i * 7 + j * 13 + seed) % len(WORDS)] for j in range(prompt_words)]
        out.append(f"Request {i}: " + " ".join(words))
    return out


def one_request(base_url, model, prompt, max_tokens, api_key):
    body = json.dumps({"model": model, "prompt": prompt, "max_tokens": max_tokens,
                       "temperature": 0, "stream": True, "ignore_eos": True,
                       "stream_options": {"include_usage": True}}).encode()
    headers = {"Content-Type": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    req = urllib.request.Request(base_url + "/v1/completions", data=body, headers=headers)
    start = time.perf_counter()
    ttft, n_chunks, usage_tokens = None, 0, None
    with urllib.request.urlopen(req, timeout=3600) as r:
        for raw in r:
            line = raw.decode("utf-8", "replace").strip()
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            obj = json.loads(data)
            if obj.get("usage"):
                usage_tokens = obj["usage"].get("completion_tokens")
            for c in obj.get("choices") or []:
                if c.get("text"):
                    n_chunks += 1
                    if ttft is None:
                        ttft = time.perf_counter() - start
    latency = time.perf_counter() - start
    out_tokens = usage_tokens if usage_tokens is not None else n_chunks
    return {"ttft": ttft if ttft is not None else latency, "latency": latency,
            "output_tokens": out_tokens}


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100.0
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def run_level(args, concurrency):
    prompts = make_prompts(args.num_prompts, args.prompt_words, seed=concurrency)
    results, lock = [], threading.Lock()

    def work(p):
        r = one_request(args.base_url, args.model, p, args.max_tokens, args.api_key)
        with lock:
            results.append(r)

    # Warm-up request (not measured) so model load / first-call costs are excluded.
    one_request(args.base_url, args.model, "warm up", 2, args.api_key)
    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(work, prompts))
    dur = time.perf_counter() - t0
    out_tok = sum(r["output_tokens"] for r in results)
    ttft = [r["ttft"] * 1000 for r in results]
    tpot = [(r["latency"] - r["ttft"]) * 1000 / (r["output_tokens"] - 1)
            for r in results if r["output_tokens"] > 1]
    return {"concurrency": concurrency, "requests": len(results), "duration_s": dur,
            "req_per_s": len(results) / dur, "output_tok_per_s": out_tok / dur,
            "ttft_p50_ms": pct(ttft, 50), "ttft_p99_ms": pct(ttft, 99),
            "tpot_p50_ms": pct(tpot, 50), "tpot_p99_ms": pct(tpot, 99)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base-url", default="http://127.0.0.1:8000")
    ap.add_argument("--model", required=True)
    ap.add_argument("--api-key", default="")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--num-prompts", type=int, default=64)
    ap.add_argument("--prompt-words", type=int, default=32)
    ap.add_argument("--max-tokens", type=int, default=64)
    ap.add_argument("--label", default="server")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    rows = [run_level(args, c) for c in args.concurrency]
    print(f"| {args.label} | conc | req/s | out tok/s | TTFT p50 ms | TTFT p99 ms "
          f"| TPOT p50 ms | TPOT p99 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {args.label} | {r['concurrency']} | {r['req_per_s']:.2f} | "
              f"{r['output_tok_per_s']:.1f} | {r['ttft_p50_ms']:.0f} | {r['ttft_p99_ms']:.0f} | "
              f"{r['tpot_p50_ms']:.1f} | {r['tpot_p99_ms']:.1f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"label": args.label, "results": rows}, f, indent=1)


if __name__ == "__main__":
    main()
