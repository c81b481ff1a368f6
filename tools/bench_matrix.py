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
With --rounds N every measurement but ready runs N times per model (ours then the peer's,
round after round), and each cell shows the median of each engine's N results, their ratio,
and the range of the N per-round ratios: on a host that drifts, one run per cell is noise.
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
    ap.add_argument("--rounds", type=int, default=1, help="measurements per cell (medians shown)")
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
            for name, *_ in shapes:
                r[name] = []
            r["n32"] = []
            for _ in range(a.rounds):
                measure_round(a, py, label, ours, peer, shapes, r, rec)
            rec(label=label, what="summary", result=r)
            rows.append(r)

    def med(v):
        return statistics.median(v)

    def cell(x, y):
        xm, ym = med(x), med(y)
        c = f"{xm:.1f} / {ym:.1f} ({xm / ym:.2f}x)"
        if len(x) > 1:
            ratios = [u / w for u, w in zip(x, y)]
            c += f" [{min(ratios):.2f}-{max(ratios):.2f}x]"
        return c

    def col(rounds, i):
        return [t[i] for t in rounds]

    head = "| file | prefill 128 | decode 128 | 32 requests, output tok/s |"
    if a.long:
        head += " prefill 4096 | decode at 4096 |"
    head += " ready (s) |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        b = r["b1"]
        n = r["n32"]
        line = (f"| {r['label']} | {cell(col(b, 0), col(b, 1))} | {cell(col(b, 2), col(b, 3))} | "
                f"{cell(col(n, 0), col(n, 1))} |")
        if a.long:
            g = r.get("long")
            line += (f" {cell(col(g, 0), col(g, 1))} | {cell(col(g, 2), col(g, 3))} |" if g
                     else " — | — |")
        line += f" {r['ready']:.2f} / {med(r['peer_load']):.2f} |"
        print(line)
    rounds = f"; medians of {a.rounds} rounds, [per-round ratio range]" if a.rounds > 1 else ""
    print("\nEach cell: vllm.cpp / llama.cpp (ratio); tokens/s unless marked" + rounds +
          ". Ready: `vllm serve` to /health vs llama.cpp's load + context creation.")


def measure_round(a, py, label, ours, peer, shapes, r, rec):
    """One round of a model's measurements, ours then the peer's for each; appends to r."""
    for name, n_in, n_out, iters in shapes:
        o = run_json([a.vllm, "bench", "latency", "--model", ours, "--input-len", str(n_in),
                      "--output-len", str(n_out), "--num-iters", str(iters), "--json"])
        rec(label=label, what=f"vllm latency {n_in}/{n_out}", result=o)
        p = run_json([py, os.path.join(HERE, "bench_llamacpp.py"), "--model", peer,
                      "--input-len", str(n_in), "--output-len", str(n_out), "--runs",
                      str(iters), "--json"])
        rec(label=label, what=f"llama.cpp latency {n_in}/{n_out}", result=p)
        r[name].append((o["prefill_tokens_per_s"], p["prefill_tokens_per_s"],
                        o["decode_tokens_per_s"], p["decode_tokens_per_s"]))
        if name == "b1":
            r.setdefault("peer_load", []).append(p["load_s"])
    o = run_json([a.vllm, "bench", "throughput", "--model", ours, "--input-len", "256",
                  "--output-len", "128", "--num-prompts", "32", "--max-num-seqs", "32",
                  "--json"])
    rec(label=label, what="vllm throughput 32x256/128", result=o)
    p = run_json([py, os.path.join(HERE, "bench_llamacpp_parallel.py"), "--model", peer,
                  "--num-seqs", "32", "--input-len", "256", "--output-len", "128",
                  "--json"])
    rec(label=label, what="llama.cpp parallel 32x256/128", result=p)
    r["n32"].append((o["output_tokens_per_second"], p["output_tokens_per_second"]))


if __name__ == "__main__":
    main()
