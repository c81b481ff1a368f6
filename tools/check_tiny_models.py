#!/usr/bin/env python3
"""Check that generated tiny models are the ones the committed HF goldens were made from.

Owns the early, readable failure for a generator/golden mismatch: compares the sha256 of
every weight file under --models with `weights_sha256` in tests/golden/hf/<model>/index.json.
Standard library only (CI can run it right after tools/make_tiny_models.py).

  python3 tools/check_tiny_models.py --models ~/.cache/vllm-cpp/tiny-models
"""
import argparse
import hashlib
import json
import os
import sys


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True)
    ap.add_argument("--goldens", default=os.path.join(repo, "tests", "golden", "hf"))
    args = ap.parse_args()
    bad = 0
    for m in sorted(os.listdir(args.goldens)):
        idx = os.path.join(args.goldens, m, "index.json")
        if not os.path.isfile(idx):
            continue
        with open(idx, encoding="utf-8") as f:
            want = json.load(f)["weights_sha256"]
        for fn, sha in sorted(want.items()):
            path = os.path.join(args.models, m, fn)
            got = sha256_file(path) if os.path.isfile(path) else "missing"
            if got != sha:
                bad += 1
                print(f"MISMATCH {m}/{fn}: golden {sha}, generated {got}", file=sys.stderr)
    if bad:
        sys.exit("tiny models differ from the goldens: rerun tools/make_hf_goldens.py "
                 "(see tests/golden/hf/README.md)")
    print("tiny models match the HF goldens")


if __name__ == "__main__":
    main()
