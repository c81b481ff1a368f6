#!/usr/bin/env python3
"""Write tiny random LoRA adapters in PEFT's on-disk layout for the tiny test models.

Owns the adapters that the C++ LoRA loader and the peft goldens (tests/golden/lora/) share.
Pure numpy, like tools/make_tiny_models.py (CI runs both without torch), and byte-identical on
every run and machine: the random numbers are make_tiny_models.normalish (PCG64's exact
uniform doubles summed with IEEE add/mul/convert only, no libm), its BF16 / F16 rounding and
its safetensors writer (header keys sorted, space-padded to 8 bytes, __metadata__
{"format": "pt"}) are reused by import; the only other arithmetic here is math.sqrt, which
IEEE 754 rounds correctly everywhere.

  python3 tools/make_tiny_lora.py --models ~/.cache/vllm-cpp/tiny-models \\
      --out ~/.cache/vllm-cpp/tiny-models/lora

Each adapter is a folder under --out holding adapter_config.json and
adapter_model.safetensors as `PeftModel.save_pretrained` writes them for a LoRA on a causal LM:
tensors base_model.model.model.layers.{i}.self_attn.{q,k,v,o}_proj.lora_{A,B}.weight and
base_model.model.model.layers.{i}.mlp.{gate,up,down}_proj.lora_{A,B}.weight (on Phi-3, whose
checkpoints fuse them, self_attn.qkv_proj, rows q | k | v, and mlp.gate_up_proj, rows gate | up,
in place of q/k/v and gate/up: one lora_A / lora_B pair over the whole fused linear, as PEFT
targets Phi-3), lora_A [r, in_features], lora_B [out_features, r]. The shapes come from the base
model's config.json under --models (written by make_tiny_models.py).

  adapter          base    r   alpha  rslora  target modules                 dtype  scale
  llama_all        llama   8   16     no      q k v o gate up down           F32    2
  llama_qv_rslora  llama   4   8      yes     q v                            BF16   4 (8/sqrt 4)
  qwen3_all        qwen3   8   32     no      q k v o gate up down           F32    4
  qwen3_mlp        qwen3   16  16     no      gate up down                   F16    1
  phi3_fused       phi3    8   24     no      qkv o gate_up down (fused)     F32    3

Values: both A and B non-zero (PEFT's init would zero B: a trained adapter has neither zero).
A ~ N(0, 1/in_features) and B sized so that the adapter's delta, scale * B @ A, has entries of
about REL times the base weight's standard deviation (make_tiny_models' STD_PROJ for q/k/v/gate/up,
STD_OUT for o/down; the fused qkv / gate_up take STD_PROJ, the std of every row they stack):
B ~ N(0, (REL * base_std * sqrt(in) / (scale * sqrt(r)))^2). REL (per adapter, below) is sized
so that every golden prompt's greedy continuation changes from its first step while the logits
stay in the base model's range (|logit| < 17; tools/make_lora_goldens.py checks both),
and, among the REL in 0.3-1.2 that do so, for the widest greedy top-2 gaps.
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_tiny_models as tm  # noqa: E402

ATTN = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP = ("gate_proj", "up_proj", "down_proj")
ALL = ATTN + MLP
# Phi-3's fused linears, as PEFT names them (target_modules of a Phi-3 LoRA).
PHI3_FUSED = ("qkv_proj", "o_proj", "gate_up_proj", "down_proj")

# name: (base folder, r, lora_alpha, use_rslora, target modules, stored dtype, REL)
ADAPTERS = {
    "llama_all": ("llama", 8, 16, False, ALL, "F32", 1.2),
    "llama_qv_rslora": ("llama", 4, 8, True, ("q_proj", "v_proj"), "BF16", 0.8),
    "qwen3_all": ("qwen3", 8, 32, False, ALL, "F32", 0.8),
    "qwen3_mlp": ("qwen3", 16, 16, False, MLP, "F16", 0.6),
    "phi3_fused": ("phi3", 8, 24, False, PHI3_FUSED, "F32", 1.1),
}


def scale_of(r, alpha, rslora):
    """PEFT's LoRA scaling: lora_alpha / r, or lora_alpha / sqrt(r) with use_rslora."""
    return alpha / math.sqrt(r) if rslora else alpha / r


