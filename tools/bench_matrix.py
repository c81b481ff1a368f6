#!/usr/bin/env python3
"""The README's performance table in one run: vllm.cpp next to llama.cpp on the same files.

For each model (label=OURS[,PEER]: PEER is the GGUF llama.cpp runs, default OURS; a Hugging
Face folder needs its GGUF twin there), back to back, ours first:
  batch 1, 128 in / 128 out  `vllm bench latency --num-iters 3` vs tools/bench_llamacpp.py --runs 3
  batch 1, 4096 in / 32 out  (--long) the same with one measured iteration
  32 requests, 256 in / 128 out  `vllm bench throughput --num-prompts 32 --max-num-seqs 32`
                                 vs tools/bench_llamacpp_parallel.py --num-seqs 32
  ready  `vllm serve` start to the first 200 from /health (median of 3, packed-weight cache
         warm) vs llama.cpp's model load + context creation (bench_llamacpp.py's load_s)
Prints a Markdown table and writes every raw result as JSON lines to --out. Needs
llama-cpp-python (tooling only, never in CI); run it on a quiet machine.

  python3 tools/bench_matrix.py --long smollm2-q4_1 \\
      smollm2-q4_1=~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf \\
      0.6b-q8_0=/tmp/qwen3-0.6b-shape.Q8_0.gguf
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ready_s(vllm, model):
    port = free_port()
    t0 = time.perf_counter()
    p = subprocess.Popen([vllm, "serve", model, "--port", str(port)], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        while True:
            if p.poll() is not None:
                raise RuntimeError(f"vllm serve {model} exited with {p.returncode}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as r:
                    if r.status == 200:
                        return time.perf_counter() - t0
            except OSError:
                time.sleep(0.02)
    finally:
        p.terminate()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("models", nargs="+", help="label=OURS[,PEER]")
    ap.add_argument("--vllm", default=os.path.join(ROOT, "build", "vllm"))
    ap.add_argument("--long", default="", help="labels (comma-separated) also run at 4096 in / 32 out")
    ap.add_argument("--out", default="bench_matrix.jsonl")
    a = ap.parse_args()
    py = sys.executable
    rows = []
    with open(a.out, "w") as log:
        def rec(**kw):
            log.write(json.dumps(kw) + "\n")
            log.flush()
            print(json.dumps(kw), file=sys.stderr)

        for spec in a.models:
            label, paths = spec.split("=", 1)
            ours, _, peer = paths.partition(",")
            ours, peer = os.path.expanduser(ours), os.path.expanduser(peer or ours)
            r = {"label": label}
            ready_s(a.vllm, ours)  # writes the packed-weight cache if it is not there yet
            r["ready"] = statistics.median(ready_s(a.vllm, ours) for _ in range(3))
            longs = set(filter(None, a.long.split(",")))
            shapes = [("b1", 128, 128, 3)] + ([("long", 4096, 32, 1)] if label in longs else [])
            for name, n_in, n_out, iters in shapes:
                o = run_json([a.vllm, "bench", "latency", "--model", ours, "--input-len", str(n_in),
                              "--output-len", str(n_out), "--num-iters", str(iters), "--json"])
                rec(label=label, what=f"vllm latency {n_in}/{n_out}", result=o)
                p = run_json([py, os.path.join(HERE, "bench_llamacpp.py"), "--model", peer,
                              "--input-len", str(n_in), "--output-len", str(n_out), "--runs",
                              str(iters), "--json"])
                rec(label=label, what=f"llama.cpp latency {n_in}/{n_out}", result=p)
                r[name] = (o["prefill_tokens_per_s"], p["prefill_tokens_per_s"],
                           o["decode_tokens_per_s"], p["decode_tokens_per_s"])
                if name == "b1":
                    r["peer_load"] = p["load_s"]
            o = run_json([a.vllm, "bench", "throughput", "--model", ours, "--input-len", "256",
                          "--output-len", "128", "--num-prompts", "32", "--max-num-seqs", "32",
                          "--json"])
            rec(label=label, what="vllm throughput 32x256/128", result=o)
            p = run_json([py, os.path.join(HERE, "bench_llamacpp_parallel.py"), "--model", peer,
                          "--num-seqs", "32", "--input-len", "256", "--output-len", "128",
                          "--json"])
            rec(label=label, what="llama.cpp parallel 32x256/128", result=p)
            r["n32"] = (o["output_tokens_per_second"], p["output_tokens_per_second"])
            rec(label=label, what="summary", result=r)
            rows.append(r)

    def cell(x, y):
        return f"{x:.1f} / {y:.1f} ({x / y:.2f}x)"

    head = "| file | prefill 128 | decode 128 | 32 requests, output tok/s |"
    if a.long:
        head += " prefill 4096 | decode at 4096 |"
    head += " ready (s) |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        b = r["b1"]
        line = f"| {r['label']} | {cell(b[0], b[1])} | {cell(b[2], b[3])} | {cell(*r['n32'])} |"
        if a.long:
            g = r.get("long")
            line += f" {cell(g[0], g[1])} | {cell(g[2], g[3])} |" if g else " — | — |"
        line += f" {r['ready']:.2f} / {r['peer_load']:.2f} |"
        print(line)
    print("\nEach cell: vllm.cpp / llama.cpp (ratio); tokens/s unless marked. Ready: `vllm serve` "
          "to /health vs llama.cpp's load + context creation.")


if __name__ == "__main__":
    main()
