#!/usr/bin/env python3
"""Batch-1 (or batch-N) latency of vllm.cpp next to llama.cpp, same file, same run.

Runs the peer (tools/bench_llamacpp.py, llama-cpp-python) and `vllm bench latency`
(with decode graphs and with --enforce-eager) in alternation for --rounds rounds, so a
noisy machine hits both alike, and prints a Markdown table of medians and ratios.
Also reports peak resident memory of `vllm generate` (/usr/bin/time -v) next to the
file size. Needs llama-cpp-python (tooling only, never in CI).

  python3 tools/compare_latency.py --model ~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def run_json(cmd):
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def peak_rss_mib(cmd):
    r = subprocess.run(["/usr/bin/time", "-v"] + cmd, capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return int(m.group(1)) / 1024 if m else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="what vllm.cpp loads: a .gguf or a Hugging Face folder")
    ap.add_argument("--peer-model", help="what llama.cpp loads (default --model): a GGUF of the "
                    "same weights when --model is a folder, e.g. from tools/make_shape_hf.py --gguf")
    ap.add_argument("--vllm", default=os.path.join(ROOT, "build", "vllm"))
    ap.add_argument("--input-len", type=int, default=128)
    ap.add_argument("--output-len", type=int, default=128)
    ap.add_argument("--batch-size", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-peer", action="store_true", help="skip llama.cpp (batch > 1)")
    a = ap.parse_args()
    lens = ["--input-len", str(a.input_len), "--output-len", str(a.output_len)]
    ours = [a.vllm, "bench", "latency", "--model", a.model, "--batch-size", str(a.batch_size),
            "--num-iters", "2", "--json"] + lens
    peer = [sys.executable, os.path.join(HERE, "bench_llamacpp.py"), "--model", a.peer_model or a.model,
            "--runs", "2", "--json"] + lens
    res = {"peer": [], "graph": [], "eager": []}
    jobs = [("graph", ours), ("eager", ours + ["--enforce-eager"])]
    if not a.no_peer and a.batch_size == 1:
        jobs.insert(0, ("peer", peer))
    for r in range(a.rounds):
        # Rotate the order every round: whatever runs right after another engine (page
        # cache, memory compaction) must not always be the same one.
        for k, cmd in jobs[r % len(jobs):] + jobs[:r % len(jobs)]:
            res[k].append(run_json(cmd))

    def med(k, f):
        return statistics.median(r[f] for r in res[k]) if res[k] else float("nan")

    name = os.path.basename(a.model.rstrip("/"))
    if os.path.isdir(a.model):  # a Hugging Face folder: its weight files
        size_mib = sum(os.path.getsize(os.path.join(a.model, f)) for f in os.listdir(a.model)
                       if f.endswith(".safetensors")) / 2**20
    else:
        size_mib = os.path.getsize(a.model) / 2**20
    rss = peak_rss_mib([a.vllm, "generate", "--model", a.model, "--prompt", "Hello",
                        "--max-tokens", "128", "--ignore-eos", "--max-model-len", "1024"])
    print(f"{name}: batch {a.batch_size}, input {a.input_len}, output {a.output_len}, "
          f"{a.rounds} rounds (medians)")
    print("| | prefill tok/s | decode tok/s | host us/step |")
    print("|---|---|---|---|")
    if res["peer"]:
        print(f"| llama.cpp | {med('peer', 'prefill_tokens_per_s'):.1f} | "
              f"{med('peer', 'decode_tokens_per_s'):.1f} | |")
    for k, label in (("graph", "vllm.cpp (decode graph)"), ("eager", "vllm.cpp --enforce-eager")):
        p, d = med(k, "prefill_tokens_per_s"), med(k, "decode_tokens_per_s")
        h = med(k, "decode_host_us_per_step")
        ratio = ""
        if res["peer"]:
            ratio = (f" ({p / med('peer', 'prefill_tokens_per_s'):.2f}x) | {d:.1f} "
                     f"({d / med('peer', 'decode_tokens_per_s'):.2f}x) | {h:.1f} |")
            print(f"| {label} | {p:.1f}{ratio}")
        else:
            print(f"| {label} | {p:.1f} | {d:.1f} | {h:.1f} |")
    # Graph vs eager paired per round (both ran back to back), so slow drift cancels.
    pairs = [g["decode_tokens_per_s"] / e["decode_tokens_per_s"]
             for g, e in zip(res["graph"], res["eager"])]
    print(f"graph/eager decode tok/s per round: median {statistics.median(pairs):.3f} "
          f"(min {min(pairs):.3f}, max {max(pairs):.3f}; "
          f"{sum(x >= 1.0 for x in pairs)} of {len(pairs)} rounds >= 1)")
    print(f"peak RSS of `vllm generate` (128 tokens, max-model-len 1024): {rss:.0f} MiB; "
          f"file {size_mib:.0f} MiB ({rss / size_mib:.2f}x, KV cache included)")


if __name__ == "__main__":
    main()
