#!/usr/bin/env python3
"""The tiny models' config.json as transformers >= 5 saves it, for the gate that loads each
tiny checkpoint with it (tests/model/hf_reference_test.cpp, HfReferenceV5Config).

transformers 5 writes the rope fields as one `rope_parameters` object (or one per layer type,
Gemma 3) and drops the top-level rope_theta / rope_scaling: a checkpoint saved or fine-tuned
with it carries only that form. Each file here is transformers' own
`AutoConfig.from_pretrained(TINY/<name>).save_pretrained(...)` of the folder
tools/make_tiny_models.py writes, committed as tests/golden/hf/<name>/config_v5.json; the gate
swaps it in for config.json and expects the same logits (the goldens beside it).

  python3 tools/make_tiny_models.py --out TINY
  python3 tools/make_hf_v5_configs.py --models TINY     # transformers 5.25.0, never in CI
"""
import argparse
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDEN = os.path.join(os.path.dirname(HERE), "tests", "golden", "hf")
sys.path.insert(0, HERE)
from make_hf_goldens import MODELS  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by make_tiny_models.py")
    a = ap.parse_args()
    import transformers
    from transformers import AutoConfig
    assert int(transformers.__version__.split(".")[0]) >= 5, "needs transformers >= 5"
    for name in MODELS:
        cfg = AutoConfig.from_pretrained(os.path.join(a.models, name))
        with tempfile.TemporaryDirectory() as d:
            cfg.save_pretrained(d)
            saved = json.load(open(os.path.join(d, "config.json")))
        text = saved.get("text_config", saved)
        # The point of the gate: only the transformers 5 form is left.
        assert "rope_parameters" in text and "rope_theta" not in text, name
        assert "rope_scaling" not in text, name
        with open(os.path.join(GOLDEN, name, "config_v5.json"), "w") as f:
            json.dump(saved, f, indent=2, sort_keys=True)
            f.write("\n")
        print(name, json.dumps(text["rope_parameters"])[:100])


if __name__ == "__main__":
    main()
