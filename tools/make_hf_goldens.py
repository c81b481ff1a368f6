#!/usr/bin/env python3
"""Hugging Face transformers goldens for the tiny models of make_tiny_models.py.

Owns tests/golden/hf/<model>/: per prompt, the fp32 logits at every prompt
position and 32 greedy continuation ids (with the top-2 ids and logits of each
step, for the near-tie rule of DESIGN.md section 4). Runs transformers on CPU in
fp32 with eager attention; needs torch + transformers (never present in CI: the
C++ tests read only the committed files).

  python3 tools/make_tiny_models.py --out /tmp/tiny
  python3 tools/make_hf_goldens.py --models /tmp/tiny

The format is described in tests/golden/hf/README.md.

gpt_oss (MXFP4 experts) runs through transformers' own dequantizer (Mxfp4Config(dequantize=True):
integrations/mxfp4.py convert_moe_packed_tensors, to float32); before any golden is written the
tool checks that convert_moe_packed_tensors of gpt_oss's blocks / scales is bit for bit
gpt_oss_plain's expert tensors and that every other tensor is byte-identical.

An MXFP4 product multiplies its input rounded to Q8_0 (GGML's MXFP4 x Q8_0 dot, which llama.cpp
and the engine's kernel contract use: blocks of 32, d = amax / 127 stored as fp16, q =
rint(x * 127 / amax)). gpt_oss's goldens are transformers with that rounding applied to the
experts' two inputs (q8_0_experts below: the eager experts loop with the rounding added; with
the rounding off it gives transformers' own logits bit for bit, checked each run), so the MXFP4
checkpoint is held to the same 1e-4 as every float one; gpt_oss_plain's are plain transformers.

qwen3_fp8 (an FP8 block-quantized checkpoint) runs through transformers' FineGrainedFP8
dequantizer (FineGrainedFP8Config(dequantize=True), to float32; needs `accelerate`); the tool
checks that every dequantized projection is a bfloat16 value (its scales are powers of two), so
the engine's BF16 dequantization is held to the goldens exactly.
"""
import argparse
import hashlib
import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

N_GREEDY = 32

# Text prompts for the models with the Qwen3 tokenizer: English, Chinese + emoji
# (multi-byte and split-byte tokens), code (indentation, punctuation).
QWEN_PROMPTS = [
    "Paris is the capital of France, and",
    "我喜欢在春天散步 🌸😊",
    "def add(a, b):\n    return a + b",
]

# The llama model has no tokenizer: id prompts. bos = 1 first, like a Llama tokenizer
# would add. The last one runs past original_max_position_embeddings (64) so the
# llama3-scaled rotary frequencies are checked at positions beyond the original window.
LLAMA_PROMPTS = [
    [1, 15, 300, 1999, 7, 42, 512],
    [1, 2047, 3, 880, 881, 882, 64, 1024, 77, 5, 1500, 9],
    [1] + [(i * 37 + 11) % 2048 for i in range(47)],
]

MODELS = ["qwen3", "qwen3_moe", "llama", "qwen2", "mistral", "gemma3", "gemma2", "phi3",
          "mixtral", "mistral3", "qwen2_5_vl", "qwen3_vl", "smollm3",
          "granite", "olmo2", "phi3_5", "qwen2_yarn", "phi4_mini", "glm4", "cohere", "cohere2", "exaone4",
          "gpt_oss", "gpt_oss_plain", "qwen2_moe", "olmoe", "granitemoe", "glm4_moe", "minimax_m2", "qwen3_fp8",
          "ernie4_5", "ernie4_5_moe", "seed_oss", "arcee", "gemma",
          "hunyuan_dense", "olmo3", "stablelm", "phi", "starcoder2",
          "deepseek_v2", "deepseek_v3", "glm4_moe_lite", "ministral3"]
# longrope models: one id prompt running LONG_OVER positions past the original length.
LONG_OVER = 88
LONG_KEEP = 8


