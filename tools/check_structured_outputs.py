#!/usr/bin/env python3
"""Checks texts sampled under a grammar against the Python reference of their corpus entry.

    python3 tools/check_structured_outputs.py --corpus tests/golden/structured_output/corpus.json \
        --samples samples.json      # samples: [{"name": entry name, "text": ...}, ...]

Exit status 0 when every sample is in its entry's language; the failures are printed."""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from so_reference import check  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--samples", required=True)
    a = ap.parse_args()
    with open(a.corpus, encoding="utf-8") as f:
        refs = {e["name"]: e["reference"] for e in json.load(f)["entries"]}
    with open(a.samples, encoding="utf-8") as f:
        samples = json.load(f)
    bad = 0
    for s in samples:
        if not check(refs[s["name"]], s["text"]):
            bad += 1
            print(f"INVALID {s['name']}: {s['text']!r}")
    print(f"checked {len(samples)} samples, {bad} not in their language")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
