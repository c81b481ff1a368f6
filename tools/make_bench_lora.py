#!/usr/bin/env python3
"""A random PEFT LoRA adapter with a real model's shapes, for timing adapters
(`vllm bench throughput --enable-lora --lora-path DIR`); its values mean nothing.

  python3 tools/make_bench_lora.py --preset smollm2-135m --out /tmp/smollm2-lora
  build/vllm bench throughput --model ~/.cache/vllm-cpp/SmolLM2-135M-Instruct.Q4_1.gguf \\
      --input-len 128 --output-len 128 --num-prompts 32 --max-num-seqs 32 \\
      --enable-lora --max-loras 2 --lora-path /tmp/smollm2-lora

Rank --rank (default 16, vLLM's default --max-lora-rank) on q/k/v/o/gate/up/down of every
layer, F32 (PEFT's own dtype for an adapter trained in fp32), lora_alpha 2 * rank.
"""
import argparse
import json
import os
import struct

import numpy as np

# hidden, heads, kv heads, head_dim, intermediate, layers
PRESETS = {
    "smollm2-135m": (576, 9, 3, 64, 1536, 30),
    "qwen3-0.6b": (1024, 16, 8, 128, 3072, 28),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), required=True)
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    E, H, KV, D, F, L = PRESETS[a.preset]
    shapes = {"self_attn.q_proj": (E, H * D), "self_attn.k_proj": (E, KV * D),
              "self_attn.v_proj": (E, KV * D), "self_attn.o_proj": (H * D, E),
              "mlp.gate_proj": (E, F), "mlp.up_proj": (E, F), "mlp.down_proj": (F, E)}
    rng = np.random.default_rng(0)
    tensors = {}
    for i in range(L):
        for m, (fin, fout) in shapes.items():
            p = f"base_model.model.model.layers.{i}.{m}"
            tensors[p + ".lora_A.weight"] = (
                rng.standard_normal((a.rank, fin)) / np.sqrt(fin)).astype("<f4")
            tensors[p + ".lora_B.weight"] = (
                rng.standard_normal((fout, a.rank)) * 1e-3).astype("<f4")
    header, blobs, off = {}, [], 0
    for k in sorted(tensors):
        b = tensors[k].tobytes()
        header[k] = {"dtype": "F32", "shape": list(tensors[k].shape),
                     "data_offsets": [off, off + len(b)]}
        off += len(b)
        blobs.append(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "adapter_model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    with open(os.path.join(a.out, "adapter_config.json"), "w") as f:
        json.dump({"peft_type": "LORA", "task_type": "CAUSAL_LM", "r": a.rank,
                   "lora_alpha": 2 * a.rank, "target_modules": [m.split(".")[1] for m in shapes],
                   "bias": "none", "use_rslora": False, "use_dora": False}, f, indent=2)
    print(f"{a.out}: rank {a.rank}, {len(tensors)} tensors, {off / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