def LONG_PROMPT(orig):
    return [1] + [(i * 53 + 7) % 2048 for i in range(orig + LONG_OVER - 1)]


# Multimodal checkpoints, run through their own class (text-only prompts).
MULTIMODAL = ("mistral3", "qwen2_5_vl", "qwen3_vl")


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def weight_files(model_dir):
    return sorted(f for f in os.listdir(model_dir) if f.endswith(".safetensors"))


def check_gpt_oss_forms(models):
    """gpt_oss (MXFP4 experts) and gpt_oss_plain hold the same weights by transformers' reading:
    its dequantizer applied to the blocks / scales gives the plain expert tensors bit for bit
    (signed zeros included), and all other tensors are the same bytes."""
    from safetensors import safe_open
    from transformers.integrations.mxfp4 import convert_moe_packed_tensors

    def load(name):
        with safe_open(os.path.join(models, name, "model.safetensors"), "pt") as f:
            return {k: f.get_tensor(k) for k in f.keys()}
    q, plain = load("gpt_oss"), load("gpt_oss_plain")
    n = 0
    for k, v in plain.items():
        if k.endswith("_proj") and ".mlp.experts." in k:
            got = convert_moe_packed_tensors(q[k + "_blocks"], q[k + "_scales"], dtype=torch.float32)
            want = v.float()
            assert got.shape == want.shape, (k, got.shape, want.shape)
            assert torch.equal(got.view(torch.int32), want.view(torch.int32)), k
            n += 1
        else:
            assert q[k].dtype == v.dtype and torch.equal(q[k].view(torch.uint8), v.view(torch.uint8)), k
    extra = set(q) - set(plain) - {k + s for k in plain for s in ("_blocks", "_scales")}
    assert not extra, extra
    print(f"gpt_oss: convert_moe_packed_tensors of {n} MXFP4 expert tensors == gpt_oss_plain's, "
          f"{len(plain) - n} other tensors identical")


@torch.no_grad()
def run_prompt(model, ids):
    x = torch.tensor([ids], dtype=torch.long)
    prompt_logits = model(x, use_cache=False).logits[0].float().numpy()
    seq = list(ids)
    greedy, top2_ids, top2_logits = [], [], []
    # Full recompute each step (no KV cache): the plainest possible reference.
    for _ in range(N_GREEDY):
        last = model(torch.tensor([seq], dtype=torch.long), use_cache=False).logits[0, -1].float()
        v, i = torch.topk(last, 2)
        nxt = int(torch.argmax(last))  # EOS is not special here: keep going
        greedy.append(nxt)
        top2_ids.append([int(i[0]), int(i[1])])
        top2_logits.append([float(v[0]), float(v[1])])
        seq.append(nxt)
    return prompt_logits, greedy, top2_ids, top2_logits


def q8_0_round(x):
    """x rounded as GGML's x86 Q8_0 activation quantizer rounds it (last dim a multiple of 32)."""
    xb = x.reshape(*x.shape[:-1], -1, 32)
    amax = xb.abs().amax(dim=-1, keepdim=True)
    inv = torch.where(amax != 0, 127.0 / amax, torch.zeros_like(amax))
    q = torch.round(xb * inv)  # half to even, as rint
    d = (amax / 127.0).half().float()
    return (q * d).reshape(x.shape)