def module_shapes(cfg):
    """(out_features, in_features, base weight std) of each LoRA-able linear of a dense decoder
    layer, Phi-3's fused qkv_proj (q | k | v rows) and gate_up_proj (gate | up rows) included."""
    E, F = cfg["hidden_size"], cfg["intermediate_size"]
    H, KV = cfg["num_attention_heads"], cfg["num_key_value_heads"]
    D = cfg.get("head_dim") or E // H
    return {
        "q_proj": (H * D, E, tm.STD_PROJ), "k_proj": (KV * D, E, tm.STD_PROJ),
        "v_proj": (KV * D, E, tm.STD_PROJ), "o_proj": (E, H * D, tm.STD_OUT),
        "gate_proj": (F, E, tm.STD_PROJ), "up_proj": (F, E, tm.STD_PROJ),
        "down_proj": (E, F, tm.STD_OUT),
        "qkv_proj": ((H + 2 * KV) * D, E, tm.STD_PROJ), "gate_up_proj": (2 * F, E, tm.STD_PROJ),
    }


def tensor_name(layer, module, ab):
    block = "self_attn" if module in ATTN + ("qkv_proj",) else "mlp"
    return f"base_model.model.model.layers.{layer}.{block}.{module}.lora_{ab}.weight"


def adapter_tensors(name, cfg, r, scale, targets, rel):
    shapes = module_shapes(cfg)
    seed_model = f"lora/{name}"
    t = []
    for i in range(cfg["num_hidden_layers"]):
        for m in targets:
            out_f, in_f, base_std = shapes[m]
            std_a = 1.0 / math.sqrt(in_f)
            std_b = rel * base_std * math.sqrt(in_f) / (scale * math.sqrt(r))
            n = tensor_name(i, m, "A")
            t.append((n, tm.normalish(seed_model, n, (r, in_f), std_a)))
            n = tensor_name(i, m, "B")
            t.append((n, tm.normalish(seed_model, n, (out_f, r), std_b)))
    return t


def adapter_config(base, r, alpha, rslora, targets):
    # The keys of PEFT's LoraConfig as save_pretrained writes them (the ones every PEFT since
    # 0.10 knows; newer versions add more, all defaulted).
    return {
        "alpha_pattern": {},
        "auto_mapping": None,
        "base_model_name_or_path": base,
        "bias": "none",
        "fan_in_fan_out": False,
        "inference_mode": True,
        "init_lora_weights": True,
        "layer_replication": None,
        "layers_pattern": None,
        "layers_to_transform": None,
        "loftq_config": {},
        "lora_alpha": alpha,
        "lora_dropout": 0.0,
        "megatron_config": None,
        "megatron_core": "megatron.core",
        "modules_to_save": None,
        "peft_type": "LORA",
        "r": r,
        "rank_pattern": {},
        "revision": None,
        "target_modules": list(targets),
        "task_type": "CAUSAL_LM",
        "use_dora": False,
        "use_rslora": rslora,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by make_tiny_models.py --out")
    ap.add_argument("--out", required=True, help="output folder (one subfolder per adapter)")
    ap.add_argument("--adapters", default=",".join(ADAPTERS), help="comma-separated subset to write")
    args = ap.parse_args()
    for name in args.adapters.split(","):
        if name not in ADAPTERS:
            sys.exit(f"unknown adapter {name!r} (known: {', '.join(ADAPTERS)})")
        base, r, alpha, rslora, targets, dtype, rel = ADAPTERS[name]
        cfg_path = os.path.join(args.models, base, "config.json")
        if not os.path.isfile(cfg_path):
            sys.exit(f"{cfg_path} not found: run tools/make_tiny_models.py --out {args.models} first")
        with open(cfg_path, encoding="utf-8") as f:
            cfg = json.load(f)
        out = os.path.join(args.out, name)
        os.makedirs(out, exist_ok=True)
        tm.write_json(os.path.join(out, "adapter_config.json"),
                      adapter_config(base, r, alpha, rslora, targets))
        path = os.path.join(out, "adapter_model.safetensors")
        tm.write_safetensors(path, adapter_tensors(name, cfg, r, scale_of(r, alpha, rslora),
                                                   targets, rel), dtype)
        print(f"{name}/adapter_model.safetensors sha256={tm.sha256_file(path)}")


if __name__ == "__main__":
    main()
