#!/usr/bin/env python3
"""peft goldens for the tiny LoRA adapters of make_tiny_lora.py.

Owns tests/golden/lora/<adapter>/: per prompt, 32 greedy continuation ids of the base model
with the adapter applied by peft (with the top-2 ids and logits of each step), the base
model's own 32 greedy ids (proof that the adapter matters), and for the llama adapters the fp32
logits at every prompt position. Runs transformers + peft on CPU in fp32 with eager attention,
the prompts and greedy loop of tools/make_hf_goldens.py (imported); needs torch, transformers
and peft (never present in CI: the C++ tests read only the committed files).

  python3 tools/make_tiny_models.py --out DIR
  python3 tools/make_tiny_lora.py --models DIR --out DIR/lora
  python3 tools/make_lora_goldens.py --models DIR --lora DIR/lora

Checks before anything is written (the script fails loudly otherwise):
  - PeftModel.from_pretrained loads each adapter with no missing / unexpected key warnings, its
    LoRA parameters are exactly the file's tensors (key for key, BF16 / F16 values cast up to
    float32 unchanged), and every LoRA layer's scaling is the expected one (lora_alpha / r, or
    lora_alpha / sqrt(r) with use_rslora);
  - for one prompt, peft's logits equal those of a plain transformers model whose weights are
    merged by hand (W + scale * B @ A) to within 1e-4 in float64 (1e-3 in float32), and the other scale convention
    (sqrt(r) for r, or back) moves them by more than 1e-2, and leaving any one target module's
    LoRA out (in every layer) moves them by more than 0.1;
  - the base model's greedy ids (peft's disable_adapter) equal tests/golden/hf/<base>'s;
  - every prompt's greedy ids with the adapter differ from the base model's, and every logit
    (prompt positions and greedy steps) stays below 30 in magnitude.

The format is described in tests/golden/lora/README.md.
"""
import argparse
import json
import math
import os
import sys
import warnings

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hf_goldens as mh  # noqa: E402
import make_tiny_lora as tl  # noqa: E402

import peft  # noqa: E402
from peft import PeftModel  # noqa: E402
from peft.tuners.lora import LoraLayer  # noqa: E402
from peft.utils import get_peft_model_state_dict  # noqa: E402
from safetensors.torch import load_file  # noqa: E402

MAX_ABS_LOGIT = 30.0
MERGE_TOL = 1e-4
MODULE_MIN_EFFECT = 0.1
# Adapters whose base has no tokenizer (llama, phi3) get make_hf_goldens' id prompts, and their
# prompt logits are written (vocab 2048); the Qwen3 ones get the text prompts and no logits files
# (151936 wide).
WRITE_LOGITS = ("llama", "phi3")


def load_base(model_dir):
    m = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32,
                                             attn_implementation="eager")
    m.eval()
    return m


def module_of(key):
    """base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight -> model.layers.0.self_attn.q_proj, A"""
    assert key.startswith("base_model.model.") and key.endswith(".weight"), key
    body = key[len("base_model.model."):-len(".weight")]
    mod, ab = body.rsplit(".", 1)
    assert ab in ("lora_A", "lora_B"), key
    return mod, ab[-1]