def q8_0_experts(model, rounding=True):
    """Each gpt-oss experts block as transformers' eager loop, its two products' inputs rounded
    to Q8_0 (rounding=False: the loop unchanged, for the self-check)."""
    r = q8_0_round if rounding else (lambda x: x)

    def forward(self, hidden_states, router_indices=None, routing_weights=None):
        out = torch.zeros_like(hidden_states)
        mask = torch.nn.functional.one_hot(router_indices, num_classes=self.num_experts)
        mask = mask.permute(2, 1, 0)
        for e in range(self.num_experts):
            top_k_pos, token_idx = torch.where(mask[e])
            if token_idx.numel() == 0:
                continue
            gate_up = r(hidden_states[token_idx]) @ self.gate_up_proj[e] + self.gate_up_proj_bias[e]
            h = self._apply_gate(gate_up)
            y = r(h) @ self.down_proj[e] + self.down_proj_bias[e]
            out.index_add_(0, token_idx, y * routing_weights[token_idx, top_k_pos, None])
        return out

    import types
    for layer in model.model.layers:
        layer.mlp.experts.forward = types.MethodType(forward, layer.mlp.experts)


def make(model_name, model_dir, out_dir, command):
    os.makedirs(out_dir, exist_ok=True)
    for f in os.listdir(out_dir):
        if f.endswith(".f32") or f == "index.json":
            os.remove(os.path.join(out_dir, f))
    auto = (transformers.AutoModelForImageTextToText if model_name in MULTIMODAL
            else AutoModelForCausalLM)
    extra, ref_extra = {}, {}
    if model_name.startswith("gpt_oss"):  # the experts as a plain loop over experts
        extra["experts_implementation"] = ref_extra["experts_implementation"] = "eager"
    if model_name == "gpt_oss":  # transformers' MXFP4 dequantizer, to float32
        extra["quantization_config"] = transformers.Mxfp4Config(dequantize=True)
        ref_extra["quantization"] = "mxfp4, Mxfp4Config(dequantize=True)"
    if model_name == "qwen3_fp8":  # transformers' block-FP8 dequantizer (needs accelerate)
        block = tuple(json.load(open(os.path.join(model_dir, "config.json")))
                      ["quantization_config"]["weight_block_size"])
        extra["quantization_config"] = transformers.FineGrainedFP8Config(
            dequantize=True, weight_block_size=block)
        ref_extra["quantization"] = "fp8, FineGrainedFP8Config(dequantize=True)"
    model = auto.from_pretrained(model_dir, dtype=torch.float32, attn_implementation="eager",
                                 **extra)
    model.eval()
    if model_name == "qwen3_fp8":
        # Every dequantized weight (code * a power-of-two scale) is a bfloat16 value, so the
        # engine's BF16 dequantization is these float32 weights exactly.
        n = 0
        for name, w in model.named_parameters():
            if name.endswith("_proj.weight"):
                assert torch.equal(w, w.bfloat16().float()), name
                n += 1
        assert n == 7 * model.config.num_hidden_layers, n
        print(f"qwen3_fp8: {n} dequantized projections, each exact in bfloat16")
    if model_name == "gpt_oss":
        probe = torch.tensor([LLAMA_PROMPTS[2]], dtype=torch.long)
        with torch.no_grad():
            own = model(probe, use_cache=False).logits
            q8_0_experts(model, rounding=False)
            assert torch.equal(model(probe, use_cache=False).logits, own), "experts loop differs"
        q8_0_experts(model)
        ref_extra["expert_inputs"] = "rounded to Q8_0 (GGML's MXFP4 x Q8_0 dot)"
    cfg = model.config
    V = cfg.get_text_config().vocab_size
    if model_name not in ("qwen3", "qwen3_moe", "qwen2", "qwen3_fp8"):  # no tokenizer: id prompts
        prompts = [{"ids": p} for p in LLAMA_PROMPTS]
    else:
        tok = AutoTokenizer.from_pretrained(model_dir)
        prompts = [{"text": t, "ids": tok(t)["input_ids"]} for t in QWEN_PROMPTS]
    entries = []
    for k, p in enumerate(prompts):
        logits, greedy, t2i, t2l = run_prompt(model, p["ids"])
        assert logits.shape == (len(p["ids"]), V), logits.shape
        fn = f"prompt{k}.logits.f32"
        logits.astype("<f4").tofile(os.path.join(out_dir, fn))
        gaps = [a - b for a, b in t2l]
        e = {}
        if "text" in p:
            e["text"] = p["text"]
        e.update({
            "prompt_ids": p["ids"],
            "logits_file": fn,
            "logits_shape": [len(p["ids"]), V],
            "greedy_ids": greedy,
            "greedy_top2_ids": t2i,
            "greedy_top2_logits": t2l,
            "min_greedy_top2_gap": min(gaps),
        })
        entries.append(e)
        print(f"{model_name} prompt{k}: {len(p['ids'])} ids, greedy {greedy[:8]}..., "
              f"distinct {len(set(greedy))}, min gap {min(gaps):.4f}")
        if len(set(greedy)) < 2:
            sys.exit(f"{model_name} prompt{k}: greedy output is one repeated token; fix the weights")
    long_entries = []
    rs = getattr(cfg, "rope_parameters", None) or getattr(cfg, "rope_scaling", None) or {}
    if rs.get("rope_type", rs.get("type")) == "longrope" and rs.get("long_factor"):
        # Past the original length transformers rotates every position with the long factors
        # (its rotary embedding picks them by the pass's length), which is what the engine
        # does for any sequence once --max-model-len is past that length (vLLM's rule). Only
        # the last LONG_KEEP positions' logits are kept (the file stays small).
        orig = rs["original_max_position_embeddings"]
        ids = LONG_PROMPT(orig)
        logits, greedy, t2i, t2l = run_prompt(model, ids)
        fn = "long0.logits.f32"
        logits[-LONG_KEEP:].astype("<f4").tofile(os.path.join(out_dir, fn))
        gaps = [a - b for a, b in t2l]
        long_entries.append({
            "max_model_len": cfg.max_position_embeddings,
            "prompt_ids": ids,
            "logits_file": fn,
            "logits_from": len(ids) - LONG_KEEP,
            "logits_shape": [LONG_KEEP, V],
            "greedy_ids": greedy,
            "greedy_top2_ids": t2i,
            "greedy_top2_logits": t2l,
            "min_greedy_top2_gap": min(gaps),
        })
        print(f"{model_name} long0: {len(ids)} ids past the original {orig}, greedy {greedy[:8]}..., "
              f"min gap {min(gaps):.4f}")
    index = {
        "model": model_name,
        "architecture": cfg.architectures[0],
        "vocab_size": V,
        "n_greedy": N_GREEDY,
        "weights_sha256": {f: sha256_file(os.path.join(model_dir, f)) for f in weight_files(model_dir)},
        # Sizes too: a C++ test without a sha256 implementation can still catch most mismatches.
        "weights_bytes": {f: os.path.getsize(os.path.join(model_dir, f)) for f in weight_files(model_dir)},
        "config_sha256": sha256_file(os.path.join(model_dir, "config.json")),
        "reference": {"torch": torch.__version__, "transformers": transformers.__version__,
                      "dtype": "float32", "attn_implementation": "eager", "device": "cpu",
                      **ref_extra},
        "command": command,
        "prompts": entries,
    }
    if long_entries:
        index["long_prompts"] = long_entries
    with open(os.path.join(out_dir, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1, ensure_ascii=False)
        f.write("\n")


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", required=True, help="folder written by make_tiny_models.py --out")
    ap.add_argument("--out", default=os.path.join(repo, "tests", "golden", "hf"))
    ap.add_argument("--only", default=",".join(MODELS), help="comma-separated subset")
    args = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(2)
    command = ("python3 tools/make_tiny_models.py --out DIR && "
               "python3 tools/make_hf_goldens.py --models DIR")
    only = args.only.split(",")
    if "gpt_oss" in only or "gpt_oss_plain" in only:
        check_gpt_oss_forms(args.models)
    for m in only:
        make(m, os.path.join(args.models, m), os.path.join(args.out, m), command)


if __name__ == "__main__":
    main()
