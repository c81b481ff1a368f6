#!/usr/bin/env python3
"""float(e4m3fn code) for all 256 codes, as torch reads them: the golden of the FP8 checkpoint
loader's decoding (tests/model/fp8_weights_test.cpp). NaN codes are written as null.

  python3 tools/make_fp8_goldens.py      # torch (never in CI)
"""
import json
import math
import os

import torch

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "golden",
                   "fp8", "e4m3.json")


def main():
    v = torch.arange(256, dtype=torch.uint8).view(torch.float8_e4m3fn).float().tolist()
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump({"command": "python3 tools/make_fp8_goldens.py", "torch": torch.__version__,
                   "values": [None if math.isnan(x) else x for x in v]}, f, indent=0)
        f.write("\n")
    print(OUT)


if __name__ == "__main__":
    main()