def load_checked(base_dir, adapter_dir, file_tensors, scale):
    """The base model wrapped in the adapter, after checking that peft took the file as it is."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pm = PeftModel.from_pretrained(load_base(base_dir), adapter_dir)
    bad = [str(w.message) for w in caught if "key" in str(w.message).lower()]
    if bad:
        sys.exit(f"{adapter_dir}: peft warned while loading: {bad}")
    pm.eval()
    got = get_peft_model_state_dict(pm, save_embedding_layers=False)
    if set(got) != set(file_tensors):
        sys.exit(f"{adapter_dir}: peft's adapter keys differ from the file's: "
                 f"only peft {sorted(set(got) - set(file_tensors))}, "
                 f"only file {sorted(set(file_tensors) - set(got))}")
    for k, want in file_tensors.items():
        g = got[k]
        assert g.dtype == torch.float32, (k, g.dtype)
        assert torch.equal(g, want.float()), f"{k}: peft's parameter is not the stored value"
    n = 0
    for name, m in pm.named_modules():
        if isinstance(m, LoraLayer) and "default" in m.scaling:
            assert m.scaling["default"] == scale, (name, m.scaling["default"], scale)
            n += 1
    assert 2 * n == len(file_tensors), (n, len(file_tensors))
    return pm


@torch.no_grad()
def merged_logits(base_dir, file_tensors, scale, ids, skip=None, dtype=torch.float32):
    """Logits of a plain transformers model with W + scale * B @ A put in by hand (leaving out
    the target module named skip, e.g. "k_proj", in every layer), computed in dtype."""
    m = load_base(base_dir).to(dtype)
    mods = {}
    for k, t in file_tensors.items():
        mod, ab = module_of(k)
        if skip and mod.endswith("." + skip):
            continue
        mods.setdefault(mod, {})[ab] = t.to(dtype)
    for mod, ab in mods.items():
        lin = m.get_submodule(mod)
        lin.weight += scale * (ab["B"] @ ab["A"])
    return m(torch.tensor([ids], dtype=torch.long), use_cache=False).logits[0]


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None


def make(name, models, lora, out_root, command, hf_goldens):
    base, r, alpha, rslora, targets, dtype, _ = tl.ADAPTERS[name]
    scale = tl.scale_of(r, alpha, rslora)
    alt_scale = alpha / r if rslora else alpha / math.sqrt(r)  # the other convention
    base_dir, adapter_dir = os.path.join(models, base), os.path.join(lora, name)
    out_dir = os.path.join(out_root, name)
    with open(os.path.join(adapter_dir, "adapter_config.json"), encoding="utf-8") as f:
        acfg = json.load(f)
    assert (acfg["r"], acfg["lora_alpha"], acfg["use_rslora"], tuple(acfg["target_modules"])) == \
        (r, alpha, rslora, tuple(targets)), acfg
    adapter_file = os.path.join(adapter_dir, "adapter_model.safetensors")
    base_file = os.path.join(base_dir, "model.safetensors")
    file_tensors = load_file(adapter_file)
    stored = {t.dtype for t in file_tensors.values()}
    want_dtype = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}[dtype]
    assert stored == {want_dtype}, (stored, dtype)

    with open(os.path.join(hf_goldens, base, "index.json"), encoding="utf-8") as f:
        hf = json.load(f)
    base_sha = mh.sha256_file(base_file)
    if hf["weights_sha256"].get("model.safetensors") != base_sha:
        sys.exit(f"{base_file} is not the model tests/golden/hf/{base} was made from "
                 "(rerun tools/make_tiny_models.py)")

    pm = load_checked(base_dir, adapter_dir, file_tensors, scale)
    V = pm.config.vocab_size
    if base in WRITE_LOGITS:
        prompts = [{"ids": p} for p in mh.LLAMA_PROMPTS]
    else:
        tok = AutoTokenizer.from_pretrained(base_dir)
        prompts = [{"text": t, "ids": tok(t)["input_ids"]} for t in mh.QWEN_PROMPTS]

    # Scale convention: peft == the merged weights by hand, and the other convention is far off.
    # The equality is checked in float64 (peft's float32 run differs from the merged float32
    # model by float32 rounding alone, up to ~1e-4 at these logit sizes; printed, held to 1e-3).
    probe = max((p["ids"] for p in prompts), key=len)
    x = torch.tensor([probe], dtype=torch.long)
    with torch.no_grad():
        own = pm(x, use_cache=False).logits[0]
        pm64 = load_checked(base_dir, adapter_dir, file_tensors, scale).to(torch.float64)
        own64 = pm64(x, use_cache=False).logits[0]
        del pm64
    d64 = (own64 - merged_logits(base_dir, file_tensors, scale, probe, dtype=torch.float64)).abs().max().item()
    d = (own - merged_logits(base_dir, file_tensors, scale, probe)).abs().max().item()
    d_alt = (own - merged_logits(base_dir, file_tensors, alt_scale, probe)).abs().max().item()
    print(f"{name}: scale {scale:g}: peft vs merged W + scale*B@A max |diff| {d64:.2e} in float64, "
          f"{d:.2e} in float32; with scale {alt_scale:g} instead {d_alt:.3f}")
    if not (d64 <= MERGE_TOL and d <= 10 * MERGE_TOL):
        sys.exit(f"{name}: peft's logits differ from the hand-merged model's by {d64} (float64), "
                 f"{d} (float32)")
    if not d_alt > 1e-2:
        sys.exit(f"{name}: the other scale convention changes the logits by only {d_alt}")
    # Each target module matters: leaving its LoRA out (in every layer) moves the logits.
    drops = {}
    for mod in targets:
        drops[mod] = (own - merged_logits(base_dir, file_tensors, scale, probe, skip=mod)).abs().max().item()
        if not drops[mod] > MODULE_MIN_EFFECT:
            sys.exit(f"{name}: leaving out {mod}'s LoRA moves the logits by only {drops[mod]}")
    print(f"{name}: leaving one module's LoRA out moves the logits by up to "
          + ", ".join(f"{m} {v:.2f}" for m, v in drops.items()))

    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".f32") or f == "index.json":
            os.remove(os.path.join(out_dir, f))
    entries, files = [], {}
    for k, p in enumerate(prompts):
        logits, greedy, t2i, t2l = mh.run_prompt(pm, p["ids"])
        with pm.disable_adapter():
            base_logits, base_greedy, _, _ = mh.run_prompt(pm, p["ids"])
        assert logits.shape == (len(p["ids"]), V), logits.shape
        if base_greedy != hf["prompts"][k]["greedy_ids"]:
            sys.exit(f"{name} prompt{k}: the base model's greedy ids differ from tests/golden/hf/{base}")
        step = first_diff(greedy, base_greedy)
        if step is None:
            sys.exit(f"{name} prompt{k}: the adapter leaves the greedy ids unchanged; raise REL "
                     "in tools/make_tiny_lora.py")
        top = max(float(abs(logits).max()), max(abs(x) for pair in t2l for x in pair))
        if not top < MAX_ABS_LOGIT:
            sys.exit(f"{name} prompt{k}: |logit| reaches {top:.1f}; lower REL in tools/make_tiny_lora.py")
        gaps = [a - b for a, b in t2l]
        e = {}
        if "text" in p:
            e["text"] = p["text"]
        e["prompt_ids"] = p["ids"]
        if base in WRITE_LOGITS:
            fn = f"prompt{k}.logits.f32"
            logits.astype("<f4").tofile(os.path.join(out_dir, fn))
            e.update({"logits_file": fn, "logits_shape": [len(p["ids"]), V]})
            files[fn] = os.path.getsize(os.path.join(out_dir, fn))
        e.update({
            "greedy_ids": greedy,
            "greedy_top2_ids": t2i,
            "greedy_top2_logits": t2l,
            "min_greedy_top2_gap": min(gaps),
            "base_greedy_ids": base_greedy,
            "first_step_differing_from_base": step,
        })
        entries.append(e)
        dl = float(abs(logits - base_logits).max())
        print(f"{name} prompt{k}: {len(p['ids'])} ids, greedy {greedy[:8]}..., base {base_greedy[:8]}..., "
              f"differs from step {step} ({sum(a != b for a, b in zip(greedy, base_greedy))}/32 steps), "
              f"prompt logits max |adapter - base| {dl:.2f}, max |logit| {top:.1f}, "
              f"min gap {min(gaps):.4f}")
    index = {
        "adapter": name,
        "base_model": base,
        "architecture": pm.config.architectures[0],
        "vocab_size": V,
        "n_greedy": mh.N_GREEDY,
        "r": r,
        "lora_alpha": alpha,
        "use_rslora": rslora,
        "target_modules": list(targets),
        "scale": scale,
        "adapter_dtype": dtype,
        "weights_sha256": {"adapter_model.safetensors": mh.sha256_file(adapter_file),
                           "model.safetensors": base_sha},
        "weights_bytes": {"adapter_model.safetensors": os.path.getsize(adapter_file),
                          "model.safetensors": os.path.getsize(base_file)},
        "adapter_config_sha256": mh.sha256_file(os.path.join(adapter_dir, "adapter_config.json")),
        "reference": {"torch": torch.__version__, "transformers": transformers.__version__,
                      "peft": peft.__version__, "dtype": "float32", "attn_implementation": "eager",
                      "device": "cpu", "adapter_weights": "stored values cast to float32"},
        "command": command,
        "prompts": entries,
    }
    with open(os.path.join(out_dir, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by make_tiny_models.py --out")
    ap.add_argument("--lora", required=True, help="folder written by make_tiny_lora.py --out")
    ap.add_argument("--out", default=os.path.join(repo, "tests", "golden", "lora"))
    ap.add_argument("--hf-goldens", default=os.path.join(repo, "tests", "golden", "hf"),
                    help="the base models' goldens (their greedy ids are checked against the base's here)")
    ap.add_argument("--only", default=",".join(tl.ADAPTERS), help="comma-separated subset")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    command = ("python3 tools/make_tiny_models.py --out DIR && "
               "python3 tools/make_tiny_lora.py --models DIR --out DIR/lora && "
               "python3 tools/make_lora_goldens.py --models DIR --lora DIR/lora")
    for name in args.only.split(","):
        make(name, args.models, args.lora, args.out, command, args.hf_goldens)


if __name__ == "__main__":
    main()
